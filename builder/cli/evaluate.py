"""CLI: `swe-taskflow export harbor` (a release condition as a Harbor dataset) and `swe-taskflow evaluate
import` (a Harbor job folder back into results and the release's trajectories). See docs/evaluate.md."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from swe_taskflow.words import counted

from ..evaluation.jobfiles import MAX_ANSWER_BYTES
from ..evaluation.options import ExportOptions
from . import argtypes
from .groups import command_group


EXPORT_HARBOR_DOC = ("One [[steps]] entry per user turn; a checkpoint verifier per issue turn (the source's tests "
                     "on the cumulative repository), an answer-copying verifier per answer turn. Hidden references "
                     "stay in tests/ (uploaded at verification only) and solution/ (the oracle's).")
EVALUATE_IMPORT_DOC = ("Binds every trial to its release row (split and row hashes), judges answer turns (qa: an LLM "
                       "judge through the project's backends and response store), writes results.json and the "
                       "figures (resolve, checkpoints, accuracy by turn kind, accuracy vs resolve, cost), and adds "
                       "the valid trials' trajectories to the release's trajectories config (verify checks the "
                       "binding). Job folders are untrusted: no symlink is followed; a trial with an impossible "
                       "value is reported invalid and not counted. See docs/evaluate.md.")


def register(sub) -> None:
    esub = command_group(sub, "export", dest="export_command", metavar="FORMAT", required=True,
                         help="export a release to an agent harness (Harbor)")
    e = esub.add_parser("harbor", help="write a condition as a Harbor dataset: one multi-step task per row",
                        description=EXPORT_HARBOR_DOC)
    e.add_argument("release", metavar="RELEASE", help="release folder")
    e.add_argument("--condition", required=True, help="split (condition) to export")
    e.add_argument("--out", required=True, metavar="DIR", help="new dataset folder (must not exist or be empty)")
    e.add_argument("--tasks", metavar="ID,...", help="export only these instance ids")
    e.add_argument("--run-scripts", metavar="DIR",
                   help="SWE-Bench Pro's run_scripts/ (<instance_id>/run_script.sh and parser.py) for tasks "
                        "without their own test command")
    e.add_argument("--source", metavar="SPEC", help="the source tasks (file, folder or Hub id) when the release's "
                                                    "recorded source is not on this machine")
    d = ExportOptions()
    e.add_argument("--org", default=d.org, help=f"Harbor org of the task names (default {d.org})")
    e.add_argument("--app-dir", default=d.app_dir, metavar="PATH",
                   help="the repository's folder in the task images (default: by the row's source, /app for "
                        "SWE-Bench Pro and the example, /testbed for SWE-bench Verified)")
    e.add_argument("--agent-user", default=d.agent_user, help=f"non-root user the agent runs as (default {d.agent_user})")
    e.add_argument("--agent-timeout", type=argtypes.seconds, default=d.agent_timeout_s, metavar="S",
                   help=f"per step (default {d.agent_timeout_s:g})")
    e.add_argument("--verifier-timeout", type=argtypes.seconds, default=d.verifier_timeout_s, metavar="S",
                   help=f"per step (default {d.verifier_timeout_s:g})")
    e.add_argument("--cpus", type=argtypes.float_range(0.0, 1024.0, lo_open=True), help="CPUs per task environment")
    e.add_argument("--memory-mb", type=argtypes.int_range(16, 1 << 24), help="memory per task environment")
    e.add_argument("--no-solution", action="store_true", help="leave out the oracle's solutions")
    e.add_argument("--json", action="store_true", help="print the export index as JSON")
    e.set_defaults(func=cmd_export_harbor, out_is_dir=True)

    vsub = command_group(sub, "evaluate", dest="evaluate_command", metavar="COMMAND", required=True,
                         help="evaluation results of agents run on a release")
    v = vsub.add_parser("import", help="read Harbor job folders: judge answers, aggregate, plot, add trajectories",
                        description=EVALUATE_IMPORT_DOC)
    v.add_argument("jobs", nargs="+", metavar="JOB_DIR", help="Harbor job folders (harbor run -o ... --job-name ...)")
    v.add_argument("--release", required=True, metavar="RELEASE", help="release folder the tasks were exported from")
    v.add_argument("--out", metavar="DIR", help="results folder: new, empty, or an earlier import's (replaced) "
                                                "(default: JOB_DIR/swe-taskflow for one job, ./swe-taskflow-results "
                                                "for several)")
    v.add_argument("--dataset", metavar="DIR", help="the exported dataset, when it moved since the run")
    v.add_argument("--judge", metavar="LLM", help="judge backend for qa answers: openai, transformers or replay")
    v.add_argument("--judge-model", default="", help="judge model id (part of every response key)")
    v.add_argument("--judge-base-url", help="OpenAI-compatible endpoint root (openai judge)")
    v.add_argument("--judge-api-key-env", default="OPENAI_API_KEY", help="environment variable holding the key")
    v.add_argument("--judge-store", metavar="DIR", help="response store: records new judgements, replays known ones")
    v.add_argument("--no-trajectories", action="store_true", help="do not add trajectories to the release")
    v.add_argument("--first-run", type=argtypes.non_negative, default=0, help="run index of the first attempt (default 0)")
    v.add_argument("--replace", action="store_true", help="replace trajectories already in the release")
    v.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    v.add_argument("--max-answer-bytes", type=argtypes.int_range(1, 1 << 30), default=MAX_ANSWER_BYTES, metavar="N",
                   help=f"keep at most N bytes of an answer; a longer one is cut and marked truncated "
                        f"(default {MAX_ANSWER_BYTES})")
    v.set_defaults(func=cmd_evaluate_import, out_is_dir=True)
    w = vsub.add_parser("view-jobs", help="write a release's trajectories as a Harbor jobs folder for `harbor view`",
                        description="One job per condition and runner, one trial per trajectory row: "
                                    "<trial>/result.json and <trial>/agent/trajectory.json (ATIF, its steps exactly "
                                    "as imported). Then: harbor view --jobs DIR.")
    w.add_argument("release", metavar="RELEASE", help="release folder with a trajectories config")
    w.add_argument("--out", required=True, metavar="DIR", help="new or empty folder")
    w.set_defaults(func=cmd_evaluate_view_jobs, out_is_dir=True)


def cmd_export_harbor(args: argparse.Namespace) -> int:
    from .. import api
    opts = ExportOptions(org=args.org, app_dir=args.app_dir, agent_user=args.agent_user, agent_timeout_s=args.agent_timeout,
                         verifier_timeout_s=args.verifier_timeout, cpus=args.cpus, memory_mb=args.memory_mb,
                         with_solution=not args.no_solution)
    # `--tasks ''` (or ',') names no task: an error, never "all"
    tasks = None if args.tasks is None else [t.strip() for t in args.tasks.split(",") if t.strip()]
    result = api.export_harbor(args.release, args.condition, args.out, tasks=tasks, run_scripts=args.run_scripts,
                               source=args.source, options=opts,
                               progress=(lambda iid: print(f"exported {iid}", file=sys.stderr))
                               if sys.stderr.isatty() else None)
    if args.json:
        print(json.dumps(result.to_dict(), indent=1, sort_keys=True))
    else:
        reg = result.registry
        print(f"exported {counted(len(result.tasks), 'task')} ({counted(result.steps, 'step')}) of condition "
              f"{args.condition} to {args.out} "
              f"as Harbor dataset {result.dataset_name}; by name: harbor run -d {reg['name']}@{reg['version']} "
              f"--registry-path {reg['path']}")
    for line in result.warnings:
        print(f"warning: {line}", file=sys.stderr)
    return 0


def default_out(jobs: list[str]) -> str:
    """One job: its own ``swe-taskflow`` folder; several: ``swe-taskflow-results`` here (never inside one job)."""
    from ..api import default_results_folder
    return str(default_results_folder(jobs))


def cmd_evaluate_import(args: argparse.Namespace) -> int:
    from .. import api
    judge = None if not args.judge else api.Judge(args.judge, model=args.judge_model, base_url=args.judge_base_url,
                                                  api_key_env=args.judge_api_key_env, store=args.judge_store)
    out = args.out or default_out(args.jobs)
    done = api.import_jobs(args.jobs, args.release, out, judge=judge, dataset=args.dataset,
                           trajectories=not args.no_trajectories, first_run=args.first_run, replace=args.replace,
                           plots=not args.no_plots, max_answer_bytes=args.max_answer_bytes)
    for line in done.summary:
        print(line)
    print(f"results: {Path(out) / 'results.json'}" + (f" (+ {', '.join(done.plots)})" if done.plots else ""))
    if done.results.get("trajectories"):
        print(f"trajectories: {done.trajectories_added} added to {args.release}"
              + (f" ({done.trajectories_manifest})" if done.trajectories_manifest else ""))
    return 0


def cmd_evaluate_view_jobs(args: argparse.Namespace) -> int:
    from ..evaluation.view import write_view
    from swe_taskflow.words import counted
    trials = write_view(args.release, args.out)
    print(f"wrote {counted(len(trials), 'trial')} to {args.out}; open the folder with: harbor view --jobs {args.out}")
    return 0
