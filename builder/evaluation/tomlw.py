"""A small deterministic TOML writer for the files the Harbor export writes (``task.toml``, ``dataset.toml``).

Python 3.11 reads TOML (``tomllib``) but cannot write it; the export needs byte-stable output (task digests
depend on it), so the writer is ours: scalars first, then tables, then arrays of tables, keys in the
order given, strings as TOML basic strings.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Mapping

from swe_taskflow.errors import InputError

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    return k if _BARE.match(k) else _string(k)


def _string(s: str) -> str:
    # JSON string escapes are TOML basic-string escapes; DEL and lone surrogates are not allowed raw.
    out = json.dumps(s, ensure_ascii=False)
    return out.replace("\x7f", "\\u007f")


def _scalar(v: Any, where: str) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise InputError("TOML cannot hold a non-finite float", field=where, actual=v)
        return repr(v)
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_scalar(x, f"{where}[]") for x in v) + "]"
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{_key(k)} = {_scalar(x, f'{where}.{k}')}" for k, x in v.items()) + " }"
    raise InputError("value has no TOML form", field=where, actual=type(v).__name__)


def _is_table_array(v: Any) -> bool:
    return isinstance(v, (list, tuple)) and bool(v) and all(isinstance(x, Mapping) for x in v)


def _emit(doc: Mapping[str, Any], path: list[str], out: list[str]) -> None:
    for k, v in doc.items():
        if v is None:
            continue
        if not isinstance(v, Mapping) and not _is_table_array(v):
            out.append(f"{_key(k)} = {_scalar(v, '.'.join([*path, k]))}")
    for k, v in doc.items():
        if isinstance(v, Mapping):
            header = ".".join(_key(p) for p in [*path, k])
            if not v or any(x is not None and not isinstance(x, Mapping) and not _is_table_array(x)
                            for x in v.values()):
                out.append("")
                out.append(f"[{header}]")
            _emit(v, [*path, k], out)
    for k, v in doc.items():
        if _is_table_array(v):
            header = ".".join(_key(p) for p in [*path, k])
            for item in v:
                out.append("")
                out.append(f"[[{header}]]")
                _emit(item, [*path, k], out)


def dumps(doc: Mapping[str, Any], *, header: str = "") -> str:
    """``doc`` as TOML text (``None`` values are left out); ``header`` lines become ``#`` comments."""
    out = [f"# {line}".rstrip() for line in header.splitlines()]
    _emit(doc, [], out)
    text = "\n".join(out).lstrip("\n") + "\n"
    return re.sub(r"\n{3,}", "\n\n", text)


__all__ = ["dumps"]
