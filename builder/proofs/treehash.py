"""A git tree hash of a working folder, computed without writing anything into it or running its code.

``git status`` or ``git add`` in the repository would rewrite ``.git/index`` and obey the repository's
own configuration and attributes (a ``filter.<x>.clean`` there runs on the host). Instead git works
in a private git folder (:mod:`.gitsafe`) with the repository as its work tree, a temporary index
(seeded with a copy of the repository's, for its stat cache) and a temporary object directory whose
alternates point at the repository's objects. Ignored files are included (``--force``) so that a
script cannot hide a change behind ``.gitignore``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from swe_taskflow.errors import SandboxError

from ..hygiene import scratch_temp
from .gitsafe import git_env, private_git_dir, run


def tree_hash(repo_dir: str | os.PathLike) -> str:
    """The git tree id of everything under ``repo_dir`` (tracked, untracked and ignored files)."""
    repo = Path(repo_dir).resolve()
    if not repo.is_dir():
        raise SandboxError("repository folder not found", path=str(repo))
    with scratch_temp("tree-") as tmp:
        tmp_path = Path(tmp)
        git_dir = private_git_dir(tmp_path / "git")
        env = git_env(GIT_DIR=str(git_dir), GIT_WORK_TREE=str(repo), GIT_INDEX_FILE=str(tmp_path / "index"))
        dot_git = repo / ".git"
        if dot_git.is_dir() and not dot_git.is_symlink():
            if (dot_git / "objects").is_dir():   # read-only alternates: blobs git already has are not rewritten
                env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = str(dot_git / "objects")
            if (dot_git / "index").is_file() and not (dot_git / "index").is_symlink():
                # stat cache only; copy2 keeps the mtime that git's racy-entry check compares against
                shutil.copy2(dot_git / "index", tmp_path / "index")
        try:
            run(["add", "--all", "--force", "."], env, repo)
        except SandboxError:
            if not (tmp_path / "index").exists():
                raise
            (tmp_path / "index").unlink()   # an index git cannot use: hash every file afresh
            run(["add", "--all", "--force", "."], env, repo)
        return run(["write-tree"], env, repo)
