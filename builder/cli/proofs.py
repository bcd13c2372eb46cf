"""CLI: `swe-taskflow proofs run | validate | build-image` (see docs/proofs.md)."""

from __future__ import annotations

import json
import sys

from swe_taskflow.schema import INFRA_ERROR, PASSED

from ..proofs.config import SANDBOXES
from . import argtypes
from .groups import command_group


def register(sub) -> None:
    ps = command_group(sub, "proofs", dest="proofs_command",
                       help="run and validate proof scripts in a sandbox (docker or bubblewrap)")

    r = ps.add_parser("run", help="run one proof script against a repository; exit 0 only when it passed")
    r.add_argument("--repo", required=True, help="repository folder (mounted read-only at /repo)")
    r.add_argument("--script", required=True, help="proof script file (a shebang runs it as is, else /bin/sh)")
    r.add_argument("--image", default=None, help="docker image (default: swe-taskflow/proof-python:local)")
    r.add_argument("--sandbox", default="auto", choices=SANDBOXES)
    r.add_argument("--timeout", type=argtypes.seconds, default=60.0, help="wall-clock seconds before the script is killed")
    r.add_argument("--gold-patch", default=None, help="patch file: run again after applying it to a copy")
    r.add_argument("--json", action="store_true", help="print the full proof report as JSON")
    r.set_defaults(func=_run)

    v = ps.add_parser("validate", help="validate every question of a pool; writes accepted/rejected/error rows")
    v.add_argument("--pool", required=True, help="question pool JSONL (QAItem rows)")
    v.add_argument("--repos", required=True,
                   help="folder of repositories: <instance_id>/ or <owner>__<name>/ per question")
    v.add_argument("--out", required=True, help="validated pool JSONL to write")
    v.add_argument("--tasks", default=None, help="tasks JSONL: gold patch and repo name per instance_id")
    v.add_argument("--image", default=None)
    v.add_argument("--sandbox", default="auto", choices=SANDBOXES)
    v.add_argument("--jobs", type=argtypes.int_range(1, 64), default=2, help="proofs (containers) running at once")
    v.add_argument("--timeout", type=argtypes.seconds, default=60.0,
                   help="wall-clock seconds before a script is killed")
    v.add_argument("--cache", default=None, help="resume cache folder (default: <out>.cache)")
    v.set_defaults(func=_validate)

    b = ps.add_parser("build-image", help="build the local test image (host python3 + busybox + git), no registry")
    b.add_argument("--tag", default=None, help="image tag (default: swe-taskflow/proof-python:local)")
    b.add_argument("--force", action="store_true", help="rebuild even when the image is up to date")
    b.add_argument("--json", action="store_true",
                   help="print {tag, image_id, content_sha256, built, seconds} as one JSON line instead")
    b.set_defaults(func=_build_image)


def _run(args) -> int:
    from ..proofs import run_proof
    from swe_taskflow.jsonl import read_text

    report = run_proof(args.repo, read_text(args.script, "script file"), image=args.image, sandbox=args.sandbox,
                       timeout_s=args.timeout,
                       gold_patch=read_text(args.gold_patch, "gold patch") if args.gold_patch else None)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, sort_keys=True))
    else:
        print(f"{report.status}: {report.reason} (sandbox {report.sandbox}, {report.duration_s:.2f}s, "
              f"repo_unchanged={report.repo_unchanged})")
    if report.status == PASSED:
        return 0
    return 3 if report.status == INFRA_ERROR else 1


def _validate(args) -> int:
    from ..proofs import validate_pool_file

    summary = validate_pool_file(args.pool, args.repos, args.out, image=args.image, sandbox=args.sandbox,
                            jobs=args.jobs, cache_dir=args.cache or f"{args.out}.cache",
                            tasks_path=args.tasks, timeout_s=args.timeout, progress=sys.stderr.isatty())
    print(json.dumps(summary, sort_keys=True))
    return 0


def _build_image(args) -> int:
    from ..proofs import DEFAULT_IMAGE, build_test_image
    from ..proofs.image import image_summary

    info = build_test_image(args.tag or DEFAULT_IMAGE, force=args.force)
    print(json.dumps(info, sort_keys=True) if args.json else image_summary(info))
    return 0
