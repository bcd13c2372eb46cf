"""Which tasks of a recipe have their repository bundled as files, and the example's own task."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from swe_taskflow.errors import ConfigError
from swe_taskflow.schema import Task

from builder.resources import builder_path

EXAMPLE_RECIPE = builder_path("releases", "example.toml")
EXAMPLE_INSTANCE_ID = "swe-taskflow__ticketdesk-1"


@dataclass(frozen=True)
class BundledTask:
    """A task and the folder of its repository's files (committed reproducibly at ``task.base_commit``)."""

    task: Task
    files: Path


def bundled_tasks(recipe, tasks) -> list[BundledTask]:
    """The tasks whose ``repo`` is the recipe's ``repos.bundled_repo`` (none without a bundled folder)."""
    sec = recipe.repos
    if not sec.bundled:
        return []
    files = recipe.resolve(sec.bundled)
    return [BundledTask(t, files) for t in tasks if t.status == "ok" and t.repo == sec.bundled_repo]


def example_task(recipe_path: str | Path = EXAMPLE_RECIPE, instance_id: str = EXAMPLE_INSTANCE_ID) -> BundledTask:
    """The example release's own task (``swe-taskflow__ticketdesk-1``) as its recipe loads it."""
    from builder.pipeline.recipe import load_recipe
    from builder.sources import load_tasks

    recipe = load_recipe(recipe_path)
    load = load_tasks(str(recipe.resolve(recipe.source.spec)), source=recipe.source.source or None,
                      revision=recipe.source.revision or None)
    found = [b for b in bundled_tasks(recipe, load.tasks) if b.task.instance_id == instance_id]
    if not found:
        raise ConfigError("no bundled task with this instance id", path=str(recipe_path), field="instance_id",
                          actual=instance_id, hint="its row's repo must equal repos.bundled_repo")
    return found[0]
