"""Hashes that name stage inputs and outputs: canonical JSON, files, folders and code.

A stage's cache key must change exactly when something that determines its output changes, so
every hash here is of canonical bytes (sorted-key JSON, file contents, relative paths), never of
absolute paths, timestamps or pickles.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from swe_taskflow.hashing import file_sha256 as sha256_file
from swe_taskflow.hashing import sha256_json

#: Files under a stage output whose names start with this prefix are kept out of its content hash
#: (wall times, logs): they may differ between two builds of the same inputs.
VOLATILE_PREFIX = "_volatile"
#: The per-stage record written beside its outputs; not part of the content hash either.
STAGE_RECORD = ".stage.json"


def tree_files(root: Path, *, include_volatile: bool = False) -> list[str]:
    """Relative POSIX paths of the regular files under ``root``, sorted; the stage record is left out."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        rel_dir = Path(dirpath).relative_to(root)
        for name in sorted(filenames):
            rel = (rel_dir / name).as_posix()
            if rel == STAGE_RECORD:
                continue
            if not include_volatile and rel.split("/", 1)[0].startswith(VOLATILE_PREFIX):
                continue
            out.append(rel)
    return sorted(out)


def tree_manifest(root: Path) -> dict[str, str]:
    """``{relative path: sha256}`` of the content files under ``root`` (volatile files excluded)."""
    return {rel: sha256_file(root / rel) for rel in tree_files(root)}


def tree_hash(root: Path) -> str:
    """One hash of a folder's content files and their relative paths."""
    return sha256_json(tree_manifest(root))


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
    return sha256_json(entries)


