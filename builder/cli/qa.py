"""CLI: ``swe-taskflow qa generate``: mine repository questions from solving trajectories."""

from __future__ import annotations

import argparse
import json

from . import argtypes
from .groups import command_group


def _generate(args: argparse.Namespace) -> int:
    from collections import Counter
    from pathlib import Path

    from .split import backend_from_args, write_usage
    from ..qa import find_trajectory, generate_questions, load_resolved, skipped_task
    from ..sources import load_tasks
    from swe_taskflow.errors import ConfigError
    from swe_taskflow.jsonl import write_jsonl
    from swe_taskflow.safepath import is_inside
    from swe_taskflow.schema import QAItem

    if not args.llm:
        raise ConfigError("qa generate needs a model", field="--llm", expected=("openai", "transformers", "replay"))
    tasks = load_tasks(args.tasks).tasks
    llm = backend_from_args(args)
    resolved = load_resolved(args.resolved) if args.resolved else {}
    items: list[QAItem] = []
    for task in tasks:
        if task.status != "ok":
            items.append(skipped_task(task.instance_id, "malformed-task", task.reason))
            continue
        traj = find_trajectory(args.trajectories, task.instance_id)
        if traj is None:
            items.append(skipped_task(task.instance_id, "no-trajectory", f"no solving trajectory in {args.trajectories}"))
            continue
        repo = Path(args.repos) / task.instance_id if args.repos and is_inside(args.repos, task.instance_id) else None
        items += generate_questions(task, traj, repo, llm, max_questions=args.max_questions,
                                    resolved=resolved.get(task.instance_id))
    write_jsonl(args.out, (it.to_dict() for it in items))
    write_usage(args, llm)
    c = Counter(it.status for it in items)
    print(json.dumps({"tasks": len(tasks), "items": len(items), **dict(c), "out": str(args.out)}, sort_keys=True))
    return 0


def register(sub) -> None:
    from .split import add_llm_args, add_tasks_arg
    s = command_group(sub, "qa", dest="qa_command",
                      help="mine repository questions from solving trajectories")
    g = s.add_parser("generate", help="propose, check and review 1-3 questions per task")
    add_tasks_arg(g)
    g.add_argument("--trajectories", required=True, metavar="DIR", help="folder of <instance_id>.traj.json(.gz)")
    g.add_argument("--repos", default=None, metavar="DIR", help="folder of checkouts named <instance_id>")
    g.add_argument("--out", required=True, help="output POOL.jsonl of QAItem rows")
    g.add_argument("--max-questions", type=argtypes.int_range(1, 3), default=3, help="questions per task (1-3)")
    g.add_argument("--resolved", default=None, metavar="RESULTS.json",
                   help="per-task resolution flags (mini-swe-agent results_summary.json or {id: bool}); a trajectory "
                        "of a task marked unresolved is skipped. Without it the exit status and patch decide")
    add_llm_args(g)
    g.set_defaults(func=_generate)
