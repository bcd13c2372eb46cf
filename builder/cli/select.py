"""CLI: ``swe-taskflow select`` — the TFAS-optimized selection (paper Appendix F).

Reads split results and a question pool, gives every issue text an intent (from ``--intents`` or
the classifier, each distinct text once), runs the seeded local search against a target and writes
``selection.jsonl``, ``sessions.jsonl``, ``report.json`` and ``intents.jsonl`` into ``--out``
(byte-identical for the same inputs and seed). ``--conditions`` also writes every fixed condition.
"""

from __future__ import annotations

import argparse
import sys

from swe_taskflow.words import counted

from . import argtypes


def register(sub) -> None:
    p = sub.add_parser("select", help="choose one session per task maximizing TFAS against a target",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tasks", required=True, metavar="SPLITS.jsonl",
                   help="split results (rows of SplitResult.to_dict(): instance_id, status, parts, original_prompt)")
    p.add_argument("--pool", metavar="POOL.jsonl", help="question pool (rows of QAItem.to_dict()); omit for none")
    p.add_argument("--target", required=True, metavar="TARGET.json",
                   help="target Task-Flow file, 'default' (the shipped default target) or a shipped target's name")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder")
    p.add_argument("--preset", default="", metavar="NAME",
                   help="a named selection configuration ('paper': Appendix F's run); options below override it")
    p.add_argument("--seed", type=argtypes.seed, default=None, help="seed (default 0)")
    p.add_argument("--restarts", type=argtypes.int_range(1, 100_000), default=None, help="random restarts (default 64)")
    p.add_argument("--sweeps", type=argtypes.int_range(1, 100_000), default=None,
                   help="most sweeps per restart (default 20)")
    p.add_argument("--max-questions", type=argtypes.int_range(0, 3), default=None,
                   help="most questions per session, 0..3 (default 3)")
    p.add_argument("--min-full-split-share", type=argtypes.share, default=None,
                   help="share of ok-split tasks that must keep their 3 issue turns (default 0)")
    p.add_argument("--min-question-share", type=argtypes.share, default=None,
                   help="share of usable questions to keep (default 0)")
    p.add_argument("--min-qa-task-share", type=argtypes.share, default=None,
                   help="share of tasks with usable questions that must carry one (default 0)")
    p.add_argument("--min-placement-share", type=argtypes.share, default=None,
                   help="diversity: share of tasks with usable questions each placement pattern must hold (default 0)")
    p.add_argument("--no-original", action="store_true", default=None,
                   help="leave the original single prompt out of the family of ok-split tasks")
    p.add_argument("--no-filter", action="store_true", default=None,
                   help="do not restrict candidates to the target's min_messages")
    p.add_argument("--allow-candidates", action="store_true",
                   help="also use pool questions with status 'candidate' (default: 'accepted' only)")
    p.add_argument("--intents", metavar="INTENTS.jsonl",
                   help="known intents of issue texts: rows {text, intent} (e.g. a previous intents.jsonl)")
    p.add_argument("--classifier", default="embedded", help="classifier for texts without a known intent")
    p.add_argument("--conditions", action="store_true",
                   help="also write conditions/<name>.jsonl for every fixed condition")
    p.set_defaults(func=run, out_is_dir=True)


def _config(args: argparse.Namespace):
    """The selection config: the preset (if any) with the options given on the command line on top."""
    from swe_taskflow.select import SelectConfig

    given = {"restarts": args.restarts, "sweeps": args.sweeps, "seed": args.seed,
             "max_questions_per_task": args.max_questions, "min_full_split_share": args.min_full_split_share,
             "min_question_share": args.min_question_share, "min_qa_task_share": args.min_qa_task_share,
             "min_placement_share": args.min_placement_share,
             "include_original": None if args.no_original is None else False,
             "apply_target_filter": None if args.no_filter is None else False}
    if args.preset:
        return SelectConfig.from_preset(args.preset, **given)
    return SelectConfig(**{k: v for k, v in given.items() if v is not None})


def run(args: argparse.Namespace) -> int:
    from .. import api

    done = api.select(args.tasks, args.target, args.out, pool=args.pool, config=_config(args), intents=args.intents,
                      classifier=args.classifier, allow_candidates=args.allow_candidates,
                      conditions=args.conditions, progress=True)
    print(f"TFAS {done.tfas:.2f} (S_L {done.S_L:.4f}, S_T {done.S_T:.4f}, S_R {done.S_R:.4f}) "
          f"over {counted(done.tasks, 'task')}; "
          f"{done.evaluations:,} candidate evaluations in {done.wall_s:.2f} s; wrote {done.out}", file=sys.stderr)
    print(f"selection: {done.config}", file=sys.stderr)
    return 0
