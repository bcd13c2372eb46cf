"""CLI: ``swe-taskflow augment run`` (generate and check execute/debug/planning/review turns) and
``augment score`` (score an answer to one item deterministically). See docs/augmentations.md."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..proofs.config import SANDBOXES
from .split import add_llm_args, add_tasks_arg, backend_from_args, write_usage
from .groups import command_group


def _run(args: argparse.Namespace) -> int:
    from ..turns import LLMWriter, ProposeConfig, TemplateWriter, augment_tasks, read_specs
    from ..turns.registry import PROPOSERS, realize
    from ..split import get_splitter
    from ..sources import load_tasks
    from swe_taskflow.turns.kinds import AUGMENT_KINDS
    from swe_taskflow.errors import ConfigError
    from swe_taskflow.jsonl import read_jsonl, write_jsonl
    from swe_taskflow.schema import SplitResult

    kinds = tuple(args.kinds.split(",")) if args.kinds else AUGMENT_KINDS
    for k in kinds:
        if k not in AUGMENT_KINDS:
            raise ConfigError("unknown augmentation kind", field="--kinds", expected=AUGMENT_KINDS, actual=k)
    loaded = load_tasks(args.tasks).tasks
    tasks = [t for t in loaded if t.status == "ok"]
    malformed = {t.instance_id: t.reason for t in loaded if t.status != "ok"}
    if args.splits:
        splits = {o["instance_id"]: SplitResult.from_dict(o, where=args.splits, row=n)
                  for n, o in read_jsonl(args.splits)}
    else:
        splitter = get_splitter("structural")
        splits = {t.instance_id: splitter.split(t) for t in tasks}
    llm = backend_from_args(args) if args.llm else None
    writer = LLMWriter(llm) if llm is not None else TemplateWriter()
    sandbox, repos, images = None, {}, {}
    if args.repos:
        from ..turns.sandbox import CheckSandbox
        from swe_taskflow.verify import find_repo

        sandbox = CheckSandbox(args.sandbox, image=args.image or None)
        for t in tasks:
            repo = find_repo(Path(args.repos), {"instance_id": t.instance_id, "repo": t.repo})
            if repo is not None:
                repos[t.instance_id] = repo
                images[t.instance_id] = sandbox.image_for(t.image_name) or ""   # the task's own, as the build does
    hand = [s for f in args.specs or () for s in read_specs(f, pool=Path(f).stem)]
    config = ProposeConfig(kinds=kinds, per_kind=args.per_kind, seed=args.seed)
    try:
        items, summary = augment_tasks(tasks, splits, writer=writer, realize=realize, proposers=PROPOSERS,
                                       sandbox=sandbox, repos=repos,
                                       images=images, config=config, hand_specs=hand)
    finally:   # harbor: every environment and the worker stopped, also on an error or an interrupt
        if callable(close := getattr(sandbox, "close", None)):
            close()
    write_jsonl(args.out, (i.to_dict() for i in items))
    write_usage(args, llm)
    print(json.dumps({"tasks": len(tasks), "malformed_tasks": malformed, "out": str(args.out), **summary},
                     sort_keys=True, default=str))
    return 0


def _score(args: argparse.Namespace) -> int:
    from swe_taskflow.turns.registry import score_answer
    from swe_taskflow.errors import InputError

    try:
        item = json.loads(Path(args.item).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read the item ({exc})", path=args.item) from None
    answer = sys.stdin.read() if args.answer == "-" else Path(args.answer).read_text(encoding="utf-8")
    unchanged = None if args.repo_unchanged is None else args.repo_unchanged == "yes"
    verdict = None
    if args.verdict:
        try:
            verdict = json.loads(Path(args.verdict).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read the verdict ({exc})", path=args.verdict) from None
        if not isinstance(verdict, dict):
            raise InputError("a verdict is a JSON object", path=args.verdict, field="<document>",
                             actual=type(verdict).__name__)
    s = score_answer(item, answer, repo_unchanged=unchanged, turn_text=item.get("question", ""), verdict=verdict)
    print(json.dumps(s.to_dict(), sort_keys=True))
    return 0 if s.correct else 1


def register(sub) -> None:
    from swe_taskflow.turns.kinds import AUGMENT_KINDS
    s = command_group(sub, "augment", dest="augment_command",
                      help=f"verifiable {'/'.join(AUGMENT_KINDS)} turns (docs/augmentations.md)")
    r = s.add_parser("run", help="generate augmentation turns for tasks and check each at creation",
                     description="Planning turns need only the tasks (gold patch) and their splits; execute, "
                                 "debug and review turns run in the proof sandbox against --repos checkouts "
                                 "(one per task: <instance_id> or <owner>__<name>). Every item is written "
                                 "with its checks and, when rejected, the reason.")
    add_tasks_arg(r)
    r.add_argument("--out", required=True, help="output ITEMS.jsonl (one item per line, every status)")
    r.add_argument("--splits", help="SPLITS.jsonl from `split run` (default: split structurally)")
    r.add_argument("--kinds", default="", help=f"comma-separated kinds (default: {','.join(AUGMENT_KINDS)})")
    r.add_argument("--repos", metavar="DIR", help="repository checkouts at each task's base commit")
    r.add_argument("--sandbox", default="auto", choices=SANDBOXES)
    r.add_argument("--image", default="", help="docker image (default: the task's own when present, else the "
                                               "project's test image)")
    r.add_argument("--specs", nargs="*", metavar="JSONL", help="hand-written specs to check as well")
    r.add_argument("--per-kind", type=int, default=2, help="accepted items per kind and task, at most")
    r.add_argument("--seed", type=int, default=0, help="seed of the review defects' order")
    add_llm_args(r)
    r.set_defaults(func=_run)
    c = s.add_parser("score", help="score one answer against an item's hidden reference (deterministic part)",
                     description="Exit 0 when the answer counts as correct, 1 otherwise; prints the score as JSON.")
    c.add_argument("item", help="JSON file: one item (a line of ITEMS.jsonl or a release row's questions entry)")
    c.add_argument("answer", help="answer text file, or - for stdin")
    c.add_argument("--repo-unchanged", choices=("yes", "no"), default=None,
                   help="whether the turn left the repository unchanged (debug and review score 0 otherwise)")
    c.add_argument("--verdict", metavar="JSON", help="the step verifier's verdict where the kind has its own "
                                                      "(a tests turn: its verdict.json)")
    c.set_defaults(func=_score)
