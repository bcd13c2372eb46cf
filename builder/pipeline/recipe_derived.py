"""What a recipe implies beyond its own sections: the target file it names and each split's selection rule.

Shared by the select, write and report stages and by recipe checks, so none of them imports another.
"""

from __future__ import annotations

from pathlib import Path

from swe_taskflow.select_config import describe_split
from swe_taskflow.targets import default_target_path

from .recipe_augment import selection_config


def target_path(recipe) -> Path:
    """The target Task Flow file: the project's default one, or a path relative to the recipe."""
    if recipe.target.path == "default":
        return Path(default_target_path())
    return recipe.resolve(recipe.target.path)


def split_rules(recipe) -> dict[str, str]:
    """Split -> how its candidates were selected (printed beside every TFAS: report, card)."""
    return {s.split: describe_split(s.condition, pool=s.pool, seed=recipe.conditions.seed,
                                    config=selection_config(recipe)) for s in recipe.splits()}
