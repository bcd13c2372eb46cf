"""The harbor sandbox's pool at SWE-Bench Pro scale, simulated: build time of the proofs stage per concurrency.

731 tasks x 3 proof items, each item run before and after its gold patch (2 commands); an environment
takes 20 s to start and 2 s per command; 5% of environment starts fail (drawn per task and attempt,
independent of order) and are retried with backoff (2 s, 4 s, 8 s). Nothing runs in a container:
tests.support.harbor_sim.SimulatedBackend sleeps 1/1000 of each simulated second for real, and every time
printed here is the measured wall time scaled back up by 1000 (so thread and sleep overheads of this
machine are included, magnified 1000 times: the figures are an upper bound for the scheduler itself).
The scheduler is the real one (builder.proofs.harbor_runner.prove_tasks).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/scale_bench.py [--tasks 731] [--concurrency 1 8 32 128]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests.support, run from anywhere

from builder.proofs.config import ProofConfig
from builder.proofs.harbor_runner import HarborItem, HarborTask, Scheduling, prove_tasks
from tests.support.harbor_sim import SimulatedBackend


def work_list(tasks: int, items: int):
    return [(HarborTask(key=f"task-{t:04d}", image=f"pro/task-{t:04d}:latest"),
             [HarborItem(t * items + i, f"#!/bin/sh\necho task {t} item {i}\n", f"patch {t}", f"key-{t}-{i}")
              for i in range(items)]) for t in range(tasks)]


def measure(tasks: int, items: int, concurrency: int, *, start_s: float, command_s: float, failure_rate: float,
            scale: float, seed: int) -> dict:
    backend = SimulatedBackend(start_s=start_s, command_s=command_s, failure_rate=failure_rate, seed=seed,
                               time_scale=scale)
    reports: dict[int, dict] = {}
    t0 = time.monotonic()
    progress = prove_tasks(work_list(tasks, items), backend, ProofConfig(), sandbox="harbor:simulated",
                           image_ids={}, scheduling=Scheduling(concurrency=concurrency, retries=3, backoff_s=2.0),
                           on_done=lambda i, r: reports.__setitem__(i, r.to_dict()),
                           sleep=lambda s: time.sleep(s * scale))
    wall = (time.monotonic() - t0) / scale
    for r in reports.values():   # measured durations are volatile (as strip_volatile does in the stage)
        r["duration_s"] = None
        for run in (r.get("runs") or {}).values():
            if isinstance(run, dict):
                run["duration_s"] = None
    blob = json.dumps([reports[i] for i in sorted(reports)], sort_keys=True).encode()
    statuses: dict[str, int] = {}
    for r in reports.values():
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    return {"concurrency": concurrency, "build_s": wall, "ideal_s": backend.stats["work_s"] / concurrency,
            "items": len(reports), "lost": tasks * items - len(reports), "retries": progress.retries,
            "start_failures": backend.stats["start_failures"], "infra_failures": progress.infra_failures,
            "max_running": backend.stats["max_running"], "statuses": statuses,
            "results_sha256": hashlib.sha256(blob).hexdigest()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", type=int, default=731)
    ap.add_argument("--items", type=int, default=3)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32, 128])
    ap.add_argument("--start-s", type=float, default=20.0)
    ap.add_argument("--command-s", type=float, default=2.0)
    ap.add_argument("--failure-rate", type=float, default=0.05)
    ap.add_argument("--scale", type=float, default=1e-3, help="real seconds slept per simulated second")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print(f"{args.tasks} simulated tasks x {args.items} items (each run before and after its gold patch), "
          f"start {args.start_s:g} s, {args.command_s:g} s per command, {args.failure_rate:.0%} start failures; "
          f"time scaled by {args.scale:g} and reported scaled back up")
    print(f"{'concurrency':>11} {'build (h)':>10} {'ideal (h)':>10} {'ratio':>6} {'items':>6} {'lost':>5} "
          f"{'retries':>8} {'infra':>6} {'max env':>8}  results sha256")
    hashes = set()
    for c in args.concurrency:
        m = measure(args.tasks, args.items, c, start_s=args.start_s, command_s=args.command_s,
                    failure_rate=args.failure_rate, scale=args.scale, seed=args.seed)
        hashes.add(m["results_sha256"])
        print(f"{c:>11} {m['build_s'] / 3600:>10.2f} {m['ideal_s'] / 3600:>10.2f} {m['build_s'] / m['ideal_s']:>6.2f} "
              f"{m['items']:>6} {m['lost']:>5} {m['retries']:>8} {m['infra_failures']:>6} {m['max_running']:>8}  "
              f"{m['results_sha256'][:16]}", flush=True)
    print(f"results identical across all runs: {len(hashes) == 1}")


if __name__ == "__main__":
    main()
