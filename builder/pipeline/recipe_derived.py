"""What a recipe implies beyond its own sections: the target it names, the selection's configuration and
each split's selection rule.

Shared by the select, write and report stages and by recipe checks, so none of them imports another.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from swe_taskflow.errors import ConfigError, TaskflowError
from swe_taskflow.select_config import SelectConfig, describe_split
from swe_taskflow.target import default_target_path


def recipe_target_path(recipe) -> Path:
    """The target Task Flow file: the project's default one, or a path relative to the recipe."""
    if recipe.target.path == "default":
        return Path(default_target_path())
    return recipe.resolve(recipe.target.path)


def recipe_target(recipe):
    """The recipe's target, loaded: the one place its content is checked (preflight and the select stage;
    that the file exists is checked with the ``target.path`` declaration). Errors name the recipe and key."""
    from swe_taskflow.target import load_target

    try:
        return load_target(recipe_target_path(recipe))
    except TaskflowError as exc:
        raise ConfigError(str(exc), path=str(recipe.path), field="target.path") from None


def selection_config(recipe) -> SelectConfig:
    """The TFAS-optimized selection's config: the [select] section's, admitting ``augmentations.max_per_session``
    augmentation turns per session when [augmentations] names kinds (one place for stages and provenance)."""
    sec = recipe.augmentations
    return dataclasses.replace(recipe.select, max_augments_per_session=sec.max_per_session if sec.kinds else 0)


def split_rules(recipe) -> dict[str, str]:
    """Split -> how its candidates were selected (printed beside every TFAS: report, card)."""
    return {s.split: describe_split(s.condition, pool=s.pool, seed=recipe.conditions.seed,
                                    config=selection_config(recipe)) for s in recipe.splits()}
