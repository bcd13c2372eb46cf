"""Stage ``augment``: execute, debug, planning and review turns, generated and checked at creation.

Text-only kinds (planning) run for every task with an ok split and a gold patch; sandbox kinds
(execute, debug, review) for tasks whose repository is available here and that have a test command,
in the proof sandbox (docker in the task's own image, bubblewrap otherwise). Every item, accepted or
not, is kept with its checks and reason; wall-clock durations move to the volatile ``timings`` like
the proofs stage's.
"""

from __future__ import annotations

from dataclasses import dataclass

from ... import turns
from ...turns.registry import PROPOSERS, realize
from swe_taskflow.turns.kinds import SANDBOX_KINDS

from ..repos import sandbox_setup
from ..stage_data import AugmentOutputs as Outputs, AugmentSummary as Summary, IngestOutputs, SplitOutputs
from ..volatile import strip_items


@dataclass(frozen=True)
class Inputs:
    ingest: IngestOutputs
    split: SplitOutputs


def run(inputs: Inputs, ctx) -> Outputs:
    sec = ctx.recipe.augmentations
    if not sec.kinds and not sec.specs:
        return Outputs(summary=Summary(enabled=False))
    tasks = [t for t in inputs.ingest.tasks if t.status == "ok"]
    splits = {s.instance_id: s for s in inputs.split.splits}
    hand = turns.read_spec_files(sec.specs, ctx.recipe.resolve)
    writer, backend = turns.get_writer(ctx.recipe.augmentations, ctx.recipe.resolve)
    needs_sandbox = any(k in SANDBOX_KINDS for k in sec.kinds) or any(s.kind in SANDBOX_KINDS for s in hand)
    sandbox, repos, images, sb_info = (sandbox_setup(ctx, tasks, timeout_s=sec.timeout_s) if needs_sandbox
                                       else (None, {}, {}, {"sandbox": "none"}))
    ctx.progress.set_total(len(tasks))
    config = turns.ProposeConfig(kinds=tuple(sec.kinds), per_kind=sec.per_kind,
                                 review_attempts=sec.review_attempts, seed=ctx.recipe.conditions.seed)
    try:
        items, summary = turns.augment_tasks(tasks, splits, writer=writer, realize=realize, proposers=PROPOSERS,
                                             sandbox=sandbox, repos=repos, images=images, config=config,
                                             hand_specs=hand,
                                             progress=lambda n: ctx.progress.advance(n))
    finally:   # harbor: every environment and the worker stopped, also on an error or an interrupt
        if sandbox is not None:
            sandbox.close()
    kept, timings = strip_items(items)
    return Outputs(items=kept, timings=timings,
                   llm_usage=backend.ledger.to_dict() if backend is not None else None,
                   summary=Summary(enabled=True, kinds=list(sec.kinds), writer=dict(writer.info), sandbox=sb_info,
                                   **{k: v for k, v in summary.items() if k != "sandbox"}))
