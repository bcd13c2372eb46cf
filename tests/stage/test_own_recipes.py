"""A maintainer's own recipe, kept anywhere, points at shipped data with ``builder:`` paths (docs/build.md)."""

from __future__ import annotations

from pathlib import Path

from builder.pipeline.build import build
from builder.pipeline.recipe import load_recipe, preflight
from builder.resources import builder_path

EXAMPLE = builder_path("releases", "example.toml")


def test_a_recipe_outside_the_package_uses_shipped_data(tmp_path):
    """A copy of example.toml outside builder/releases/ lost its ``../data`` paths; ``builder:data/...`` keeps them."""
    mine = tmp_path / "recipes" / "mine.toml"
    mine.parent.mkdir()
    mine.write_text(EXAMPLE.read_text(encoding="utf-8").replace('"../data/', '"builder:data/'), encoding="utf-8")
    recipe = load_recipe(mine)
    preflight(recipe)
    assert recipe.resolve(recipe.source.spec) == builder_path("data", "example", "tasks.jsonl").resolve()
    assert recipe.resolve(recipe.repos.bundled) == Path(builder_path("data", "example", "repo")).resolve()
    outcome = build(mine, tmp_path / "out", dry_run=True)
    assert outcome.dry_run and len(outcome.results) == 13
