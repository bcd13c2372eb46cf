"""A folder of files made into a git repository whose commit id is the same on every machine.

Fixed author, committer, dates, message and branch, no templates (no sample hooks), and an index
rebuilt from the tree with empty stat data (``git read-tree``), so the repository's bytes do not
depend on when or where it was made (loose objects aside: zlib's output can vary across versions,
their content cannot). The commit id is what a bundled task names as its ``base_commit``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from swe_taskflow.errors import ConfigError

GIT_ENV = {"GIT_AUTHOR_NAME": "swe-taskflow", "GIT_AUTHOR_EMAIL": "build@swe-taskflow.invalid",
           "GIT_COMMITTER_NAME": "swe-taskflow", "GIT_COMMITTER_EMAIL": "build@swe-taskflow.invalid",
           "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "HOME": "/nonexistent", "LC_ALL": "C"}
COMMIT_MESSAGE = "Initial import (swe-taskflow bundled repository)"
IGNORED = ("__pycache__", "*.pyc", ".git")


def git(args: list[str], cwd: Path, *, input: str | None = None) -> str:
    """Run git with the fixed identity; ConfigError naming the folder when it fails."""
    env = {**{k: v for k, v in os.environ.items() if k == "PATH"}, **GIT_ENV}
    proc = subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false",
                           "-c", "core.autocrlf=false", "-c", "safe.directory=*", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, input=input)
    if proc.returncode != 0:
        raise ConfigError(f"git {' '.join(args)} failed: {proc.stderr.strip()[:300]}", path=str(cwd))
    return proc.stdout.strip()


def commit_folder(src: Path, dest: Path, *, message: str = COMMIT_MESSAGE) -> str:
    """Copy ``src`` to ``dest`` (new folder) and commit it reproducibly; returns the commit id."""
    src, dest = Path(src), Path(dest)
    if not src.is_dir():
        raise ConfigError("bundled repository folder not found", path=str(src))
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(*IGNORED))
    git(["init", "-q", "--template="], dest)
    git(["add", "-A"], dest)
    git(["commit", "-q", "--no-verify", "-m", message], dest)
    (dest / ".git" / "index").unlink()
    git(["read-tree", "HEAD"], dest)    # an index without this machine's stat data
    return git(["rev-parse", "HEAD"], dest)


def git_tree(repo: Path, rev: str = "HEAD") -> str:
    """The tree id of ``rev`` (what a proof report's ``tree_sha_before`` holds for a clean checkout)."""
    return git(["rev-parse", f"{rev}^{{tree}}"], Path(repo))
