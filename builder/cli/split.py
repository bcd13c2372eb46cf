"""CLI: ``swe-taskflow split run`` (split tasks into three turns) and ``split check`` (deterministic checks)."""

from __future__ import annotations

import argparse
import json

from . import argtypes
from .groups import command_group


def add_tasks_arg(p: argparse.ArgumentParser) -> None:
    """``--tasks``: the source tasks of the commands that work task by task (split, qa, augment)."""
    p.add_argument("--tasks", required=True, metavar="SPEC",
                   help="source tasks: a file (JSONL, JSON, parquet, CSV of SWE-Bench Pro / Verified / Lite rows "
                        "or normalized tasks), a folder or a Hub dataset id")


def add_llm_args(p: argparse.ArgumentParser) -> None:
    """Options shared by the commands that call a model (split, qa)."""
    p.add_argument("--llm", default=None, metavar="NAME", help="LLM backend: openai, transformers, replay")
    p.add_argument("--model", default="", help="model id (part of every response key)")
    p.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint root (openai backend)")
    p.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the key")
    p.add_argument("--store", default=None, metavar="DIR", help="response store folder (record / replay)")
    p.add_argument("--max-concurrency", type=argtypes.workers, default=4, help="requests in flight at once")
    p.add_argument("--usage-out", default=None, metavar="JSON", help="write token/cost usage per stage here")


def backend_from_args(args: argparse.Namespace):
    from ..llm import get_backend
    cfg = {"model": args.model, "max_concurrency": args.max_concurrency}
    if args.llm == "openai":
        cfg.update(base_url=args.base_url, api_key_env=args.api_key_env)
    return get_backend(args.llm, store=args.store, **cfg)


def write_usage(args: argparse.Namespace, llm) -> None:
    if llm is not None and args.usage_out:
        from swe_taskflow.jsonl import write_json
        write_json(args.usage_out, {"llm": llm.info, "stages": llm.ledger.to_dict()})


def _run(args: argparse.Namespace) -> int:
    from concurrent.futures import ThreadPoolExecutor
    from collections import Counter

    from ..split import get_splitter
    from ..sources import load_tasks
    from swe_taskflow.jsonl import write_jsonl
    from swe_taskflow.progress import track

    tasks = load_tasks(args.tasks).tasks
    llm = backend_from_args(args) if args.llm else None
    splitter = get_splitter("llm", llm=llm) if llm is not None else get_splitter("structural")
    workers = args.max_concurrency if llm is not None else 1
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(track(pool.map(splitter.split, tasks), total=len(tasks), desc="split", unit="tasks"))
    write_jsonl(args.out, (r.to_dict() for r in results))
    write_usage(args, llm)
    counts = Counter(r.status for r in results)
    print(json.dumps({"tasks": len(results), **{k: counts.get(k, 0) for k in ("ok", "ineligible", "failed")},
                      "splitter": splitter.info.get("name"), "out": str(args.out)}, sort_keys=True))
    return 0


def _check(args: argparse.Namespace) -> int:
    from swe_taskflow.errors import InputError
    from swe_taskflow.jsonl import read_jsonl
    from swe_taskflow.split_checks import check_split

    failed = checked = 0
    for lineno, case in read_jsonl(args.cases):
        if not isinstance(case.get("issue"), str):
            raise InputError("missing or non-text field", path=args.cases, row=lineno, field="issue")
        turns = case.get("turns")
        if not isinstance(turns, list) or not all(isinstance(t, str) for t in turns):
            raise InputError("must be a list of strings", path=args.cases, row=lineno, field="turns")
        vs = check_split(case["issue"], turns)
        failed += bool(vs)
        print(json.dumps({"ok": not vs, "violations": [v.to_dict() for v in vs]}, ensure_ascii=False))
        checked += 1
    if not checked:
        raise InputError("no case to check (the file holds no JSON line)", path=args.cases,
                         hint='each line is {"issue": "...", "turns": ["...", "...", "..."]}')
    return 1 if failed else 0


def register(sub) -> None:
    s = command_group(sub, "split", dest="split_command",
                      help="split issues into three ordered user turns; check splits")
    r = s.add_parser("run", help="split every task (structural by default, or with --llm)")
    add_tasks_arg(r)
    add_llm_args(r)
    r.add_argument("--out", required=True, help="output SPLITS.jsonl: one SplitResult row per task")
    r.set_defaults(func=_run)
    c = s.add_parser("check", help="run the deterministic split checks on CASES.jsonl ({issue, turns} per line)")
    c.add_argument("cases", help="JSONL, each line {\"issue\": str, \"turns\": [str, ...]}")
    c.set_defaults(func=_check)
