"""Source benchmarks: read SWE-Bench Pro / SWE-bench Verified / Lite rows into normalized Tasks.

``load_tasks(spec)`` takes a Hub dataset id, a local file (.jsonl/.json/.parquet/.csv) or a local
folder, reads it through ``datasets.load_dataset`` and returns every row as a
:class:`swe_taskflow.schema.Task` (malformed rows included, with a reason) plus provenance (what was read,
which revision, each file's sha256). Local JSON Lines that ``datasets`` refuses (a line that is not JSON, a
column whose type differs between rows) are re-read line by line so that every row still gets a status.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from swe_taskflow.errors import InputError
from swe_taskflow.hashing import file_sha256
from swe_taskflow.jsonl import decode, iter_lines, parse_line
from swe_taskflow.schema import Task

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


HUB_ID_RE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_BUILDERS = {".jsonl": "json", ".json": "json", ".parquet": "parquet", ".csv": "csv"}


def _file_entry(path: Path) -> dict[str, Any]:
    return {"path": str(path), "sha256": file_sha256(path), "bytes": path.stat().st_size}


def _lines_fallback(path: Path) -> tuple[list[dict[str, Any] | None], list[str]]:
    """Each line as a dict, or None with its problem (so that the row is reported, not lost)."""
    rows: list[dict[str, Any] | None] = []
    problems: list[str] = []
    for lineno, raw in iter_lines(path):
        if not raw.strip():
            continue
        try:
            rows.append(parse_line(decode(raw, path=str(path), row=lineno), path=str(path), row=lineno))
            problems.append("")
        except InputError as exc:
            rows.append(None)
            problems.append(f"{path}: line {lineno}: {exc.message}")
    return rows, problems


def _load(*args: Any, **kw: Any):
    import datasets
    datasets.disable_progress_bars()
    return datasets.load_dataset(*args, **kw)


def _pick_split(dd, split: str, where: str):
    names = list(dd.keys())
    if split in dd:
        return dd[split], split
    if len(names) == 1:
        return dd[names[0]], names[0]
    raise InputError("split not found", path=where, field="split", expected=names, actual=split)


def load_rows(spec: str, *, revision: str | None = None, split: str = "test"
              ) -> tuple[list[dict[str, Any] | None], list[str], dict[str, Any]]:
    """Rows (None for an unreadable line), per-row load problems ('' if none), and provenance."""
    import datasets

    path = Path(spec)
    prov: dict[str, Any] = {"spec": spec, "requested_split": split, "datasets_version": datasets.__version__,
                            "hf_hub_offline": os.environ.get("HF_HUB_OFFLINE", "")}
    if path.is_file():
        rows, problems = _load_file(path, prov)
    else:
        rows = _load_folder(path, split, prov) if path.is_dir() else _load_hub(spec, revision, split, prov)
        problems = [""] * len(rows)
    return rows, problems, prov


def _load_file(path: Path, prov: dict[str, Any]) -> tuple[list[dict[str, Any] | None], list[str]]:
    """One data file; a JSONL file arrow cannot take is re-read line by line."""
    builder = _BUILDERS.get(path.suffix.lower())
    if builder is None:
        raise InputError("unsupported file type", path=str(path), expected=sorted(_BUILDERS),
                         actual=path.suffix)
    prov.update(kind="file", files=[_file_entry(path)], split="train",
                loader=f"datasets.load_dataset({builder!r}, data_files=...)")
    try:   # arrow may take bytes that are not UTF-8 and fail only when rows are built
        rows = _load(builder, data_files=str(path), split="train").to_list()
    except Exception as exc:  # noqa: BLE001 - any datasets/arrow failure: re-read JSONL line by line
        if builder != "json":
            raise InputError(f"cannot read the file ({type(exc).__name__}: {str(exc)[:200]})",
                             path=str(path)) from None
        prov["loader"] = "json lines (datasets.load_dataset failed: " + type(exc).__name__ + ")"
        return _lines_fallback(path)
    return rows, [""] * len(rows)


def _load_folder(path: Path, split: str, prov: dict[str, Any]) -> list[dict[str, Any]]:
    """A folder of data files (hidden ones left out) read by ``datasets`` as one dataset."""
    files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in _BUILDERS
                   and not any(part.startswith(".") for part in p.relative_to(path).parts))
    if not files:
        raise InputError("folder holds no data file", path=str(path), expected=sorted(_BUILDERS))
    try:
        dd = _load(str(path))
    except Exception as exc:  # noqa: BLE001
        raise InputError(f"cannot load the folder with datasets ({type(exc).__name__}: {str(exc)[:200]})",
                         path=str(path)) from None
    ds, used = _pick_split(dd, split, str(path))
    prov.update(kind="folder", files=[_file_entry(f) for f in files], split=used,
                loader="datasets.load_dataset(folder)")
    try:
        return ds.to_list()
    except UnicodeDecodeError as exc:
        raise InputError(f"a file of the folder is not valid UTF-8 ({exc.reason})", path=str(path)) from None


def _load_hub(spec: str, revision: str | None, split: str, prov: dict[str, Any]) -> list[dict[str, Any]]:
    """A Hub dataset (or its cached copy), with the checksums ``datasets`` recorded as provenance."""
    if not HUB_ID_RE.match(spec):
        raise InputError("no such file or folder, and not a Hub dataset id (owner/name)", path=spec)
    try:
        ds = _load(spec, revision=revision, split=split)
    except Exception as exc:  # noqa: BLE001 - offline, missing, gated: one clear message
        offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0")
        raise InputError(
            f"cannot load Hub dataset '{spec}' (revision {revision or 'default'}, split {split}): "
            f"{type(exc).__name__}: {str(exc)[:200]}", field="spec",
            hint=("HF_HUB_OFFLINE is set and no cached copy exists; " if offline else
                  "the Hub may be unreachable from here; ")
            + "give a local file (.jsonl/.parquet) or folder instead") from None
    checks = getattr(ds.info, "download_checksums", None) or {}
    prov.update(kind="hub", repo_id=spec, revision=revision or "main", split=split,
                files=[{"path": k, "sha256": v.get("checksum"), "bytes": v.get("num_bytes")}
                       for k, v in sorted(checks.items())],
                loader="datasets.load_dataset(repo_id, revision=...)")
    return ds.to_list()


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
