"""Hashes that name stage inputs and outputs: files and folders (a stage's code: builder.pipeline.code_closure).

A stage's cache key must change exactly when something that determines its output changes, so
every hash here is of canonical bytes (sorted-key JSON, file contents, relative paths), never of
absolute paths, timestamps or pickles.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Iterable

from swe_taskflow.hashing import file_sha256 as sha256_file
from swe_taskflow.hashing import sha256_hex as sha256_bytes
from swe_taskflow.hashing import key_sha256

#: Files under a stage output whose names start with this prefix are kept out of its content hash
#: (wall times, logs): they may differ between two builds of the same inputs.
VOLATILE_PREFIX = "_volatile"
#: The per-stage record written beside its outputs; not part of the content hash either.
STAGE_RECORD = ".stage.json"


def tree_files(root: Path, *, include_volatile: bool = False) -> list[str]:
    """Relative POSIX paths of the files under ``root`` (links to folders too: never entered), sorted;
    the stage record is left out."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        rel_dir = Path(dirpath).relative_to(root)
        links = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        for name in sorted(filenames + links):
            rel = (rel_dir / name).as_posix()
            if rel == STAGE_RECORD:
                continue
            if not include_volatile and rel.split("/", 1)[0].startswith(VOLATILE_PREFIX):
                continue
            out.append(rel)
    return sorted(out)


def entry_sha256(path: Path) -> str:
    """sha256 of a regular file's bytes; a link or special file is never opened (a link to /dev/zero
    or a fifo would never end, one to a host file would read it): ``symlink:<sha256 of its target>``
    or ``special:<mode>``. Folders without either hash as they always did."""
    mode = os.lstat(path).st_mode
    if stat.S_ISLNK(mode):
        return "symlink:" + sha256_bytes(os.readlink(path).encode("utf-8", "surrogateescape"))
    if not stat.S_ISREG(mode):
        return f"special:{stat.S_IFMT(mode):o}"
    return sha256_file(path)


def tree_manifest(root: Path) -> dict[str, str]:
    """``{relative path: sha256}`` of the content files under ``root`` (volatile files excluded; see
    :func:`entry_sha256` for links)."""
    return {rel: entry_sha256(root / rel) for rel in tree_files(root)}


def tree_hash(root: Path) -> str:
    """One hash of a folder's content files and their relative paths."""
    return key_sha256(tree_manifest(root))


def paths_hash(paths: Iterable[Path], base: Path) -> str:
    """Hash of files or folders given relative to ``base`` (names relative, contents exact)."""
    entries = {}
    for p in paths:
        p = Path(p)
        try:
            name = p.resolve().relative_to(base.resolve()).as_posix()
        except ValueError:
            name = p.name
        entries[name] = tree_hash(p) if p.is_dir() else sha256_file(p)
    return key_sha256(entries)


