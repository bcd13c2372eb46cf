"""Stage ``split``: each task's issue into three ordered turns, or single-turn with the reasons.

An ok split then goes through the evaluation-context checks (swe_taskflow.context_checks, mode
``split.context_checks``); one that fails them stays single-turn (status ``failed``, its violations
listed). Each task's checkpoint attribution of its FAIL_TO_PASS tests goes to ``context.jsonl``.
"""

from __future__ import annotations

from collections import Counter

import dataclasses

from swe_taskflow.context_checks import check_context
from swe_taskflow.jsonl import write_json, write_jsonl
from swe_taskflow.schema import SplitResult

from ..hashing import sha256_json
from .common import need_module, read_tasks


def make_splitter(recipe):
    split = need_module("builder.split", "issue 4, generation")
    sec = recipe.split
    if sec.splitter == "llm":
        llm = need_module("builder.llm", "issue 4, generation")
        store = llm.ResponseStore(str(recipe.resolve(sec.responses))) if sec.responses else None
        cfg = {"model": sec.model} if sec.model else {}
        backend = llm.get_backend(sec.llm, store=store, **cfg)
        return split.get_splitter("llm", llm=backend)
    return split.get_splitter(sec.splitter)


def run(ctx) -> None:
    tasks = [t for t in read_tasks(ctx.input("ingest")) if t.status == "ok"]
    splitter = make_splitter(ctx.recipe)
    info = dict(getattr(splitter, "info", {}) or {})
    ctx.progress.set_total(len(tasks))
    mode = ctx.recipe.split.context_checks
    results, context = [], []
    for task in tasks:
        key = sha256_json({"splitter": info, "task": task.to_dict()})
        cached = ctx.items.get(key)
        if cached is not None:
            res = SplitResult.from_dict(cached)
        else:
            res = splitter.split(task)
            ctx.items.put(key, res.to_dict())
        if res.status == "ok":
            rep = check_context(task.original_prompt, res.parts, task.fail_to_pass, mode=mode)
            context.append({"instance_id": task.instance_id, **rep.to_dict()})
            if not rep.ok:
                res = dataclasses.replace(res, status="failed", reason="evaluation-context checks failed",
                                          violations=tuple(res.violations) + tuple(v.to_dict() for v in rep.violations))
        results.append(res)
        ctx.progress.advance(failed=int(res.status != "ok"))
    write_jsonl(ctx.out / "splits.jsonl", (r.to_dict() for r in results))
    write_jsonl(ctx.out / "context.jsonl", context)
    ledger = getattr(getattr(splitter, "llm", None), "ledger", None)
    if ledger is not None:  # calls made by this run only (cached items cost nothing): volatile
        write_json(ctx.out / "_volatile" / "llm_usage.json", ledger.to_dict())
    violations = Counter(v.get("kind", "?") for r in results for v in r.violations)
    ctx.summary.update(splitter=info, context_checks=mode,
                       context_failed=sum(1 for c in context if not c["ok"]),
                       tests_unattributed=sum(len(c["unattributed"]) for c in context),
                       by_status=dict(sorted(Counter(r.status for r in results).items())),
                       reasons=dict(sorted(Counter(r.reason for r in results if r.status != "ok").items())),
                       violations=dict(sorted(violations.items())))
