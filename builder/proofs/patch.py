"""A patched copy of a repository for the after-patch run; the original is never touched."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from swe_taskflow.errors import SandboxError

from ..hygiene import scratch_temp
from .gitsafe import git_env, private_git_dir, run


class PatchError(Exception):
    """The gold patch does not apply (an infrastructure problem for the proof, not a failed proof)."""


def patched_copy(repo_dir: str | os.PathLike, patch: str) -> tempfile.TemporaryDirectory:
    """Copy ``repo_dir`` (with ``.git``) to a temp folder and ``git apply`` the patch there.

    ``git apply`` runs with a private git folder (:mod:`.gitsafe`): the copy's own configuration and
    attributes (which could run a filter command) are never read. Returns the TemporaryDirectory;
    the repository is at ``<tmp>/repo``. Raises PatchError.
    """
    tmp = scratch_temp("patched-")
    os.chmod(tmp.name, 0o755)
    dest = Path(tmp.name, "repo")
    try:
        proc = subprocess.run(["cp", "-a", "--reflink=auto", str(Path(repo_dir).resolve()), str(dest)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise PatchError(f"copying the repository failed: {proc.stderr.strip()[:300]}")
        git_dir = private_git_dir(Path(tmp.name, "git"))
        env = git_env(GIT_DIR=str(git_dir), GIT_WORK_TREE=str(dest), GIT_INDEX_FILE=str(Path(tmp.name, "index")))
        # no --index: only the work tree of the copy changes; --unsafe-paths stays off
        try:
            run(["apply", "--whitespace=nowarn", "-"], env, dest, input=patch)
        except SandboxError as exc:
            raise PatchError(f"git apply failed: {exc.message.split(': ', 1)[-1]}") from None
        return tmp
    except BaseException:
        tmp.cleanup()
        raise
