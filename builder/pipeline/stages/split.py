"""Stage ``split``: each task's issue into three ordered turns, or single-turn with the reasons.

An ok split then goes through the evaluation-context checks (swe_taskflow.context_checks, mode
``split.context_checks``); one that fails them stays single-turn (status ``failed``, its violations
listed). Each task's checkpoint attribution of its FAIL_TO_PASS tests goes to ``context``.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections import Counter
from dataclasses import dataclass

from ... import llm, split
from swe_taskflow.context_checks import check_context
from swe_taskflow.hashing import file_sha256, canonical_sha256
from swe_taskflow.schema import SplitResult

from ..stage_data import IngestOutputs, SplitOutputs as Outputs, SplitSummary as Summary


@dataclass(frozen=True)
class Inputs:
    ingest: IngestOutputs


def make_splitter(recipe):
    sec = recipe.split
    if sec.splitter == "llm":
        return split.get_splitter("llm", llm=llm.backend_from(sec.llm, recipe.resolve))
    return split.get_splitter(sec.splitter)


def run(inputs: Inputs, ctx) -> Outputs:
    tasks = [t for t in inputs.ingest.tasks if t.status == "ok"]
    splitter = make_splitter(ctx.recipe)
    info = dict(getattr(splitter, "info", {}) or {})
    # The item key holds the splitter's code too: a structural splitter whose rules changed has the same info,
    # and its cached items would otherwise outlive the change (an LLM splitter's replies stay in its store).
    code = file_sha256(inspect.getsourcefile(type(splitter)))
    ctx.progress.set_total(len(tasks))
    mode = ctx.recipe.split.context_checks
    results, context = [], []
    for task in tasks:
        key = canonical_sha256({"splitter": info, "code": code, "task": task.to_dict()})
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
    ledger = getattr(getattr(splitter, "llm", None), "ledger", None)
    violations = Counter(v.get("kind", "?") for r in results for v in r.violations)
    return Outputs(
        splits=results, context=context,
        # calls made by this run only (cached items cost nothing): volatile
        llm_usage=ledger.to_dict() if ledger is not None else None,
        summary=Summary(splitter=info, context_checks=mode,
                        context_failed=sum(1 for c in context if not c["ok"]),
                        tests_unattributed=sum(len(c["unattributed"]) for c in context),
                        by_status=dict(sorted(Counter(r.status for r in results).items())),
                        reasons=dict(sorted(Counter(r.reason for r in results if r.status != "ok").items())),
                        violations=dict(sorted(violations.items()))))
