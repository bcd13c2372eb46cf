"""Repositories the proofs run against: real checkouts, or the bundled stand-in made into a git repository.

The stand-in is a folder of files shipped with a recipe (e.g. the example's ``ticketdesk``); it is
committed with fixed author, committer and dates so its tree and commit hashes are the same on
every machine. It lives under the build cache (``work/repos/<content hash>``), outside any stage
output, since a ``.git`` folder holds bytes (the index) that are not reproducible.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Iterable

from swe_taskflow.errors import ConfigError
from swe_taskflow.safepath import is_inside

from ..hashing import tree_hash

_GIT_ENV = {"GIT_AUTHOR_NAME": "swe-taskflow", "GIT_AUTHOR_EMAIL": "build@swe-taskflow.invalid",
            "GIT_COMMITTER_NAME": "swe-taskflow", "GIT_COMMITTER_EMAIL": "build@swe-taskflow.invalid",
            "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "HOME": "/nonexistent"}


def _git(args: list[str], cwd: Path) -> str:
    env = {**{k: v for k, v in os.environ.items() if k in ("PATH", "LANG")}, **_GIT_ENV}
    proc = subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args],
                          cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ConfigError(f"git {' '.join(args)} failed: {proc.stderr.strip()[:300]}", path=str(cwd))
    return proc.stdout.strip()


def standin_repo(src: Path, dest: Path) -> str:
    """Copy ``src`` to ``dest`` and commit it reproducibly; returns the commit id."""
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".git", "__pycache__", "*.pyc"))
    _git(["init", "-q"], dest)
    _git(["add", "-A"], dest)
    _git(["commit", "-q", "-m", "stand-in repository (swe-taskflow example)"], dest)
    return _git(["rev-parse", "HEAD"], dest)


def materialize(recipe, cache_root: Path, instance_ids: Iterable[str]) -> tuple[Path, dict]:
    """A ``repos_dir`` with one folder per instance id (the lookup builder.proofs uses), and what it holds."""
    ids = sorted(set(instance_ids))
    sec = recipe.repos
    if sec.path:
        root = recipe.resolve(sec.path)
        return root, {"kind": "checkouts", "path": sec.path}
    if not sec.bundled:
        raise ConfigError("no repositories configured", path=str(recipe.path), field="repos")
    src = recipe.resolve(sec.bundled)
    content = tree_hash(src)
    root = cache_root / "work" / "repos" / content[:24]
    done = root / ".complete"
    if not done.exists() or set(done.read_text().split()) != set(ids):
        work = cache_root / "work"
        work.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".repos-", dir=work))
        commit = ""
        for iid in ids:
            if is_inside(tmp, iid):   # an id that would leave the folder is refused by the proofs runner
                commit = standin_repo(src, tmp / iid)
        (tmp / ".complete").write_text("\n".join(ids) + "\n")
        (tmp / ".commit").write_text(commit + "\n")
        if root.exists():
            shutil.rmtree(root)
        root.parent.mkdir(parents=True, exist_ok=True)
        os.rename(tmp, root)
    commit = (root / ".commit").read_text().strip() if (root / ".commit").exists() else ""
    return root, {"kind": "stand-in", "bundled": sec.bundled, "content_sha256": content, "commit": commit,
                  "note": "one bundled repository stands in for every task's repository (real ones cannot be "
                          "fetched offline); questions and proofs are about it, not about the tasks' repositories"}
