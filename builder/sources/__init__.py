"""Source benchmarks: read SWE-Bench Pro / SWE-bench Verified / Lite rows into normalized Tasks.

``load_tasks(spec)`` takes a Hub dataset id, a local file (.jsonl/.json/.parquet/.csv) or a local
folder, reads it through ``datasets.load_dataset`` and returns every row as a
:class:`swe_taskflow.schema.Task` (malformed rows included, with a reason) plus provenance.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Any, Protocol

from swe_taskflow.schema import Task

from .loading import load_rows
from .normalize import SOURCES, decode_list, detect_source, get_source, normalize_row, pro_prompt

__all__ = ["SourceLoad", "TaskSource", "load_tasks", "SOURCES", "decode_list", "normalize_row", "pro_prompt"]


@dataclass(frozen=True)
class SourceLoad:
    """Every input row as a Task (``status`` ok or malformed) and where they came from."""

    tasks: list[Task]
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> list[Task]:
        return [t for t in self.tasks if t.status == "ok"]

    @property
    def malformed(self) -> list[Task]:
        return [t for t in self.tasks if t.status == "malformed"]


def _local_revision(files: list[dict[str, Any]]) -> str:
    h = hashlib.sha256()
    for f in sorted(files, key=lambda f: f["path"]):
        h.update(f"{f['sha256']}\n".encode())
    return "sha256:" + h.hexdigest()


class TaskSource(Protocol):
    """The source seam: a spec (file, folder, Hub id) -> every row as a Task, with provenance."""

    def __call__(self, spec: str | os.PathLike, *, source: str | None = None, revision: str | None = None,
                 split: str = "test", limit: int | None = None) -> SourceLoad: ...


def load_tasks(spec: str | os.PathLike, *, source: str | None = None, revision: str | None = None,
               split: str = "test", limit: int | None = None) -> SourceLoad:
    """Read ``spec`` (a file, folder or Hub id) and normalize its rows; ``limit`` keeps the first N rows (all are reported)."""
    spec = os.fspath(spec)
    if source is not None:
        get_source(source)
    rows, problems, prov = load_rows(spec, revision=revision, split=split)
    if limit is not None:
        rows, problems = rows[:limit], problems[:limit]
    columns: dict[str, None] = {}
    for r in rows:
        if r:
            columns.update(dict.fromkeys(r))
    name = source or detect_source(columns, spec)
    rev = revision or ("main" if prov["kind"] == "hub" else _local_revision(prov["files"]))
    tasks: list[Task] = []
    first_row: dict[str, int] = {}
    for i, (row, problem) in enumerate(zip(rows, problems), start=1):
        if row is None:
            tasks.append(Task(instance_id=f"row-{i}", source=name, source_revision=rev, repo="", base_commit="",
                              original_prompt="", status="malformed", reason=problem))
            continue
        task = normalize_row(row, source=name, revision=rev, row_number=i, where=spec)
        if task.status == "ok" and task.instance_id in first_row:
            task = Task(**{**task.__dict__, "status": "malformed",
                           "reason": f"{spec}: row {i}: field 'instance_id' duplicates row {first_row[task.instance_id]}"})
        first_row.setdefault(task.instance_id, i)
        tasks.append(task)
    prov.update(source=name, revision=rev, rows=len(tasks),
                malformed=sum(1 for t in tasks if t.status == "malformed"))
    return SourceLoad(tasks, prov)
