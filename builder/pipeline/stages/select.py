"""Stage ``select``: the TFAS-optimized selection against the recipe's target (swe_taskflow.select)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from swe_taskflow.augment.kinds import AUGMENT_KINDS
from swe_taskflow.select import select

from ..materials import materials_and_intents
from ..recipe_derived import recipe_target, recipe_target_path, selection_config
from ..stage_data import ClassifyTurnsOutputs
from ..stage_data import SelectOutputs as Outputs
from ..stage_data import SelectSummary as Summary
from ..stage_data import SplitOutputs


@dataclass(frozen=True)
class Inputs:
    split: SplitOutputs
    classify_turns: ClassifyTurnsOutputs


def augmentation_table(materials, intents, target, config, selection) -> dict:
    """TFAS (with S_L, S_T, S_R) of the optimized selection without the augmentations, with each kind
    alone, and with all of them: the same search, seed and constraints, only the family differs."""

    def row(name, sel) -> dict:
        rep = sel.report()
        return {"family": name, **rep["score"], "turns": sum(int(k) * v for k, v in rep["sessions_by_turns"].items()),
                "augmentation_turns": rep["augmentations"]["retained"],
                "by_kind": rep["augmentations"]["by_kind"]}

    out = [row("without augmentations (the paper's family)",
               select(materials, intents, target, dataclasses.replace(config, max_augments_per_task=0)))]
    for kind in AUGMENT_KINDS:
        only = [dataclasses.replace(m, augments=tuple(a for a in m.augments if a.kind == kind)) for m in materials]
        if any(m.augments for m in only):
            out.append(row(f"only {kind}", select(only, intents, target, config)))
    out.append(row("with every augmentation kind (published)", selection))
    return out


def run(inputs: Inputs, ctx) -> Outputs:
    path, target = recipe_target_path(ctx.recipe), recipe_target(ctx.recipe)
    if "tfas_optimized" not in ctx.recipe.conditions.names:
        return Outputs(target=path, summary=Summary(selected=False, target=target.name))
    config = selection_config(ctx.recipe)     # validated when the recipe was loaded
    spec = next(s for s in ctx.recipe.splits() if s.condition == "tfas_optimized")
    materials, intents, _ = materials_and_intents(inputs.split.splits, inputs.classify_turns.labelled,
                                                  inputs.classify_turns.intents, spec.pool)
    ctx.progress.set_total(len(materials))
    selection = select(materials, intents, target, config)
    report = selection.report()
    if config.max_augments_per_task:
        report["with_and_without_augmentations"] = augmentation_table(materials, intents, target, config, selection)
    ctx.progress.advance(len(materials))
    return Outputs(
        target=path, conditions={"tfas_optimized": [r.to_dict() for r in selection.rows()]},
        selection=selection.selection_rows(), report=report,
        summary=Summary(selected=True, target=target.name, score=report["score"], config_text=report["config_text"],
                        constraints=report["constraints"], sessions_by_questions=report["sessions_by_questions"],
                        placement=report["placement"], questions_by_slot=report["questions_by_slot"]))
