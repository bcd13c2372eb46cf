"""Repositories the proofs run against: real checkouts, or a bundled folder made into a git repository.

A bundled folder (e.g. the example's ``ticketdesk``) is the repository of the tasks whose ``repo`` is
the recipe's ``repos.bundled_repo``, and only of those. It is committed reproducibly
(builder.bundled.repo), and the commit must be each such task's ``base_commit``. It lives under the
build cache (``work/repos/<content hash>/<owner>__<name>``), outside any stage output, since a
``.git`` folder holds bytes that are not part of the release.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterable

from swe_taskflow.errors import ConfigError

from ..hashing import tree_hash


def materialize(recipe, cache_root: Path, tasks: Iterable) -> tuple[Path, dict]:
    """A ``repos_dir`` with the lookup builder.proofs uses (``<owner>__<name>``), and what it holds.

    ``tasks``: the tasks whose questions need a repository; bundled ones must be at the bundled commit.
    """
    from builder.bundled.repo import commit_folder

    sec = recipe.repos
    if sec.path:
        return recipe.resolve(sec.path), {"kind": "checkouts", "path": sec.path}
    if not sec.bundled:
        raise ConfigError("no repositories configured", path=str(recipe.path), field="repos")
    src = recipe.resolve(sec.bundled)
    content = tree_hash(src)
    root = cache_root / "work" / "repos" / content[:24]
    name = sec.bundled_repo.replace("/", "__")
    if not (root / ".commit").exists():
        work = cache_root / "work"
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
