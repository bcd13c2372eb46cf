"""git on an untrusted repository, with none of the repository's own configuration, attributes or hooks.

A repository's ``.git/config`` can name commands (``filter.<x>.clean``, ``core.fsmonitor``,
``core.hooksPath``...) and its ``.gitattributes`` can apply them to every file: ``git add`` or
``git apply`` run in that repository would execute them on the host, as the caller, unsandboxed.
So git is never pointed at the repository's git folder: it gets a fresh, empty git folder of our
own (:func:`private_git_dir`) whose ``info/attributes`` unsets every attribute that converts or
filters content (it outranks any ``.gitattributes``), no system or global configuration, and the
repository only as a work tree (plus its object store, read as alternates, which runs nothing).

Two uses: :func:`tree_hash` (a git tree id of a working folder, written nowhere in it) and
:func:`patched_copy` (the gold patch applied to a copy, the original never touched).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from swe_taskflow.errors import SandboxError

from swe_taskflow.hygiene import scratch_temp

#: Every attribute through which git would transform (or run a command on) a file's content.
NEUTRAL_ATTRIBUTES = "* -text -eol -crlf -filter -ident -working-tree-encoding -diff -merge -export-subst\n"
#: Options given on every call: nothing from the repository, the user or the system decides behaviour.
SAFE_OPTIONS = ("-c", "safe.directory=*", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
                "-c", "core.attributesFile=/dev/null", "-c", "core.untrackedCache=false",
                "-c", "core.autocrlf=false", "-c", "core.symlinks=true", "-c", "protocol.allow=never")


def git_env(**extra: str) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent", "LC_ALL": "C",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_TERMINAL_PROMPT": "0",
           "GIT_OPTIONAL_LOCKS": "0", "GIT_NO_REPLACE_OBJECTS": "1"}
    env.update(extra)
    return env


def private_git_dir(path: Path) -> Path:
    """An empty bare git folder at ``path`` (no templates, no hooks) whose attributes neutralize the work tree's."""
    run(["init", "-q", "--bare", "--template=", str(path)], git_env(), path.parent)
    (path / "info").mkdir(exist_ok=True)
    (path / "info" / "attributes").write_text(NEUTRAL_ATTRIBUTES)
    return path


def run(args: list[str], env: dict[str, str], cwd: Path, *, input: str | None = None) -> str:
    """One git call with :data:`SAFE_OPTIONS`; a failure is a SandboxError with git's message."""
    if shutil.which("git") is None:
        raise SandboxError("git is not installed: it is needed to hash and patch repositories")
    proc = subprocess.run(["git", *SAFE_OPTIONS, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          input=input, stdin=None if input is not None else subprocess.DEVNULL)
    if proc.returncode != 0:
        raise SandboxError(f"git {args[0]} failed in {cwd}: {proc.stderr.strip()[:300]}", path=str(cwd))
    return proc.stdout.strip()


def tree_hash(repo_dir: str | os.PathLike) -> str:
    """The git tree id of everything under ``repo_dir`` (tracked, untracked and ignored files).

    ``git add`` in the repository itself would rewrite ``.git/index``: the index is a temporary one (seeded
    with a copy of the repository's, for its stat cache). Ignored files are included (``--force``) so that a
    script cannot hide a change behind ``.gitignore``.
    """
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


class PatchError(Exception):
    """The gold patch does not apply (an infrastructure problem for the proof, not a failed proof)."""


def patched_copy(repo_dir: str | os.PathLike, patch: str) -> tempfile.TemporaryDirectory:
    """Copy ``repo_dir`` (with ``.git``) to a temp folder and ``git apply`` the patch there with a private git
    folder; returns the TemporaryDirectory (the repository is at ``<tmp>/repo``). Raises PatchError."""
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


__all__ = ["NEUTRAL_ATTRIBUTES", "PatchError", "SAFE_OPTIONS", "git_env", "patched_copy", "private_git_dir", "run",
           "tree_hash"]
