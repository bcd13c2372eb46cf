"""A patched copy of a repository for the after-patch run; the original is never touched."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path


class PatchError(Exception):
    """The gold patch does not apply (an infrastructure problem for the proof, not a failed proof)."""


def patched_copy(repo_dir: str | os.PathLike, patch: str) -> tempfile.TemporaryDirectory:
    """Copy ``repo_dir`` (with ``.git``) to a temp folder and ``git apply`` the patch there.

    Returns the TemporaryDirectory; the repository is at ``<tmp>/repo``. Raises PatchError.
    """
    tmp = tempfile.TemporaryDirectory(prefix="swe-taskflow-patched-")
    os.chmod(tmp.name, 0o755)
    dest = Path(tmp.name, "repo")
    try:
        proc = subprocess.run(["cp", "-a", "--reflink=auto", str(Path(repo_dir).resolve()), str(dest)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise PatchError(f"copying the repository failed: {proc.stderr.strip()[:300]}")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent",
               "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "LC_ALL": "C"}
        # --unsafe-paths off, no index update: only the worktree of the copy changes
        proc = subprocess.run(["git", "-c", "safe.directory=*", "apply", "--whitespace=nowarn", "-"],
                              input=patch, cwd=dest, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise PatchError(f"git apply failed: {proc.stderr.strip()[:300]}")
        return tmp
    except BaseException:
        tmp.cleanup()
        raise
