"""Proof sandbox figures: per-proof overhead (docker, bubblewrap) and throughput with 1, 2, 4 parallel runs.

    .venv/bin/python benchmarks/proofs_bench.py [--n 10] [--pool 16] [--sandbox docker bwrap]

Overhead = wall time of ``run_proof`` for a trivial script (tree hash before/after + sandbox start,
run, teardown), median over ``--n`` runs. Throughput = ``validate_pool`` over ``--pool`` questions
(no cache) with ``jobs`` = 1, 2, 4. The repository is a small git repo made on the fly.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def make_repo(root: Path) -> Path:
    repo = root / "repos" / "bench__repo"
    repo.mkdir(parents=True)
    for i in range(50):
        (repo / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=repo, check=True, env=env)
    return repo


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10, help="sequential runs for the overhead figure")
    ap.add_argument("--pool", type=int, default=16, help="questions in the throughput pool")
    ap.add_argument("--sandbox", nargs="+", default=["docker", "bwrap"])
    args = ap.parse_args()

    from builder.proofs import ProofConfig, build_test_image, run_proof, validate_pool_file
    from builder.proofs.gitsafe import tree_hash
    from swe_taskflow.jsonl import write_jsonl
    from swe_taskflow.schema import QAItem

    cfg = ProofConfig(mem_mb=256, pids=64, timeout_s=30)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo = make_repo(root)
        t = time.perf_counter()
        for _ in range(args.n):
            tree_hash(repo)
        print(f"tree hash (50-file repo): {(time.perf_counter() - t) / args.n * 1000:.1f} ms")
        for sandbox in args.sandbox:
            if sandbox == "docker":
                try:
                    info = build_test_image()
                except Exception as exc:  # noqa: BLE001
                    print(f"docker: skipped ({exc})")
                    continue
                print(f"docker: test image {info['tag']} ({'built' if info['built'] else 'up to date'} "
                      f"in {info['seconds']:.1f}s)")
            times, inside = [], []
            for i in range(args.n):
                t = time.perf_counter()
                rep = run_proof(repo, f"grep -n 'return {i}$' m{i}.py\n", sandbox=sandbox, config=cfg,
                                timeout_s=30)
                times.append(time.perf_counter() - t)
                inside.append(rep.duration_s)
                if rep.status != "passed":
                    print(f"{sandbox}: unexpected {rep.status}: {rep.reason}", file=sys.stderr)
                    return 1
            print(f"{sandbox}: per-proof overhead median {statistics.median(times) * 1000:.0f} ms "
                  f"(min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f}; n={args.n}; "
                  f"in-sandbox time median {statistics.median(inside) * 1000:.0f} ms)")
            pool = root / f"pool-{sandbox}.jsonl"
            write_jsonl(pool, [QAItem(question_id=f"q{i}", instance_id="bench__repo-1", question="q",
                                      reference_answer="a", proof_script=f"grep -n 'return {i % 50}$' m{i % 50}.py\n",
                                      generator={"provenance": "hand-written"}).to_dict()
                               for i in range(args.pool)])
            for jobs in (1, 2, 4):
                t = time.perf_counter()
                s = validate_pool_file(pool, root / "repos", root / f"out-{sandbox}-{jobs}.jsonl", sandbox=sandbox,
                                  jobs=jobs, cache_dir=None, config=cfg, progress=False)
                dt = time.perf_counter() - t
                print(f"{sandbox}: jobs={jobs}: {args.pool} proofs in {dt:.2f}s = {args.pool / dt:.1f} proofs/s "
                      f"(accepted {s['accepted']}/{s['total']})")
    print(f"machine: {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
