"""How a stage's typed outputs map to files in its cache folder: declared once, read and written by the runner.

A stage's ``Outputs`` dataclass names each output with one of the declarators below (the file it lives
in and how it is encoded). The runner alone calls :func:`save` on what a stage returns and :func:`load`
on a finished stage folder to hand the same typed value to the stages that consume it; stages never
see these files. A field declared ``volatile`` goes under ``_volatile/`` (measured times, LLM usage: kept
out of the content hash). A field left ``None`` writes no file and loads as ``None``.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swe_taskflow.jsonl import read_json, read_jsonl, write_json, write_jsonl

from .folder_hash import VOLATILE_PREFIX

SUMMARY_FILE = "summary.json"


@dataclass(frozen=True)
class Artifact:
    """Where one output field lives and how it is encoded."""

    path: str
    kind: str                # records | rows | record_map | document | text | file | folder
    record: type | None = None
    volatile: bool = False

    def where(self, root: Path) -> Path:
        return root / VOLATILE_PREFIX / self.path if self.volatile else root / self.path


def _declare(art: Artifact, default: Any) -> Any:
    if callable(default):
        return field(default_factory=default, metadata={"artifact": art})
    return field(default=default, metadata={"artifact": art})


def records(path: str, record: type, *, volatile: bool = False) -> Any:
    """A list of schema records (``to_dict``/``from_dict``), one JSON line each."""
    return _declare(Artifact(path, "records", record, volatile), list)


def rows(path: str, *, volatile: bool = False, optional: bool = False) -> Any:
    """A list of plain JSON objects, one line each (``optional``: None writes no file)."""
    return _declare(Artifact(path, "rows", None, volatile), None if optional else list)


def row_map(folder: str) -> Any:
    """``{name: rows}`` as ``folder/<name>.jsonl`` (one file per split)."""
    return _declare(Artifact(folder, "record_map"), dict)


def document(path: str, *, volatile: bool = False) -> Any:
    """One JSON document (keys sorted, indented); None writes no file."""
    return _declare(Artifact(path, "document", None, volatile), None)


def text(path: str) -> Any:
    """A UTF-8 text file, written as is."""
    return _declare(Artifact(path, "text"), None)


def copied_file(path: str) -> Any:
    """A file the stage names (a Path) that is copied in; consumers get the path of the copy."""
    return _declare(Artifact(path, "file"), None)


def folder(path: str) -> Any:
    """A folder the stage writes through ``StageContext.folder(path)``; consumers get its path."""
    return _declare(Artifact(path, "folder"), None)


def artifacts(cls: type) -> list[tuple[str, Artifact]]:
    return [(f.name, f.metadata["artifact"]) for f in dataclasses.fields(cls) if "artifact" in f.metadata]


def save(outputs: Any, root: Path, counts: dict[str, int]) -> None:
    """Write ``outputs`` (a stage's Outputs) under ``root`` as its class declares."""
    for name, art in artifacts(type(outputs)):
        value = getattr(outputs, name)
        if value is None:
            continue
        path = art.where(root)
        if art.kind == "records":
            write_jsonl(path, (r.to_dict() for r in value))
        elif art.kind == "rows":
            write_jsonl(path, value)
        elif art.kind == "record_map":
            for split, split_rows in value.items():
                write_jsonl(path / f"{split}.jsonl", split_rows)
        elif art.kind == "document":
            write_json(path, value)
        elif art.kind == "text":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(value, encoding="utf-8")
        elif art.kind == "file":
            path.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(value, path)
        elif art.kind == "folder" and Path(value).resolve() != path.resolve():
            raise ValueError(f"{type(outputs).__name__}.{name} must be written through ctx.folder({art.path!r})")
    # item counts, then every summary field that is not None (no times, content only)
    summary = getattr(outputs, "summary", None)
    body = {k: v for k, v in dataclasses.asdict(summary).items() if v is not None} if summary is not None else {}
    write_summary(root, {**counts, **body})


def write_summary(root: Path, body: dict[str, Any]) -> None:
    """``summary.json``: derived from content only (no times), so cached and fresh runs agree."""
    (root / SUMMARY_FILE).write_text(json.dumps(body, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def read_summary(root: Path) -> dict[str, Any]:
    return json.loads((root / SUMMARY_FILE).read_text(encoding="utf-8"))


def _load_one(art: Artifact, root: Path) -> Any:
    path = art.where(root)
    if art.kind == "record_map":
        return {p.stem: [obj for _, obj in read_jsonl(p)] for p in sorted(path.glob("*.jsonl"))} \
            if path.is_dir() else {}
    if not path.exists():
        return None
    if art.kind == "records":
        return [art.record.from_dict(obj, where=str(path), row=n) for n, obj in read_jsonl(path)]  # type: ignore
    if art.kind == "rows":
        return [obj for _, obj in read_jsonl(path)]
    if art.kind == "document":
        return read_json(path)
    if art.kind == "text":
        return path.read_text(encoding="utf-8")
    return path   # file, folder: the consumer reads it (a release folder, a target file)


def summary_class(cls: type) -> type | None:
    """The Summary dataclass an Outputs class declares (its ``summary`` field's factory)."""
    for f in dataclasses.fields(cls):
        if f.name == "summary" and f.default_factory is not dataclasses.MISSING:
            return f.default_factory  # type: ignore[return-value]
    return None


def load(cls: type, root: Path) -> Any:
    """The typed Outputs of a finished stage folder (its summary included)."""
    values = {name: _load_one(art, root) for name, art in artifacts(cls)}
    summary_cls = summary_class(cls)
    if summary_cls is not None:
        raw = read_summary(root)
        names = {f.name for f in dataclasses.fields(summary_cls)}
        values["summary"] = summary_cls(**{k: v for k, v in raw.items() if k in names})
    return cls(**values)
