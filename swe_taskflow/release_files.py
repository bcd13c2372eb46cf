"""The files of a release folder: regular files only, and where a release folder begins.

A release is published byte for byte, so every file in it must be a regular file inside it. A
symbolic link (even to an identical copy elsewhere), a FIFO (reading it blocks forever), a socket
or a device is a finding, never read; a link loop is a finding, never a traceback.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Sequence

from .errors import VerifyError
from .hashing import file_sha256
from .manifest import FORMAT as MANIFEST_FORMAT, FileEntry

#: Files a Hub checkout or download adds that are not part of a release.
IGNORED = (re.compile(r"^\.git(/|$)"), re.compile(r"^\.gitattributes$"), re.compile(r"^\.cache(/|$)"),
           re.compile(r"(^|/)\.DS_Store$"))


def is_ignored(rel: str) -> bool:
    return any(p.search(rel) for p in IGNORED)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a regular file"


def inventory(root: Path, *, skip: Sequence[str] = ()) -> tuple[dict[str, FileEntry], list[VerifyError]]:
    """Every regular file under ``root`` (posix paths relative to it) with its sha256 and size, and a
    finding for every entry that is not a regular file or folder (nothing behind it is opened)."""
    out: dict[str, FileEntry] = {}
    errors: list[VerifyError] = []
    for dirpath, dirnames, filenames in os.walk(root):   # never follows links to folders
        for name in sorted(dirnames + filenames):
            p = Path(dirpath) / name
            rel = p.relative_to(root).as_posix()
            if is_ignored(rel) or rel in skip:
                if name in dirnames:
                    dirnames.remove(name)
                continue
            try:
                st = os.lstat(p)
            except OSError as exc:
                errors.append(VerifyError(f"cannot be read ({exc.strerror})", kind="unexpected", path=rel))
                continue
            if stat.S_ISDIR(st.st_mode):
                continue
            if not stat.S_ISREG(st.st_mode):
                what = _kind(st.st_mode)
                if what == "a symbolic link":
                    what += f" to {os.readlink(p)!r}"
                errors.append(VerifyError(f"is {what}, not a regular file; a release holds regular files only",
                                          kind="unexpected", path=rel))
                continue
            out[rel] = FileEntry(rel, file_sha256(p), st.st_size)
        dirnames[:] = sorted(d for d in dirnames if stat.S_ISDIR(os.lstat(Path(dirpath) / d).st_mode))
    return out, errors


def regular_file(root: Path, rel: str) -> bool:
    """Whether ``root/rel`` is a regular file reached without following a link."""
    p = root
    for part in Path(rel).parts:
        p = p / part
        try:
            mode = os.lstat(p).st_mode
        except OSError:
            return False
        if stat.S_ISLNK(mode):
            return False
    return stat.S_ISREG(mode)


def is_release_root(path: Path) -> bool:
    """A folder holding exactly one manifest (``manifests/<name>-<version>.json``) of its own name and at
    least one of its data files: a release folder (the project's ``manifests/`` is not one)."""
    mdir = path / "manifests"
    if not mdir.is_dir() or not (path / "README.md").is_file():
        return False
    found = [p for p in mdir.glob("*.json") if not p.name.endswith(".published.json")]
    if len(found) != 1 or not regular_file(path, f"manifests/{found[0].name}"):
        return False
    try:
        doc = json.loads(found[0].read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(doc, dict) or doc.get("format") != MANIFEST_FORMAT \
            or f"{doc.get('name')}-{doc.get('version')}.json" != found[0].name:
        return False
    files = [f.get("path") for s in doc.get("splits") or [] if isinstance(s, dict)
             for f in s.get("files") or [] if isinstance(f, dict)]
    return any(isinstance(f, str) and (path / f).is_file() for f in files)


def release_containing(path: str | os.PathLike) -> Path | None:
    """The release folder that ``path`` (existing or not) is, or lies inside; None when there is none."""
    p = Path(os.path.abspath(path))
    for folder in (p, *p.parents):
        if folder.is_dir() and is_release_root(folder):
            return folder
    return None


__all__ = ["IGNORED", "is_ignored", "inventory", "regular_file", "is_release_root", "release_containing"]
