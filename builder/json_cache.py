"""The one key-to-JSON cache: ``ROOT/<k2>/<key>.json``, one JSON document per key (``k2``: its first two
characters, so no folder grows past a few thousand files), each written atomically.

Its users: the build's per-item cache (``OUT/cache/items/<stage>/``, split results and proof reports) and
the LLM response store. A cache entry that cannot be read is recomputed (:meth:`JsonCache.get`); a record
that is input, such as a committed response store, is an error naming its file (:meth:`JsonCache.load`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from swe_taskflow.errors import InputError
from swe_taskflow.jsonl import write_json


class JsonCache:
    """JSON documents under ``root``, addressed by key (a hex digest)."""

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root)

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def load(self, key: str) -> Any | None:
        """The document of ``key``, None when absent; an InputError naming the file when it cannot be read."""
        path = self.path(key)
        if not path.exists():
            return None
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:   # ValueError: not UTF-8, not JSON
            raise InputError(f"record cannot be read as JSON ({exc})", path=str(path)) from None

    def get(self, key: str) -> Any | None:
        """The document of ``key``, None when absent or damaged (a damaged entry is recomputed)."""
        try:
            return self.load(key)
        except InputError:
            return None

    def put(self, key: str, value: Any) -> Path:
        """Write ``value`` under ``key`` (atomic: a reader sees the old document or the new one)."""
        path = self.path(key)
        write_json(path, value)
        return path

    def __len__(self) -> int:
        return sum(1 for _ in self.root.glob("*/*.json")) if self.root.exists() else 0


__all__ = ["JsonCache"]
