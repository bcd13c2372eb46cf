"""A release folder opened for evaluation: its manifest, the manifest's hash, and one split's rows."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swe_taskflow.errors import ConfigError, InputError
from swe_taskflow.manifest import Manifest, load_manifest
from swe_taskflow.verify_checks import SESSION_CONFIG


@dataclass(frozen=True)
class Release:
    root: Path
    manifest: Manifest
    manifest_path: Path
    manifest_sha256: str

    def split(self, condition: str):
        entry = self.manifest.split(SESSION_CONFIG, condition)
        if entry is None:
            raise ConfigError("the release has no such condition", path=str(self.root), field="condition",
                              actual=condition,
                              expected=[s.name for s in self.manifest.splits if s.config == SESSION_CONFIG])
        return entry

    def rows(self, condition: str) -> list[dict[str, Any]]:
        """The split's rows in release order, read from its parquet shards."""
        import pyarrow.parquet as pq
        out: list[dict[str, Any]] = []
        for f in self.split(condition).files:
            out.extend(pq.read_table(self.root / f.path).to_pylist())
        return out


def open_release(path: str | os.PathLike) -> Release:
    """The release folder at ``path`` (exactly one manifest under ``manifests/``)."""
    root = Path(path)
    if not root.is_dir():
        raise InputError("release folder not found", path=str(root))
    mfiles = sorted((root / "manifests").glob("*.json"))
    if len(mfiles) != 1:
        raise InputError("release folder must hold exactly one manifest", path=str(root / "manifests"),
                         expected=1, actual=len(mfiles))
    manifest, raw = load_manifest(mfiles[0])
    return Release(root, manifest, mfiles[0], hashlib.sha256(raw).hexdigest())


__all__ = ["Release", "open_release"]
