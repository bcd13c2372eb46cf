"""Stage ``select``: the TFAS-optimized selection against the recipe's target (swe_taskflow.select)."""

from __future__ import annotations

from dataclasses import dataclass

from swe_taskflow.select import select_and_report

from ..materials import materials_and_intents
from ..recipe import recipe_target, recipe_target_path, selection_config
from ..stage_data import ClassifyTurnsOutputs, SelectOutputs as Outputs, SelectSummary as Summary, SplitOutputs


@dataclass(frozen=True)
class Inputs:
    split: SplitOutputs
    classify_turns: ClassifyTurnsOutputs


def run(inputs: Inputs, ctx) -> Outputs:
    path, target = recipe_target_path(ctx.recipe), recipe_target(ctx.recipe)
    if "tfas_optimized" not in ctx.recipe.conditions.names:
        return Outputs(target=path, summary=Summary(selected=False, target=target.name))
    config = selection_config(ctx.recipe)     # validated when the recipe was loaded
    spec = next(s for s in ctx.recipe.splits() if s.condition == "tfas_optimized")
    materials, intents, _ = materials_and_intents(inputs.split.splits, inputs.classify_turns.labelled,
                                                  inputs.classify_turns.intents, spec.pool)
    ctx.progress.set_total(len(materials))
    selection, report = select_and_report(materials, intents, target, config, where=str(ctx.recipe.path))
    ctx.progress.advance(len(materials))
    return Outputs(
        target=path, conditions={"tfas_optimized": [r.to_dict() for r in selection.rows()]},
        selection=selection.selection_rows(), report=report,
        summary=Summary(selected=True, target=target.name, score=report["score"], config_text=report["config_text"],
                        constraints=report["constraints"], sessions_by_questions=report["sessions_by_questions"],
                        placement=report["placement"], questions_by_slot=report["questions_by_slot"]))
