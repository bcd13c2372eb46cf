"""A git tree hash of a working folder, computed without writing anything into it.

``git status`` or ``git add`` would rewrite ``.git/index``; instead git works with a temporary index
(seeded with a copy of the repository's, for its stat cache) and a temporary object directory whose
alternates point at the repository's objects. Ignored files are included (``--force``) so that a
script cannot hide a change behind ``.gitignore``. A folder without ``.git`` gets a throw-away git dir.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from swe_taskflow.errors import SandboxError


def _git_env(extra: dict[str, str]) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "LC_ALL": "C"}
    env.update(extra)
    return env


def _run(args: list[str], env: dict[str, str], cwd: Path) -> str:
    if shutil.which("git") is None:
        raise SandboxError("git is not installed: it is needed to hash the repository tree")
    proc = subprocess.run(["git", "-c", "safe.directory=*", "-c", "core.fsmonitor=false", *args],
                          cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SandboxError(f"git {args[0]} failed in {cwd}: {proc.stderr.strip()[:300]}", path=str(cwd))
    return proc.stdout.strip()


def tree_hash(repo_dir: str | os.PathLike) -> str:
    """The git tree id of everything under ``repo_dir`` (tracked, untracked and ignored files)."""
    repo = Path(repo_dir).resolve()
    if not repo.is_dir():
        raise SandboxError("repository folder not found", path=str(repo))
    with tempfile.TemporaryDirectory(prefix="swe-taskflow-tree-") as tmp:
        tmp_path = Path(tmp)
        dot_git = repo / ".git"
        if dot_git.is_dir():
            objects = tmp_path / "objects"
            objects.mkdir()
            index = tmp_path / "index"
            if (dot_git / "index").is_file():
                # stat cache only; copy2 keeps the mtime that git's racy-entry check compares against
                shutil.copy2(dot_git / "index", index)
            env = _git_env({"GIT_DIR": str(dot_git), "GIT_WORK_TREE": str(repo),
                            "GIT_INDEX_FILE": str(index), "GIT_OBJECT_DIRECTORY": str(objects),
                            "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(dot_git / "objects"),
                            "GIT_OPTIONAL_LOCKS": "0"})
        else:
            git_dir = tmp_path / "git"
            _run(["init", "-q", "--bare", str(git_dir)], _git_env({}), tmp_path)
            env = _git_env({"GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(repo),
                            "GIT_INDEX_FILE": str(tmp_path / "index"), "GIT_OPTIONAL_LOCKS": "0"})
        _run(["add", "--all", "--force", "."], env, repo)
        return _run(["write-tree"], env, repo)
