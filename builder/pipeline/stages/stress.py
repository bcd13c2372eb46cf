"""Stage ``stress``: the stress-test slices' turns (docs/stress.md), drawn and checked before selection.

Reads only ``[stress]`` (with the sandbox and repositories): nothing of the target, the selection or
the calibrated conditions, so a slice can never move the core and the core never decides a slice. The
rows themselves are written by ``write`` (a slice's turn placed in the task's own session).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ... import turns
from ...turns.registry import realize
from ...resources import builder_path

from ..repos import sandbox_setup
from ..stage_data import IngestOutputs, SplitOutputs, StressOutputs as Outputs, StressSummary as Summary
from ..volatile import strip_items

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
    writer, backend = turns.get_writer(ctx.recipe.stress, ctx.recipe.resolve, templates=TEMPLATES, section="stress")
    sandbox, repos, images, sb_info = sandbox_setup(ctx, tasks, timeout_s=sec.timeout_s)
    ctx.progress.set_total(len(sec.slices))
    try:
        items, slices, unknown = turns.build_slices(sec.slices, tasks, splits, writer=writer,
                                                    realize=realize, sandbox=sandbox,
                                                    repos=repos, images=images, hand_specs=hand,
                                                    progress=lambda n: ctx.progress.advance(n))
    finally:   # harbor: every environment and the worker stopped, also on an error or an interrupt
        if sandbox is not None:
            sandbox.close()
    kept, timings = strip_items(items)
    summary = Summary(
        enabled=True, writer=dict(writer.info), sandbox=sb_info, items=len(kept),
        by_kind_status={k: dict(sorted(Counter(i.status for i in kept if i.kind == k).items()))
                        for k in sorted({i.kind for i in kept})},
        rejected=[{"question_id": i.question_id, "kind": i.kind, "pool": i.pool, "status": i.status,
                   "reason": i.reason} for i in kept if i.status != "accepted"],
        rows={s["split"]: len(s["chosen"]) for s in slices}, unknown_task_specs=unknown or None)
    return Outputs(items=kept, slices=slices, timings=timings,
                   llm_usage=backend.ledger.to_dict() if backend is not None else None, summary=summary)
