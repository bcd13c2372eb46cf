"""A folder of files made into a git repository whose commit id is the same on every machine.

Fixed author, committer, dates, message and branch, no templates (no sample hooks), and an index
rebuilt from the tree with empty stat data (``git read-tree``), so the repository's bytes do not
depend on when or where it was made (loose objects aside: zlib's output can vary across versions,
their content cannot). The commit id is what a bundled task names as its ``base_commit``.

Symbolic links are kept as links, as git keeps them (their target text is the blob). Copying one by
its content would pull whatever it points at into the repository: a link to ``/etc/shadow`` became a
regular file holding the host's file (issue 25). So a folder whose links are absolute or resolve
outside it, or that holds a fifo, socket or device (git has no form for them), is refused before
anything is read or copied, with one error naming every such entry.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import stat
import subprocess
from pathlib import Path

from swe_taskflow.errors import ConfigError

GIT_ENV = {"GIT_AUTHOR_NAME": "swe-taskflow", "GIT_AUTHOR_EMAIL": "build@swe-taskflow.invalid",
           "GIT_COMMITTER_NAME": "swe-taskflow", "GIT_COMMITTER_EMAIL": "build@swe-taskflow.invalid",
           "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "HOME": "/nonexistent", "LC_ALL": "C"}
COMMIT_MESSAGE = "Initial import (swe-taskflow bundled repository)"
IGNORED = ("__pycache__", "*.pyc", ".git")
#: Entries an error about a folder lists by name (the count says how many more).
SHOWN = 20


def git(args: list[str], cwd: Path, *, input: str | None = None) -> str:
    """Run git with the fixed identity; ConfigError naming the folder when it fails."""
    env = {**{k: v for k, v in os.environ.items() if k == "PATH"}, **GIT_ENV}
    proc = subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false",
                           "-c", "core.autocrlf=false", "-c", "safe.directory=*", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, input=input)
    if proc.returncode != 0:
        raise ConfigError(f"git {' '.join(args)} failed: {proc.stderr.strip()[:300]}", path=str(cwd))
    return proc.stdout.strip()


def _ignored(name: str) -> bool:
    return any(fnmatch.fnmatch(name, pattern) for pattern in IGNORED)


def _link_problem(link: Path, rel: str, root: Path) -> str:
    """Why the link at ``link`` (``rel`` inside ``root``) cannot be kept, or "" when it can."""
    target = os.readlink(link)
    if os.path.isabs(target):
        return f"{rel} -> {target} (absolute)"
    lexical = os.path.normpath(os.path.join(os.path.dirname(rel), target))
    if lexical == ".." or lexical.startswith("../"):   # leaves by name: a copy elsewhere would point out
        return f"{rel} -> {target} (leaves the folder)"
    resolved = Path(os.path.realpath(link))           # every link of a chain followed
    if resolved != root and root not in resolved.parents:
        return f"{rel} -> {target} (resolves to {resolved}, outside the folder)"
    return ""


def check_folder(src: Path) -> None:
    """Refuse ``src`` when a link in it (a file or a folder link) is absolute or resolves outside it,
    or when it holds a fifo, socket or device: one ConfigError naming every such entry (its path is
    the first). Nothing is followed or read; entries :func:`commit_folder` leaves out are not looked at."""
    src = Path(src)
    root = Path(os.path.realpath(src))
    bad: list[str] = []
    first = ""
    for dirpath, dirnames, filenames in os.walk(src):   # never descends into a folder link
        dirnames[:] = sorted(d for d in dirnames if not _ignored(d))
        for name in sorted(dirnames + [f for f in filenames if not _ignored(f)]):
            path = Path(dirpath, name)
            rel = path.relative_to(src).as_posix()
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                problem = _link_problem(path, rel, root)
            elif stat.S_ISREG(mode) or stat.S_ISDIR(mode):
                problem = ""
            else:
                problem = f"{rel} (not a file, folder or link: git cannot hold it)"
            if problem:
                bad.append(problem)
                first = first or str(path)
    if bad:
        shown = "; ".join(bad[:SHOWN]) + (f"; and {len(bad) - SHOWN} more" if len(bad) > SHOWN else "")
        raise ConfigError(f"the bundled repository folder {src} has {len(bad)} "
                          f"entr{'y' if len(bad) == 1 else 'ies'} git would not keep inside it: {shown}", path=first,
                          hint="a link must be relative and point inside the folder (git keeps it as a link)")


def commit_folder(src: Path, dest: Path, *, message: str = COMMIT_MESSAGE) -> str:
    """Copy ``src`` to ``dest`` (new folder), links as links, and commit it reproducibly; returns the commit id.

    ``src`` is checked first (:func:`check_folder`): a link leaving it is a ConfigError, never a copy of its target.
    """
    src, dest = Path(src), Path(dest)
    if not src.is_dir():
        raise ConfigError("bundled repository folder not found", path=str(src))
    check_folder(src)
    shutil.copytree(src, dest, symlinks=True, ignore=shutil.ignore_patterns(*IGNORED))
    git(["init", "-q", "--template="], dest)
    git(["add", "-A"], dest)
    git(["commit", "-q", "--no-verify", "-m", message], dest)
    (dest / ".git" / "index").unlink()
    git(["read-tree", "HEAD"], dest)    # an index without this machine's stat data
    return git(["rev-parse", "HEAD"], dest)


def git_tree(repo: Path, rev: str = "HEAD") -> str:
    """The tree id of ``rev`` (what a proof report's ``tree_sha_before`` holds for a clean checkout)."""
    return git(["rev-parse", f"{rev}^{{tree}}"], Path(repo))
