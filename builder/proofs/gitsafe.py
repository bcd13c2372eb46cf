"""git on an untrusted repository, with none of the repository's own configuration, attributes or hooks.

A repository's ``.git/config`` can name commands (``filter.<x>.clean``, ``core.fsmonitor``,
``core.hooksPath``...) and its ``.gitattributes`` can apply them to every file: ``git add`` or
``git apply`` run in that repository would execute them on the host, as the caller, unsandboxed.
So git is never pointed at the repository's git folder: it gets a fresh, empty git folder of our
own (:func:`private_git_dir`) whose ``info/attributes`` unsets every attribute that converts or
filters content (it outranks any ``.gitattributes``), no system or global configuration, and the
repository only as a work tree (plus its object store, read as alternates, which runs nothing).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from swe_taskflow.errors import SandboxError

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


__all__ = ["NEUTRAL_ATTRIBUTES", "SAFE_OPTIONS", "git_env", "private_git_dir", "run"]
