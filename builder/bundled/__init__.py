"""Tasks whose repository ships with the project as plain files (the example's ``ticketdesk``).

``repo`` makes the files a git repository with a reproducible commit; ``image`` builds the task's
container image locally (no registry); ``check`` runs the task's test command and grades it. Here: which
tasks of a recipe have their repository bundled, and the example's own task.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from swe_taskflow.schema import Task

from ..resources import builder_path

from .repo import check_folder, commit_folder, git_tree

__all__ = ["check_folder", "commit_folder", "git_tree", "BundledTask", "bundled_tasks", "EXAMPLE_RECIPE",
           "EXAMPLE_INSTANCE_ID"]

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
