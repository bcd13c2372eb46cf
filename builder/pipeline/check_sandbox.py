"""The sandbox the creation-time checks of augmentation and stress-test turns run in, set up for a build.

Both stages check turns in the task's sandbox (builder.augment.sandbox) on a checkout of its repository;
this finds the checkouts, the images (the task's own, built locally for a bundled task, else the
project's test image) and the sandbox the recipe's ``[proofs]`` names.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from builder.augment.sandbox import DEFAULT_CONFIG, CheckSandbox
from builder.proofs.image import build_test_image
from swe_taskflow.verify import find_repo

from .repos import build_images, materialize


def sandbox_setup(ctx, tasks, *, timeout_s: float) -> tuple[object | None, dict[str, Path], dict[str, str], dict]:
    """(sandbox, repos by instance id, images by instance id, info) for the tasks sandbox kinds can use:
    those with a test command whose repository is here (a bundled one, or a checkout under repos.path)."""
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


__all__ = ["sandbox_setup"]
