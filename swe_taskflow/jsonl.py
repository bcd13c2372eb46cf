"""JSON and JSON Lines I/O whose errors name the file and the line.

Every reader here turns what a hostile or careless file can hold into an :class:`InputError` naming
the file, the line and, where it can, the field: a folder or a FIFO where a file is expected, bytes
that are not UTF-8, JSON nested deeper than the parser's stack, text holding a lone UTF-16 surrogate
(it cannot be written back as UTF-8), a line that is not a JSON object.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from .atomic import open_atomic
from .errors import InputError
from .hashing import compact_json_text

#: A \\uD800-\\uDFFF escape: only lines holding one need the (slower) surrogate scan.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def check_input_file(path: str | os.PathLike, what: str = "file") -> Path:
    """``path`` as a Path when it is a regular file (symlinks followed); an InputError naming it otherwise."""
    path = Path(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise InputError(f"{what} not found", path=str(path)) from None
    except OSError as exc:
        raise InputError(f"{what} cannot be read ({exc.strerror or exc})", path=str(path)) from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{what} is a folder, a file is expected", path=str(path))
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{what} is not a regular file (a FIFO, socket or device is never read)", path=str(path))
    return path


def check_output_file(path: str | os.PathLike, what: str = "output file") -> Path:
    """``path`` as a Path unless it names an existing folder (or something that is not a file)."""
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{what} is a folder, a file name is expected", path=str(path))
    if path.exists() and not path.is_file():
        raise InputError(f"{what} exists and is not a regular file", path=str(path))
    if path.parent.exists() and not path.parent.is_dir():
        raise InputError(f"the parent of the {what} is not a folder", path=str(path.parent))
    return path


def check_output_dir(path: str | os.PathLike, what: str = "output folder") -> Path:
    """``path`` as a Path unless it names something that is not a folder."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise InputError(f"{what} exists and is not a folder", path=str(path))
    return path


def decode(raw: bytes, *, path: str | None = None, row: int | None = None) -> str:
    """Bytes as UTF-8 text, or an InputError naming the file, the line and the byte offset."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if row is None:   # a whole file: say which line
            row = raw.count(b"\n", 0, exc.start) + 1
            at = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1)
        else:
            at = exc.start
        raise InputError(f"not valid UTF-8 (byte {at} of the line: {raw[exc.start:exc.start + 1]!r})",
                         path=path, row=row) from None


def read_text(path: str | os.PathLike, what: str = "file") -> str:
    """A whole text file (a regular file, UTF-8), with errors that name it."""
    p = check_input_file(path, what)
    return decode(p.read_bytes(), path=str(p))


def iter_lines(path: str | os.PathLike, what: str = "file") -> Iterator[tuple[int, bytes]]:
    """``(line_number, raw bytes)`` of every line of a regular file."""
    p = check_input_file(path, what)
    with p.open("rb") as fh:
        yield from enumerate(fh, start=1)


def read_jsonl(path: str | os.PathLike) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)``; blank lines are skipped, anything else must be a JSON object."""
    yield from parse_jsonl_lines(iter_lines(path), str(path))


def parse_jsonl_lines(numbered: Iterable[tuple[int, bytes]], path: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """``read_jsonl`` over ``(line_number, raw bytes)`` pairs (each line with its ``\\n``, as a file yields it).

    The one line-by-line JSONL parser: a fast reader that hands a block of lines back here gets the
    same objects and the same errors as a plain read of the file.
    """
    for lineno, raw in numbered:
        line = decode(raw, path=path, row=lineno)
        if line.strip():
            yield lineno, parse_line(line, path=path, row=lineno)


def read_records(path: str | os.PathLike, cls, *, unique: str | None = None) -> list:
    """Every line of a JSONL file as ``cls.from_dict`` records; with ``unique``, a repeated value of that
    field is an error naming both lines (a second ``question_id`` would silently shadow the first)."""
    out: list = []
    seen: dict[Any, int] = {}
    for lineno, obj in read_jsonl(path):
        rec = cls.from_dict(obj, where=str(path), row=lineno)
        if unique is not None:
            key = getattr(rec, unique)
            if key in seen:
                raise InputError(f"duplicate {unique}", path=str(path), row=lineno, field=unique, actual=key,
                                 hint=f"first seen on line {seen[key]}")
            seen[key] = lineno
        out.append(rec)
    return out


def loads(text: str, *, path: str | None = None, row: int | None = None) -> Any:
    """``json.loads`` whose every failure (syntax, nesting depth, lone surrogate) is an InputError."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
                         if row is None else f"not valid JSON ({exc.msg} at column {exc.colno})",
                         path=path, row=row) from None
    except RecursionError:
        raise InputError("JSON nested too deeply", path=path, row=row) from None
    if _SURROGATE_ESCAPE.search(text):
        where = _surrogate_field(obj, "")
        if where is not None:
            raise InputError("text holds a lone UTF-16 surrogate (not encodable as UTF-8)", path=path, row=row,
                             field=where or None)
    return obj


def _surrogate_field(obj: Any, where: str) -> str | None:
    """The dotted path of the first string (or key) holding a surrogate code point, else None."""
    stack = [(obj, where)]
    while stack:
        value, at = stack.pop()
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return at
        elif isinstance(value, dict):
            for k, v in value.items():
                key_at = f"{at}.{k}" if at else str(k)
                try:
                    str(k).encode("utf-8")
                except UnicodeEncodeError:
                    return at or "(key)"
                stack.append((v, key_at))
        elif isinstance(value, list):
            stack.extend((v, f"{at}[{i}]") for i, v in enumerate(value))
    return None


def parse_line(line: str, *, path: str | None = None, row: int | None = None) -> dict[str, Any]:
    """One JSONL line as a dict, or an InputError naming the file and line."""
    obj = loads(line, path=path, row=row)
    if not isinstance(obj, dict):
        raise InputError("each line must be a JSON object", path=path, row=row, actual=type(obj).__name__)
    return obj


def read_json(path: str | os.PathLike, what: str = "JSON file") -> Any:
    """One JSON document from a regular UTF-8 file; every failure names the file."""
    p = check_input_file(path, what)
    return loads(decode(p.read_bytes(), path=str(p)), path=str(p))


def check_format(doc: Mapping[str, Any], fmt: str, version: int, *, kind: str, name: str, where: str) -> None:
    """A versioned document's ``format`` and ``format_version`` are checked, never guessed."""
    if doc.get("format") != fmt:
        raise InputError(f"not a {name}", path=where, field="format", expected=fmt, actual=doc.get("format"))
    if doc.get("format_version") != version:
        raise InputError(f"unsupported {kind} format version", path=where, field="format_version",
                         expected=version, actual=doc.get("format_version"))


def write_jsonl(path: str | os.PathLike, rows: Iterable[Any]) -> int:
    """Write rows atomically (temp file + rename) so an interrupted run never leaves half a file."""
    path = check_output_file(path)
    n = 0
    with open_atomic(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(compact_json_text(row))
            fh.write("\n")
            n += 1
    return n


def write_json(path: str | os.PathLike, obj: Any, *, indent: int | None = 2) -> None:
    """Write one JSON document atomically, keys sorted."""
    path = check_output_file(path)
    with open_atomic(path, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, ensure_ascii=False, sort_keys=True, indent=indent)
        fh.write("\n")
