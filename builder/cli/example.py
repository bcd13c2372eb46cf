"""CLI: `swe-taskflow example build-image | check` for the example's own task (see docs/example-task.md)."""

from __future__ import annotations

import json

from . import argtypes
from .groups import command_group


def register(sub) -> None:
    ps = command_group(sub, "example", dest="example_command",
                       help="the example release's own task: build its image, check its tests")
    common = {"--recipe": dict(default=None, help="recipe naming the bundled repository "
                                                  "(default: builder/releases/example.toml)"),
              "--instance-id": dict(default=None, help="task id (default: swe-taskflow__ticketdesk-1)")}

    b = ps.add_parser("build-image", help="build the task's image locally (no registry), named from its content")
    for flag, kw in common.items():
        b.add_argument(flag, **kw)
    b.add_argument("--force", action="store_true", help="rebuild even when the image is up to date")
    b.add_argument("--json", action="store_true",
                   help="print {tag, image_id, content_sha256, built, seconds} as one JSON line instead")
    b.set_defaults(func=_build_image)

    c = ps.add_parser("check", help="run the task's tests before and after its gold patch; exit 0 when "
                                    "FAIL_TO_PASS fail then pass and PASS_TO_PASS pass in both")
    for flag, kw in common.items():
        c.add_argument(flag, **kw)
    c.add_argument("--runner", default="docker", choices=("docker", "host"),
                   help="docker: in the task's image, network none (default); host: a temporary checkout")
    c.add_argument("--timeout", type=argtypes.seconds, default=300.0, help="wall-clock seconds per run")
    c.add_argument("--json", action="store_true", help="print both runs in full as JSON")
    c.set_defaults(func=_check)


def _task(args):
    from ..bundled import EXAMPLE_INSTANCE_ID, EXAMPLE_RECIPE
    from ..pipeline.repos import example_task

    return example_task(args.recipe or EXAMPLE_RECIPE, args.instance_id or EXAMPLE_INSTANCE_ID)


def _build_image(args) -> int:
    from ..bundled.image import build_task_image
    from ..proofs.image import image_summary

    bundled = _task(args)
    info = build_task_image(bundled.task, bundled.files, force=args.force)
    print(json.dumps(info, sort_keys=True) if args.json else image_summary(info))
    return 0


def _check(args) -> int:
    from ..bundled.check import check_task

    bundled = _task(args)
    if args.runner == "docker":
        from ..bundled.image import build_task_image

        build_task_image(bundled.task, bundled.files)
    report = check_task(bundled, runner=args.runner, timeout_s=args.timeout)
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        for run in (report["before"], report["after"]):
            g = run["grade"]
            print(f"{'after ' if run['gold_patch'] else 'before'} gold patch: {len(run['results'])} tests, "
                  f"FAIL_TO_PASS passed {len(g['fail_to_pass']['passed'])}/{len(bundled.task.fail_to_pass)}, "
                  f"PASS_TO_PASS passed {len(g['pass_to_pass']['passed'])}/{len(bundled.task.pass_to_pass)} "
                  f"({run['seconds']}s)")
        print(("ok: " if report["ok"] else "NOT ok: ") + f"{report['instance_id']} in {report['image']}")
        for problem in report["problems"]:
            print(f"  - {problem}")
    return 0 if report["ok"] else 1
