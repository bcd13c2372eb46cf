"""Type checks of record fields read from files, driven by the dataclass annotations.

A row whose ``parts`` is ``null`` or ``"abc"`` (which would silently become three one-letter turns),
whose ``question`` is ``null`` or whose ``instance_id`` is a number is refused here, naming the file,
the row and the field, before any stage works on it.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, Mapping

from .errors import InputError

_SCALARS = {"str": str, "int": int, "float": (int, float), "bool": bool}


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value[:40]!r}" + ("..." if len(value) > 40 else "")
    return {"dict": "an object", "list": "a list"}.get(type(value).__name__, type(value).__name__)


def _matches(value: Any, ann: str) -> bool:
    ann = ann.replace(" ", "")
    if ann in ("Any", "object"):
        return True
    options = _split_top(ann, "|")
    if len(options) > 1:
        return any(_matches(value, o) for o in options)
    if ann == "None":
        return value is None
    if ann in _SCALARS:
        if isinstance(value, bool) and ann != "bool":
            return False
        return isinstance(value, _SCALARS[ann])
    if ann.startswith(("Mapping[", "dict[")):
        return isinstance(value, dict)
    if ann.startswith(("tuple[", "list[", "Sequence[")):
        if not isinstance(value, (list, tuple)):
            return False
        inner = _split_top(ann[ann.index("[") + 1:-1], ",")
        item = inner[0]
        return all(_matches(v, item) for v in value)
    return True   # a type this checker does not know (a nested record) is the constructor's job


def _words(ann: str) -> str:
    """An annotation in JSON words: ``tuple[str, ...] | None`` -> "a list of strings or null"."""
    ann = ann.replace(" ", "")
    options = _split_top(ann, "|")
    if len(options) > 1:
        return " or ".join(_words(o) for o in options)
    simple = {"str": "a string", "int": "an integer", "float": "a number", "bool": "true or false", "None": "null"}
    if ann in simple:
        return simple[ann]
    if ann.startswith(("Mapping[", "dict[")):
        return "an object"
    if ann.startswith(("tuple[", "list[", "Sequence[")):
        item = _words(_split_top(ann[ann.index("[") + 1:-1], ",")[0])
        plural = {"a string": "strings", "an integer": "integers", "an object": "objects", "a number": "numbers"}
        return f"a list of {plural.get(item, item)}"
    return ann


def _split_top(text: str, sep: str) -> list[str]:
    """Split at ``sep`` outside brackets."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == sep and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return [o for o in out if o]


def check_field_types(cls, data: Mapping[str, Any], *, where: str | None = None, row: int | None = None,
                      prefix: str = "") -> None:
    """InputError for the first field of ``data`` whose value does not fit ``cls``'s annotation."""
    for f in fields(cls):
        if f.name not in data:
            continue
        ann = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
        value = data[f.name]
        if not _matches(value, ann):
            raise InputError(f"must be {_words(ann)} in a {cls.__name__}, got {_describe(value)}",
                             path=where, row=row, field=f"{prefix}{f.name}")


__all__ = ["check_field_types"]
