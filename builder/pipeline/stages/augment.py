"""Stage ``augment``: execute, debug, planning, review and tests turns, generated and checked at creation.

Text-only kinds (planning) run for every task with an ok split and a gold patch; sandbox kinds
(execute, debug, review, tests) for tasks whose repository is available here and that have a test command,
in the proof sandbox (docker in the task's own image, bubblewrap otherwise). Every item, accepted or
not, is kept with its checks and reason; wall-clock durations move to the volatile ``timings`` like
the proofs stage's.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from ... import turns
from ...turns.registry import PROPOSERS
from swe_taskflow.turns.kinds import SANDBOX_KINDS

from ..stage_data import AugmentOutputs as Outputs, AugmentSummary as Summary, IngestOutputs, SplitOutputs
from ..turn_run import run_turns


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
    config = turns.ProposeConfig(kinds=tuple(sec.kinds), per_kind=sec.per_kind,
                                 review_attempts=sec.review_attempts, seed=ctx.recipe.conditions.seed)
    needs_sandbox = any(k in SANDBOX_KINDS for k in sec.kinds) or any(s.kind in SANDBOX_KINDS for s in hand)
    done = run_turns(ctx, tasks, sec, partial(turns.augment_tasks, tasks, splits, proposers=PROPOSERS, config=config,
                                              hand_specs=hand),
                     items_of=lambda r: r[0], section="augmentations", needs_sandbox=needs_sandbox, total=len(tasks))
    _, summary = done.result
    return Outputs(items=done.items, timings=done.timings,
                   llm_usage=done.backend.ledger.to_dict() if done.backend is not None else None,
                   summary=Summary(enabled=True, kinds=list(sec.kinds), writer=dict(done.writer.info),
                                   sandbox=done.sandbox_info, **{k: v for k, v in summary.items() if k != "sandbox"}))
