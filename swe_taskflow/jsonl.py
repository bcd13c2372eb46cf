"""JSON Lines I/O whose errors name the file and the line."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable, Iterator

from .errors import InputError


def read_jsonl(path: str | os.PathLike) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)``; blank lines are skipped, anything else must be a JSON object."""
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", path=str(path))
    with path.open("r", encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if line.strip():
                yield lineno, parse_line(line, path=str(path), row=lineno)


def parse_line(line: str, *, path: str | None = None, row: int | None = None) -> dict[str, Any]:
    """One JSONL line as a dict, or an InputError naming the file and line."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc.msg} at column {exc.colno})", path=path, row=row) from None
    if not isinstance(obj, dict):
        raise InputError("each line must be a JSON object", path=path, row=row, actual=type(obj).__name__)
    return obj


def dumps_line(obj: Any) -> str:
    """One stable JSON line (sorted keys, UTF-8 text kept as is)."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def write_jsonl(path: str | os.PathLike, rows: Iterable[Any]) -> int:
    """Write rows atomically (temp file + rename) so an interrupted run never leaves half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(dumps_line(row))
                fh.write("\n")
                n += 1
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return n


def write_json(path: str | os.PathLike, obj: Any, *, indent: int | None = 2) -> None:
    """Write one JSON document atomically, keys sorted."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(obj, fh, ensure_ascii=False, sort_keys=True, indent=indent)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
