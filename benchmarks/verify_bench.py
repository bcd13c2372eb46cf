"""Verify throughput on a paper-sized release: ~8,400 synthetic rows over the paper's 12 splits.

Prints rows/s and MB/s of `verify` (every row, split and file hash, card, schemas, TFAS), plus the
time to build the rows and write the release. Synthetic rows are marked as such in their data.

    .venv/bin/python benchmarks/verify_bench.py [--tasks 700] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests.support, run from anywhere

from builder.release import write_release  # noqa: E402
from swe_taskflow.verify import verify_release  # noqa: E402
from tests.support.synthetic import synthetic_splits, uniform_target  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=700, help="tasks per split (12 splits)")
    ap.add_argument("--repeat", type=int, default=3, help="verify runs (best and median reported)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        splits = synthetic_splits(args.tasks, seed=0)
        t_rows = time.perf_counter() - t0
        uniform_target(tmp / "target.json")
        t0 = time.perf_counter()
        write_release(tmp / "rel", name="bench", version="v0", splits=splits, target_path=tmp / "target.json",
                      provenance={"source": {"benchmark": "synthetic"}})
        t_write = time.perf_counter() - t0
        n_rows = sum(len(v) for v in splits.values())
        size = sum(p.stat().st_size for p in (tmp / "rel").rglob("*") if p.is_file())
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            report = verify_release(tmp / "rel")
            times.append(time.perf_counter() - t0)
            if not report.ok:
                raise SystemExit(f"verify failed: {report.errors[0]}")
        times.sort()
        best, median = times[0], times[len(times) // 2]
        print(f"release: {n_rows} rows over {len(splits)} splits, {size / 1e6:.2f} MB on disk, "
              f"{report.questions} questions")
        print(f"build rows: {t_rows:.2f} s ({n_rows / t_rows:,.0f} rows/s); write release: {t_write:.2f} s")
        print(f"verify: best {best:.2f} s, median {median:.2f} s over {args.repeat} runs")
        for label, t in (("best", best), ("median", median)):
            print(f"verify throughput ({label}): {n_rows / t:,.0f} rows/s; {report.bytes_hashed / 1e6 / t:.2f} MB/s "
                  f"of files ({report.bytes_hashed / 1e6:.2f} MB), {report.json_bytes / 1e6 / t:.2f} MB/s of "
                  f"canonical row JSON ({report.json_bytes / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
