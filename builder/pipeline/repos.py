"""Repositories (and images) the proofs run against: real checkouts, or a bundled folder made into a git
repository; shared by the questions, proofs and augment stages.

A bundled folder (e.g. the example's ``ticketdesk``) is the repository of the tasks whose ``repo`` is
the recipe's ``repos.bundled_repo``, and only of those. It is committed reproducibly
(builder.bundled.repo), and the commit must be each such task's ``base_commit``. It lives under the
build cache (``work/repos/<content hash>/<owner>__<name>``), outside any stage output, since a
``.git`` folder holds bytes that are not part of the release. Its links stay links, and one that
leaves the folder stops the build with its path (builder.bundled.repo.check_folder).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterable

from builder.bundled import EXAMPLE_INSTANCE_ID, EXAMPLE_RECIPE, BundledTask, bundled_tasks
from builder.bundled.image import build_task_image
from builder.bundled.repo import check_folder, commit_folder
from swe_taskflow.errors import ConfigError

from .folder_hash import tree_hash


def build_images(recipe, tasks) -> dict:
    """Build (or reuse) the local image of every bundled task among ``tasks``: tag -> image id."""
    return {b.task.image_name: build_task_image(b.task, b.files)["image_id"] for b in bundled_tasks(recipe, tasks)}


def materialize(recipe, work: Path, tasks: Iterable) -> tuple[Path, dict]:
    """A ``repos_dir`` with the lookup builder.proofs uses (``<owner>__<name>``), and what it holds.

    ``tasks``: the tasks whose questions need a repository; bundled ones must be at the bundled commit.
    ``work``: the build's work area (builder.pipeline.cache: ``work/``).
    """
    sec = recipe.repos
    if sec.path:
        return recipe.resolve(sec.path), {"kind": "checkouts", "path": sec.path}
    if not sec.bundled:
        raise ConfigError("no repositories configured", path=str(recipe.path), field="repos")
    src = recipe.resolve(sec.bundled)
    if not src.is_dir():
        raise ConfigError("bundled repository folder not found", path=str(src), field="repos.bundled")
    check_folder(src)   # every time, cached or not: a link out of the folder is refused, never followed
    content = tree_hash(src)
    root = work / "repos" / content[:24]
    name = sec.bundled_repo.replace("/", "__")
    if not (root / ".commit").exists():
        work.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".repos-", dir=work))
        (tmp / ".commit").write_text(commit_folder(src, tmp / name) + "\n")
        if root.exists():
            shutil.rmtree(root)
        root.parent.mkdir(parents=True, exist_ok=True)
        os.rename(tmp, root)
    commit = (root / ".commit").read_text().strip()
    for task in tasks:
        if task.repo == sec.bundled_repo and task.base_commit != commit:
            raise ConfigError("the bundled repository's commit is not the task's base_commit", path=str(src),
                              field=f"{task.instance_id}.base_commit", expected=task.base_commit, actual=commit,
                              hint="the files changed since the task row was written (docs/example-task.md)")
    return root, {"kind": "bundled", "bundled": sec.bundled, "repo": sec.bundled_repo, "commit": commit,
                  "content_sha256": content}
def example_task(recipe_path: str | Path = EXAMPLE_RECIPE, instance_id: str = EXAMPLE_INSTANCE_ID) -> BundledTask:
    """The example release's own task (``swe-taskflow__ticketdesk-1``) as its recipe loads it."""
    from builder.sources import load_tasks

    from .recipe import load_recipe

    recipe = load_recipe(recipe_path)
    load = load_tasks(str(recipe.resolve(recipe.source.spec)), source=recipe.source.source or None,
                      revision=recipe.source.revision or None)
    found = [b for b in bundled_tasks(recipe, load.tasks) if b.task.instance_id == instance_id]
    if not found:
        raise ConfigError("no bundled task with this instance id", path=str(recipe_path), field="instance_id",
                          actual=instance_id, hint="its row's repo must equal repos.bundled_repo")
    return found[0]


