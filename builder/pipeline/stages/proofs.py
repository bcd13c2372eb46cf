"""Stage ``proofs``: every candidate question's proof script run in a sandbox (builder.proofs).

Wall-clock durations move out of the reports into the volatile ``timings`` (builder.pipeline.volatile).
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from dataclasses import dataclass

from ...proofs.harbor_runner import Progress as HarborProgress
from ...proofs.pool import ProofTask, deliberately_failing, validate_pool
from ...proofs.run import resolve_sandbox
from swe_taskflow.schema import QAItem

from ..repos import build_images, materialize
from ..stage_data import IngestOutputs, ProofsOutputs as Outputs, ProofsSummary as Summary, QuestionsOutputs
from ..volatile import strip_items


@dataclass(frozen=True)
class Inputs:
    ingest: IngestOutputs
    questions: QuestionsOutputs


def _disabled(items: list[QAItem], enabled: bool) -> Outputs:
    reason = "proofs disabled" if items else ""
    return Outputs(validated=[dataclasses.replace(q, reason=reason) for q in items],
                   summary=Summary(enabled=bool(enabled), by_status={}, sandbox="none"))


def run(inputs: Inputs, ctx) -> Outputs:
    items = inputs.questions.pool
    ctx.progress.set_total(len(items))
    sec = ctx.recipe.proofs
    if not items or not sec.enabled:
        ctx.progress.advance(len(items))
        return _disabled(items, sec.enabled)
    kind = resolve_sandbox(sec.sandbox)
    tasks = {t.instance_id: t for t in inputs.ingest.tasks}
    asked = [tasks[iid] for iid in sorted({q.instance_id for q in items})]
    repos_dir, repos_info = materialize(ctx.recipe, ctx.work, asked)
    # the harbor sandbox's local environment runs the same locally built task images
    images = build_images(ctx.recipe, asked) if kind in ("docker", "harbor") and not sec.image else {}
    proof_tasks = {t.instance_id: ProofTask(repo=t.repo, image_name=t.image_name, base_commit=t.base_commit,
                                            patch=t.patch if sec.gold_patch else "") for t in asked}
    pools = ctx.recipe.questions.pools if ctx.recipe.questions.mode == "pool" else []
    meant = deliberately_failing([ctx.recipe.resolve(p.path) for p in pools])   # display only

    harbor = {"environment": sec.environment, "environment_kwargs": dict(sec.environment_kwargs or {}),
              "concurrency": sec.concurrency, "progress": HarborProgress()} if kind == "harbor" else None
    last_note = [time.monotonic()]

    def on_item(q: QAItem) -> None:
        failed = q.status != "accepted"
        ctx.progress.advance(failed=int(failed), expected=int(failed and q.question_id in meant))
        if harbor is not None and time.monotonic() - last_note[0] >= 10:   # environments running, failures, left
            last_note[0] = time.monotonic()
            ctx.progress.display.note(f"proofs: {harbor['progress'].line()}")
    result = validate_pool(items, repos_dir, tasks=proof_tasks, image=sec.image or None, sandbox=kind,
                           jobs=sec.jobs, cache_dir=ctx.items.root, timeout_s=sec.timeout_s, on_item=on_item,
                           harbor=harbor)
    not_run = [q for q in result.items if q.proof_report is None and q.status == "rejected"]
    ctx.progress.advance(len(not_run), failed=len(not_run),   # kept without a proof: not reported by on_item
                         expected=sum(q.question_id in meant for q in not_run))
    validated, timings = strip_items(result.items, every_timing=True)
    s = result.summary
    reports = [q.proof_report or {} for q in validated]
    return Outputs(validated=validated, repos=repos_info, timings=timings, summary=Summary(
        enabled=True, sandbox=s.sandbox, image=", ".join(sorted({r.get("image") or "" for r in reports} - {""})),
        image_id=", ".join(sorted({r.get("image_id") or "" for r in reports} - {""})), images_built=images,
        accepted=s.accepted, rejected=s.rejected, error=s.error, by_status=dict(sorted(s.by_status.items())),
        rejected_by_cause=dict(sorted(s.rejected_by_cause.items())), rejected_before_proof=s.not_run,
        rejected_by_reason=dict(sorted(Counter(q.reason for q in validated if q.status != "accepted").items())),
        gold_patch=bool(sec.gold_patch), repos=repos_info.get("kind")))
