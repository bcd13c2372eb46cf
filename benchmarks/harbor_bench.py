"""Harbor figures: per-trial overhead on the example's own 4-step task, command latency, e2e wall time.

    .venv/bin/python benchmarks/harbor_bench.py [--trials 2] [--commands 20] [--no-e2e]

- per-trial overhead: wall time of ``harbor run`` with Harbor's ``nop`` agent (no agent work) on the
  exported four-step task (3 checkpoints incl. the clean run, 1 answer step), through
  ``swe_taskflow_harbor.environment:ComposeEnvironment``; median of ``--trials`` sequential jobs. The
  same with the oracle agent (applies the gold patch parts) for comparison;
- command latency: one ``true`` in the running task container through ``docker exec`` (what the
  environment uses for commands) and through ``docker-compose exec -T`` (what Harbor would use);
- e2e: wall time of ``pytest tests/e2e/test_harbor_e2e.py`` (export, two Harbor jobs, import, verify, push).
Needs Docker, docker-compose and ``make harbor-venv``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HARBOR_TELEMETRY": "0"}


def harbor_job(dataset: Path, jobs: Path, name: str, agent: str) -> float:
    t0 = time.monotonic()
    proc = subprocess.run([str(ROOT / ".harbor-venv/bin/harbor"), "run", "-p", str(dataset), "-a", agent, "-e",
                           "swe_taskflow_harbor.environment:ComposeEnvironment", "-o", str(jobs), "--job-name", name,
                           "-n", "1", "-y"], capture_output=True, text=True, env=ENV, cwd=jobs.parent)
    dt = time.monotonic() - t0
    if proc.returncode != 0:
        raise SystemExit(f"harbor run failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return dt


def command_latency(image: str, n: int, tmp: Path) -> dict[str, float]:
    compose = tmp / "compose.yaml"
    compose.write_text(f"services:\n  main:\n    image: {image}\n    command: [sleep, infinity]\n"
                       f"    network_mode: none\n    labels:\n      swe-taskflow.owner: \"{os.getpid()}@bench\"\n")
    base = ["docker-compose", "-p", f"stfbench{os.getpid()}", "-f", str(compose)]
    subprocess.run([*base, "up", "-d"], check=True, capture_output=True)
    try:
        cid = subprocess.run([*base, "ps", "-q", "main"], check=True, capture_output=True, text=True).stdout.strip()
        out = {}
        for label, argv in (("docker exec", ["docker", "exec", cid, "true"]),
                            ("docker-compose exec -T", [*base, "exec", "-T", "main", "true"])):
            times = []
            for _ in range(n):
                t0 = time.monotonic()
                subprocess.run(argv, check=True, capture_output=True)
                times.append(time.monotonic() - t0)
            out[label] = statistics.median(times)
        return out
    finally:
        subprocess.run([*base, "down"], capture_output=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=2)
    ap.add_argument("--commands", type=int, default=20)
    ap.add_argument("--no-e2e", action="store_true")
    args = ap.parse_args()
    from builder.bundled.image import build_task_image
    from builder.pipeline.repos import example_task
    from builder.evaluation.export import export_harbor
    from tests.support.example_release import CONDITION, build_example_release
    bundled = example_task()
    build_task_image(bundled.task, bundled.files)
    with tempfile.TemporaryDirectory(prefix="harbor-bench-") as d:
        tmp = Path(d)
        release = build_example_release(tmp / "release")
        export_harbor(release, CONDITION, tmp / "dataset")
        (tmp / "jobs").mkdir()
        figures: dict = {"task": "swe-taskflow__ticketdesk-1, 4 steps (3 issue + 1 answer)"}
        for agent in ("nop", "oracle"):
            times = [harbor_job(tmp / "dataset", tmp / "jobs", f"{agent}{k}", agent) for k in range(args.trials)]
            figures[f"trial_s[{agent}]"] = {"median": round(statistics.median(times), 1),
                                           "all": [round(t, 1) for t in times]}
        lat = command_latency(bundled.task.image_name, args.commands, tmp)
        figures["command_latency_ms"] = {k: round(v * 1000, 1) for k, v in lat.items()}
    if not args.no_e2e:
        t0 = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "tests/e2e/test_harbor_e2e.py"], cwd=ROOT,
                              capture_output=True, text=True)
        figures["e2e_test_s"] = round(time.monotonic() - t0, 1)
        figures["e2e_result"] = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.returncode
    print(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
