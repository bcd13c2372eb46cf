"""Stage ``select``: the TFAS-optimized selection against the recipe's target (swe_taskflow.select)."""

from __future__ import annotations

import shutil
from pathlib import Path

from swe_taskflow.errors import ConfigError
from swe_taskflow.jsonl import write_json, write_jsonl
from swe_taskflow.target import load_target

from ..recipe_augment import selection_config
from .assemble import materials_and_intents
from .common import need_module


def target_path(recipe) -> Path:
    if recipe.target.path == "default":
        targets = need_module("swe_taskflow.targets", "issue 8, the default target")
        return Path(targets.default_target_path())
    return recipe.resolve(recipe.target.path)


def augmentation_table(materials, intents, target, config, selection) -> dict:
    """TFAS (with S_L, S_T, S_R) of the optimized selection without the augmentations, with each kind
    alone, and with all of them: the same search, seed and constraints, only the family differs."""
    import dataclasses

    from swe_taskflow.augment.kinds import AUGMENT_KINDS
    from swe_taskflow.select import select

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


def run(ctx) -> None:
    path = target_path(ctx.recipe)
    if not path.exists():
        raise ConfigError("target file not found", path=str(ctx.recipe.path), field="target.path", actual=str(path))
    target = load_target(path)
    shutil.copyfile(path, ctx.out / "target.json")
    if "tfas_optimized" not in ctx.recipe.conditions.names:
        ctx.summary.update(selected=False, target=target.name)
        return
    from swe_taskflow.select import select

    config = selection_config(ctx.recipe)     # validated when the recipe was loaded
    max_aug = config.max_augments_per_task
    spec = next(s for s in ctx.recipe.splits() if s.condition == "tfas_optimized")
    materials, intents, _ = materials_and_intents(ctx, spec.pool)
    ctx.progress.set_total(len(materials))
    selection = select(materials, intents, target, config)
    rows = selection.rows()
    write_jsonl(ctx.out / "conditions" / "tfas_optimized.jsonl", (r.to_dict() for r in rows))
    write_jsonl(ctx.out / "selection.jsonl", selection.selection_rows())
    report = selection.report()
    if max_aug:
        report["with_and_without_augmentations"] = augmentation_table(materials, intents, target, config, selection)
    write_json(ctx.out / "select_report.json", report)
    ctx.progress.advance(len(materials))
    ctx.summary.update(selected=True, target=target.name, score=report["score"], config_text=report["config_text"],
                       constraints=report["constraints"],
                       sessions_by_questions=report["sessions_by_questions"], placement=report["placement"],
                       questions_by_slot=report["questions_by_slot"])
