"""Stage ``assemble``: the sessions of every fixed condition (swe_taskflow.conditions)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from swe_taskflow.conditions import FIXED_CONDITIONS, assemble

from ..materials import materials_and_intents
from ..stage_data import AssembleOutputs as Outputs, AssembleSummary as Summary, ClassifyTurnsOutputs, SplitOutputs


@dataclass(frozen=True)
class Inputs:
    split: SplitOutputs
    classify_turns: ClassifyTurnsOutputs


def run(inputs: Inputs, ctx) -> Outputs:
    specs = [s for s in ctx.recipe.splits() if s.condition in FIXED_CONDITIONS]
    ctx.progress.set_total(len(specs))
    statuses, pools, conditions = {}, {}, {}
    for spec in specs:
        if spec.pool not in pools:
            pools[spec.pool] = materials_and_intents(inputs.split.splits, inputs.classify_turns.labelled,
                                                     inputs.classify_turns.intents, spec.pool)
        materials, intents, _ = pools[spec.pool]
        rows = assemble(materials, intents, conditions=[spec.condition], seed=ctx.recipe.conditions.seed)[spec.condition]
        conditions[spec.split] = [r.to_dict() for r in rows]
        statuses[spec.split] = dict(sorted(Counter(r.status for r in rows).items()))
        ctx.progress.advance(failed=int(all(r.session is None for r in rows)))
    summaries = {str(p): v[2].to_dict() for p, v in pools.items() if p is not None}
    return Outputs(conditions=conditions, pool_summary=summaries,
                   summary=Summary(conditions=[s.split for s in specs], row_status=statuses, pool=summaries))
