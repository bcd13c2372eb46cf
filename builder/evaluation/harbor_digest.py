"""Harbor's content digest of a task folder, computed without Harbor.

Harbor pins each task of a ``dataset.toml`` by ``sha256:<hex>``: a SHA-256 over the task's files
(``task.toml``, ``instruction.md``, ``README.md``, ``trajectory.json`` and everything under
``environment/``, ``tests/``, ``solution/``, ``steps/``), in path order, one ``"<path>\\0<sha256>\\n"``
line each. The harbor-marked tests check this equals ``harbor.publisher.packager.Packager``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from swe_taskflow.hashing import file_sha256

_SINGLE = ("task.toml", "instruction.md", "README.md", "trajectory.json")
_TREES = ("environment", "tests", "solution", "steps")
_IGNORED_SUFFIXES = (".pyc", ".swp", ".swo", "~")


def _ignored(rel: str) -> bool:
    parts = rel.split("/")
    return ("__pycache__" in parts or parts[-1] == ".DS_Store" or parts[-1] == ".harborignore"
            or rel.endswith(_IGNORED_SUFFIXES))


def task_files(task_dir: Path) -> list[str]:
    """The task's files that Harbor hashes, as sorted POSIX paths relative to ``task_dir``."""
    task_dir = Path(task_dir)
    rels = [name for name in _SINGLE if (task_dir / name).is_file()]
    for tree in _TREES:
        root = task_dir / tree
        if root.is_dir():
            rels += [p.relative_to(task_dir).as_posix() for p in root.rglob("*") if p.is_file()]
    return sorted(r for r in rels if not _ignored(r))


def task_digest(task_dir: Path) -> str:
    """``sha256:<hex>`` as Harbor computes it for ``dataset.toml``."""
    outer = hashlib.sha256()
    for rel in task_files(task_dir):
        outer.update(f"{rel}\0{file_sha256(Path(task_dir) / rel)}\n".encode())
    return "sha256:" + outer.hexdigest()


__all__ = ["task_files", "task_digest"]
