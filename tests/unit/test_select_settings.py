"""SelectConfig.from_settings: a recipe's [select] table checked in one place, errors naming file and key."""

from __future__ import annotations

import pytest

from swe_taskflow.errors import ConfigError
from swe_taskflow.select_config import PRESETS, SelectConfig


def test_preset_values_fill_the_keys_the_table_leaves_unset():
    cfg = SelectConfig.from_settings({"preset": "paper", "max_questions": 2, "seed": 5})
    paper = dict(PRESETS["paper"])
    assert cfg.preset == "paper" and cfg.max_questions_per_task == 2 and cfg.seed == 5
    assert cfg.min_full_split_share == paper["min_full_split_share"]
    assert cfg.include_original is paper["include_original"]
    assert cfg == SelectConfig.from_preset("paper", max_questions_per_task=2, seed=5)


def test_without_preset_the_defaults_hold():
    assert SelectConfig.from_settings({}) == SelectConfig()
    assert SelectConfig.from_settings({"restarts": 8}).restarts == 8


@pytest.mark.parametrize("table, field", [
    ({"preset": "nope"}, "select.preset"),
    ({"max_questions": 9}, "select.max_questions"),          # the recipe's spelling, not the field's
    ({"restart": 3}, "select.restart"),
    ({"min_placement_share": 0.5}, "select.min_placement_share"),
    ({"sweeps": 0}, "select.sweeps"),
])
def test_bad_settings_name_the_file_and_the_recipe_key(table, field):
    with pytest.raises(ConfigError) as info:
        SelectConfig.from_settings(table, where="recipe.toml")
    assert info.value.path == "recipe.toml" and info.value.field == field
