"""Stage ``select``: the TFAS-optimized selection against the recipe's target (swe_taskflow.select)."""

from __future__ import annotations

import shutil
from pathlib import Path

from swe_taskflow.errors import ConfigError
from swe_taskflow.jsonl import write_json, write_jsonl
from swe_taskflow.target import load_target

from .assemble import materials_and_intents
from .common import need_module


def target_path(recipe) -> Path:
    if recipe.target.path == "default":
        targets = need_module("swe_taskflow.targets", "issue 8, the default target")
        return Path(targets.default_target_path())
    return recipe.resolve(recipe.target.path)


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

    config = ctx.recipe.select.to_config()    # validated when the recipe was loaded
    spec = next(s for s in ctx.recipe.splits() if s.condition == "tfas_optimized")
    materials, intents, _ = materials_and_intents(ctx, spec.pool)
    ctx.progress.set_total(len(materials))
    selection = select(materials, intents, target, config)
    rows = selection.rows()
    write_jsonl(ctx.out / "conditions" / "tfas_optimized.jsonl", (r.to_dict() for r in rows))
    write_jsonl(ctx.out / "selection.jsonl", selection.selection_rows())
    report = selection.report()
    write_json(ctx.out / "select_report.json", report)
    ctx.progress.advance(len(materials))
    ctx.summary.update(selected=True, target=target.name, score=report["score"], config_text=report["config_text"],
                       constraints=report["constraints"],
                       sessions_by_questions=report["sessions_by_questions"], placement=report["placement"],
                       questions_by_slot=report["questions_by_slot"])
