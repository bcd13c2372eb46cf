"""Stage ``stress``: the stress-test slices' turns (docs/stress.md), drawn and checked before selection.

Reads only ``[stress]`` (with the sandbox and repositories): nothing of the target, the selection or
the calibrated conditions, so a slice can never move the core and the core never decides a slice. The
rows themselves are written by ``write`` (a slice's turn placed in the task's own session).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import partial

from ... import turns
from ...resources import builder_path

from ..stage_data import IngestOutputs, SplitOutputs, StressOutputs as Outputs, StressSummary as Summary
from ..turn_run import run_turns

TEMPLATES = builder_path("prompts", "stress_templates.json")


@dataclass(frozen=True)
class Inputs:
    ingest: IngestOutputs
    split: SplitOutputs


def run(inputs: Inputs, ctx) -> Outputs:
    sec = ctx.recipe.stress
    if not sec.slices and not sec.specs:
        return Outputs(summary=Summary(enabled=False))
    tasks = [t for t in inputs.ingest.tasks if t.status == "ok"]
    splits = {s.instance_id: s for s in inputs.split.splits}
    hand = turns.read_spec_files(sec.specs, ctx.recipe.resolve, cls=turns.StressSpec)
    done = run_turns(ctx, tasks, sec, partial(turns.build_slices, sec.slices, tasks, splits, hand_specs=hand),
                     items_of=lambda r: r[0], section="stress", templates=TEMPLATES, needs_sandbox=True,
                     total=len(sec.slices))
    _, slices, unknown = done.result
    kept = done.items
    summary = Summary(
        enabled=True, writer=dict(done.writer.info), sandbox=done.sandbox_info, items=len(kept),
        by_kind_status={k: dict(sorted(Counter(i.status for i in kept if i.kind == k).items()))
                        for k in sorted({i.kind for i in kept})},
        rejected=[{"question_id": i.question_id, "kind": i.kind, "pool": i.pool, "status": i.status,
                   "reason": i.reason} for i in kept if i.status != "accepted"],
        rows={s["split"]: len(s["chosen"]) for s in slices}, unknown_task_specs=unknown or None)
    return Outputs(items=kept, slices=slices, timings=done.timings,
                   llm_usage=done.backend.ledger.to_dict() if done.backend is not None else None, summary=summary)
