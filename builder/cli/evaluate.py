"""CLI: `swe-taskflow export harbor` (a release condition as a Harbor dataset) and `swe-taskflow evaluate
import` (a Harbor job folder back into results and the release's trajectories). See docs/evaluate.md."""

from __future__ import annotations

import argparse
import json
import sys


def register(sub) -> None:
    p = sub.add_parser("export", help="export a release to an agent harness (Harbor)")
    esub = p.add_subparsers(dest="export_command", metavar="FORMAT", required=True)
    e = esub.add_parser("harbor", help="write a condition as a Harbor dataset: one multi-step task per row",
                        description="One [[steps]] entry per user turn; a checkpoint verifier per issue turn "
                                    "(the source's tests on the cumulative repository), an answer-copying verifier "
                                    "per answer turn. Hidden references stay in tests/ (uploaded at verification "
                                    "only) and solution/ (the oracle's).")
    e.add_argument("release", metavar="RELEASE", help="release folder")
    e.add_argument("--condition", required=True, help="split (condition) to export")
    e.add_argument("--out", required=True, metavar="DIR", help="new dataset folder (must not exist or be empty)")
    e.add_argument("--tasks", metavar="ID,...", help="export only these instance ids")
    e.add_argument("--run-scripts", metavar="DIR",
                   help="SWE-Bench Pro's run_scripts/ (<instance_id>/run_script.sh and parser.py) for tasks "
                        "without their own test command")
    e.add_argument("--source", metavar="SPEC", help="the source tasks (file, folder or Hub id) when the release's "
                                                    "recorded source is not on this machine")
    e.add_argument("--org", default="swe-taskflow", help="Harbor org of the task names (default swe-taskflow)")
    e.add_argument("--agent-user", default="agent", help="non-root user the agent runs as (default agent)")
    e.add_argument("--agent-timeout", type=float, default=3600.0, metavar="S", help="per step (default 3600)")
    e.add_argument("--verifier-timeout", type=float, default=1800.0, metavar="S", help="per step (default 1800)")
    e.add_argument("--cpus", type=float, help="CPUs per task environment")
    e.add_argument("--memory-mb", type=int, help="memory per task environment")
    e.add_argument("--no-solution", action="store_true", help="leave out the oracle's solutions")
    e.add_argument("--json", action="store_true", help="print the export index as JSON")
    e.set_defaults(func=cmd_export_harbor)


def cmd_export_harbor(args: argparse.Namespace) -> int:
    from builder.evaluation.export import ExportOptions, export_harbor
    opts = ExportOptions(org=args.org, agent_user=args.agent_user, agent_timeout_s=args.agent_timeout,
                         verifier_timeout_s=args.verifier_timeout, cpus=args.cpus, memory_mb=args.memory_mb,
                         with_solution=not args.no_solution)
    tasks = [t for t in (args.tasks or "").split(",") if t] or None
    result = export_harbor(args.release, args.condition, args.out, tasks=tasks, run_scripts=args.run_scripts,
                           source=args.source, opts=opts,
                           progress=(lambda iid: print(f"exported {iid}", file=sys.stderr))
                           if sys.stderr.isatty() else None)
    if args.json:
        print(json.dumps(result.to_dict(), indent=1, sort_keys=True))
    else:
        steps = sum(len(t["steps"]) for t in result.tasks)
        print(f"exported {len(result.tasks)} tasks ({steps} steps) of condition {args.condition} to {args.out} "
              f"as Harbor dataset {result.dataset_name}")
    return 0
