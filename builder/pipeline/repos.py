"""Repositories (and images) the proofs and checks run against: real checkouts, or a bundled folder made into a
git repository; shared by the questions, proofs, augment and stress stages.

A bundled folder (e.g. the example's ``ticketdesk``) is the repository of the tasks whose ``repo`` is
the recipe's ``repos.bundled_repo``, and only of those. It is committed reproducibly
(builder.bundled.repo), and the commit must be each such task's ``base_commit``. It lives under the
build cache (``work/repos/<content hash>/<owner>__<name>``), outside any stage output, since a
``.git`` folder holds bytes that are not part of the release. Its links stay links, and one that
leaves the folder stops the build with its path (builder.bundled.repo.check_folder).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterable

from ..bundled import EXAMPLE_INSTANCE_ID, EXAMPLE_RECIPE, BundledTask, bundled_tasks
from ..bundled.image import build_task_image
from ..bundled.repo import check_folder, commit_folder
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


def sandbox_setup(ctx, tasks, *, timeout_s: float) -> tuple[object | None, dict[str, Path], dict[str, str], dict]:
    """The sandbox the creation-time checks of augmentation and stress-test turns run in (builder.turns.sandbox,
    the one ``[proofs]`` names): (sandbox, repos by instance id, images by instance id, info) for the tasks sandbox
    kinds can use: those with a test command whose repository is here (a bundled one, or a checkout under
    repos.path). Images: the task's own (built locally for a bundled task), else the project's test image."""
    from ..turns.sandbox import DEFAULT_CONFIG, CheckSandbox
    from ..proofs.image import build_test_image
    from swe_taskflow.verify import find_repo

    recipe = ctx.recipe
    want = [t for t in tasks if t.test_command]
    if not want or not recipe.proofs.enabled or not (recipe.repos.bundled or recipe.repos.path):
        return None, {}, {}, {"sandbox": "none", "tasks": 0}
    root, info = materialize(recipe, ctx.work, want)
    repos = {t.instance_id: p for t in want
             if (p := find_repo(root, {"instance_id": t.instance_id, "repo": t.repo})) is not None}
    if not repos:
        return None, {}, {}, {"sandbox": "none", "tasks": 0, "repos": info.get("kind")}
    sandbox = CheckSandbox(recipe.proofs.sandbox, image=recipe.proofs.image or None,
                           config=dataclasses.replace(DEFAULT_CONFIG, timeout_s=float(timeout_s)),
                           environment=recipe.proofs.environment, environment_kwargs=recipe.proofs.environment_kwargs)
    built = {}
    if sandbox.kind in ("docker", "harbor") and not sandbox.image:
        built = build_images(recipe, [t for t in want if t.instance_id in repos])
    images = {t.instance_id: sandbox.image_for(t.image_name) or "" for t in want if t.instance_id in repos}
    missing = sorted(i for i, img in images.items() if sandbox.kind in ("docker", "harbor") and not img)
    if missing:   # no image of its own and none configured: the project's small test image
        test_image = build_test_image()["tag"]
        images.update({i: test_image for i in missing})
    return sandbox, repos, images, {**sandbox.info, "tasks": len(repos), "repos": info.get("kind"),
                                    "images": dict(sorted(images.items())), "images_built": built}


def example_task(recipe_path: str | Path = EXAMPLE_RECIPE, instance_id: str = EXAMPLE_INSTANCE_ID) -> BundledTask:
    """The example release's own task (``swe-taskflow__ticketdesk-1``) as its recipe loads it."""
    from ..sources import load_tasks

    from .recipe import load_recipe

    recipe = load_recipe(recipe_path)
    load = load_tasks(str(recipe.resolve(recipe.source.spec)), source=recipe.source.source or None,
                      revision=recipe.source.revision or None)
    found = [b for b in bundled_tasks(recipe, load.tasks) if b.task.instance_id == instance_id]
    if not found:
        raise ConfigError("no bundled task with this instance id", path=str(recipe_path), field="instance_id",
                          actual=instance_id, hint="its row's repo must equal repos.bundled_repo")
    return found[0]


