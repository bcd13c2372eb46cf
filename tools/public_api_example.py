"""Build, verify, export and re-prove the shipped example through the public modules only (issue 33).

    python -m tools.public_api_example [--out DIR] [--sandbox auto|docker|bwrap] [--condition NAME]

Nothing here reaches into a deep module: ``swe_taskflow_builder.api`` (``builder/api.py``) builds, exports and
re-proves, ``swe_taskflow`` (the auditors' API) verifies. Prints each step's wall time and exits 1 when the release does not verify or
re-prove. A rerun reuses OUT's stage cache (its release is rebuilt from cached stages).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from swe_taskflow_builder import api    # the builder/ folder under its installed name
from swe_taskflow import verify_release


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=None, help="build folder (default: a temporary folder, removed after)")
    p.add_argument("--sandbox", default="auto", help="the auditor's sandbox for the re-proof (default auto)")
    p.add_argument("--condition", default="tfas_optimized", help="condition to export (default tfas_optimized)")
    args = p.parse_args(argv)
    tmp = None if args.out else tempfile.mkdtemp(prefix="public-api-example-")
    out = Path(args.out or tmp)
    times: dict[str, float] = {}
    try:
        t = time.monotonic()
        built = api.build("example", out / "build", quiet=True, overwrite=True)
        times["build"] = time.monotonic() - t
        print(f"build: {built.name} {built.version}, {built.ran} of {len(built.stages)} stages ran -> {built.release}")

        t = time.monotonic()
        report = verify_release(str(built.release))
        times["verify"] = time.monotonic() - t
        print(f"verify: {'ok' if report.ok else 'FAILED'}, {report.rows} rows")

        t = time.monotonic()
        export_out = out / f"harbor-{args.condition}"
        if export_out.exists():
            shutil.rmtree(export_out)
        exported = api.export_harbor(built.release, args.condition, export_out)
        times["export"] = time.monotonic() - t
        print(f"export: {len(exported.tasks)} tasks, {exported.steps} steps as {exported.dataset_name} -> "
              f"{exported.out}")

        t = time.monotonic()
        reproved = api.reprove(built.release, repos=built.repos, tasks=built.source, sandbox=args.sandbox)
        times["reprove"] = time.monotonic() - t
        print(f"reprove: {'ok' if reproved.ok else 'FAILED'}, {reproved.report.reproved} proofs re-run, "
              f"{reproved.report.rechecked} references re-derived (sandbox {args.sandbox})")
        for e in reproved.errors or report.errors:
            print(f"  {e.kind}: {e}", file=sys.stderr)
        print("seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in times.items())
              + f"; total {sum(times.values()):.1f}")
        return 0 if report.ok and reproved.ok else 1
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
