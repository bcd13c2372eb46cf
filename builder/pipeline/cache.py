"""The build cache: one folder, one layout, safe against ``kill -9``.

Layout of ``CACHE`` (``OUT/cache`` by default)::

    stages/<stage>/<key>/      a finished stage's outputs (builder.pipeline.stage_data), summary.json
                               and its record .stage.json; written only by the runner
    items/<name>/<k2>/<k>.json one finished item (a split, a proof report) keyed by its input hash k
                               (k2: its first two hex digits; builder.json_cache.JsonCache); ``labels``
                               (one JSON Lines file per classifier) is shared by both classify stages
    work/repos/<content>/      persistent scratch: stand-in repositories committed for proofs
    tmp/<stage>-*/             a running stage's private folder, renamed into stages/ when it ends
    .lock                      one build at a time

A stage writes into a private temporary folder; only when it has finished is that folder renamed
(one atomic ``rename``) to ``stages/<stage>/<key>``, with its record (``.stage.json``) inside. So a
stage folder either exists complete or not at all, whatever moment a build is killed at. Items
finished inside an interrupted stage (one label, one proof) are kept in ``items/<stage>/`` as
atomically written files, so a rerun redoes only what was not finished.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from swe_taskflow.errors import ConfigError

from swe_taskflow.atomic import write_bytes as atomic_write_bytes

from swe_taskflow.owned import owned_temp_dir, swap_dir
from ..json_cache import JsonCache
from .folder_hash import STAGE_RECORD, tree_hash, tree_manifest


class StageCache:
    """Stage outputs under ``root`` (``stages/``, ``items/``, ``tmp/``), with a lock for one build at a time."""

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root)
        self._lock_fh = None

    # -- locking -------------------------------------------------------------------------------
    def lock(self) -> None:
        """Take the cache for this process; a second concurrent build on it fails clearly."""
        self.root.mkdir(parents=True, exist_ok=True)
        fh = open(self.root / ".lock", "a+")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.close()
            raise ConfigError("another build is using this cache", path=str(self.root),
                              hint="wait for it to finish or use another --out/--cache") from None
        self._lock_fh = fh
        # Whoever held the lock before us is gone: its temporary folders are debris.
        shutil.rmtree(self.root / "tmp", ignore_errors=True)
        for stale in (self.root / "work").glob(".repos-*"):   # half-built stand-in repositories
            shutil.rmtree(stale, ignore_errors=True)

    def unlock(self) -> None:
        if self._lock_fh is not None:
            fcntl.flock(self._lock_fh, fcntl.LOCK_UN)
            self._lock_fh.close()
            self._lock_fh = None

    # -- stages --------------------------------------------------------------------------------
    def stage_dir(self, name: str, key: str) -> Path:
        return self.root / "stages" / name / key

    def lookup(self, name: str, key: str) -> dict[str, Any] | None:
        """The record of a finished stage output, or None (absent or damaged: it will be rebuilt)."""
        try:
            record = json.loads((self.stage_dir(name, key) / STAGE_RECORD).read_text(encoding="utf-8"))
        except (ValueError, OSError):
            return None
        return record if record.get("key") == key and record.get("stage") == name else None

    def verify(self, name: str, key: str, record: dict[str, Any]) -> bool:
        """Whether the files on disk still hash to what the record says (someone may have edited them)."""
        return tree_manifest(self.stage_dir(name, key)) == record.get("files")

    def new_tmp(self, name: str) -> Path:
        (self.root / "tmp").mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.root / "tmp"))

    def commit(self, name: str, key: str, tmp: Path, record: dict[str, Any]) -> dict[str, Any]:
        """Hash ``tmp``, write its record, and move it into place in one rename."""
        files = tree_manifest(tmp)
        record = {**record, "stage": name, "key": key, "files": files, "output_hash": tree_hash(tmp)}
        atomic_write_bytes(tmp / STAGE_RECORD, json.dumps(record, indent=2, sort_keys=True).encode("utf-8"))
        final = self.stage_dir(name, key)
        final.parent.mkdir(parents=True, exist_ok=True)
        if final.exists():  # a damaged earlier copy
            shutil.rmtree(final)
        os.rename(tmp, final)
        _fsync_dir(final.parent)
        return record

    def items(self, name: str) -> JsonCache:
        return JsonCache(self.root / "items" / name)

    def work_dir(self) -> Path:
        """Persistent scratch shared by stages (``work/``): what is there is keyed by its own content."""
        return self.root / "work"


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def replace_dir(src: Path, dest: Path) -> None:
    """Copy ``src`` to ``dest`` so that ``dest`` is always either the old or the new complete copy."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    # owned names: what a killed build leaves is swept by the next command (swe_taskflow.owned)
    tmp = owned_temp_dir(f".{dest.name}.tmp-", dest.parent)
    try:
        shutil.rmtree(tmp)
        shutil.copytree(src, tmp, ignore=shutil.ignore_patterns(STAGE_RECORD))
        swap_dir(tmp, dest)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)