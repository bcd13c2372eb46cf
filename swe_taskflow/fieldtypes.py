"""Fields checked against their dataclass declarations: record fields read from files, and settings.

A row whose ``parts`` is ``null`` or ``"abc"`` (which would silently become three one-letter turns),
whose ``question`` is ``null`` or whose ``instance_id`` is a number is refused here, naming the file,
the row and the field, before any stage works on it (:func:`check_field_types`).

A setting (a recipe key, a selection parameter) is declared once, as a dataclass field whose metadata
holds its bounds and help (:func:`setting`); :func:`from_table` and :func:`check_settings` are the one
checker, and the docs' settings table is generated from the same declarations (:func:`settings_rows`).
"""

from __future__ import annotations

import re
from dataclasses import MISSING, dataclass, field, fields
from importlib import import_module
from pathlib import Path
from typing import Any, Callable, Mapping

from .errors import ConfigError, InputError
from .untrusted import check_recipe_path

_SCALARS: dict[str, type | tuple[type, ...]] = {"str": str, "int": int, "float": (int, float), "bool": bool}


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
        ann, value = _ann(f), data[f.name]
        if not _matches(value, ann):
            raise InputError(f"must be {_words(ann)} in a {cls.__name__}, got {_describe(value)}",
                             path=where, row=row, field=f"{prefix}{f.name}")


# ---------------------------------------------------------------- declared settings

@dataclass(frozen=True)
class Setting:
    """What a setting allows beyond its type; each error keeps the form file, field, expected, got."""

    help: str
    choices: tuple | str = ()
    """Allowed values (of each item, for a list); ``"module:NAME"`` is imported when first checked, so a
    declaration never imports the heavy module that owns the names."""
    noun: str = ""
    """Names the thing in errors: ``unknown <noun>``, ``<noun> not found``."""
    lo: float | None = None
    hi: float | None = None
    pattern: str = ""
    pattern_error: str = "not a valid value"
    nonempty: bool = False
    exists: bool = False
    """A path (each path, for a list) relative to the recipe that must exist."""
    keep: tuple = ()
    """Values no check applies to (``""``: unset, ``"default"``)."""
    key: str = ""
    """The key's spelling in a recipe table where it differs from the field's name."""
    set_by: str = ""
    """Not a key of this table: the recipe key that sets it (named in the error's hint)."""
    item: Any = None
    """The dataclass of each table of an array of tables (``[[questions.pools]]``)."""
    table: Any = None
    """The dataclass of a sub-table (``[augmentations.llm]``): one declaration shared by several sections."""


def setting(default: Any = MISSING, **spec: Any) -> Any:
    """A dataclass field declaring one setting: its default (none: required) and its :class:`Setting`."""
    return field(default=default, metadata={"setting": Setting(**spec)})


def _spec(f) -> Setting:
    return f.metadata.get("setting") or Setting(help="")


def _ann(f) -> str:
    return f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))


def _choices(spec: Setting) -> tuple:
    c = spec.choices
    if isinstance(c, str):
        module, _, name = c.partition(":")
        c = getattr(import_module(module), name)
    return tuple(sorted(c)) if isinstance(c, Mapping) else tuple(c)


def recipe_key(cls, name: str) -> str:
    """A field's spelling in a recipe table."""
    spec = next((_spec(f) for f in fields(cls) if f.name == name), None)
    return spec.key if spec and spec.key else name


def table_values(cls, table: Any, *, path: str | None, section: str,
                 resolve: Callable[[str], Path] | None = None) -> dict[str, Any]:
    """A recipe table's values for ``cls``: unknown keys and wrong types refused, lists made tuples, integers
    of float settings made floats, arrays of tables built (and checked) as their ``item`` dataclass."""
    if not isinstance(table, dict):
        raise ConfigError("must be a table", path=path, field=section, actual=type(table).__name__)
    by_key = {recipe_key(cls, f.name): f for f in fields(cls)}
    for key in table:
        spec = _spec(by_key[key]) if key in by_key else None
        if spec is None or spec.set_by:
            raise ConfigError("unknown key", path=path, field=f"{section}.{key}",
                              expected=sorted(k for k, f in by_key.items() if not _spec(f).set_by),
                              hint=f"it is set by {spec.set_by}" if spec else None)
    out: dict[str, Any] = {}
    for key, f in by_key.items():
        if key not in table:
            continue
        value, ann, where, spec = table[key], _ann(f), f"{section}.{key}", _spec(f)
        if spec.item is not None:
            if not isinstance(value, list):
                raise ConfigError("must be an array of tables", path=path, field=where)
            value = tuple(from_table(spec.item, v, path=path, section=f"{where}[{i}]", resolve=resolve)
                          for i, v in enumerate(value))
        elif spec.table is not None:
            value = from_table(spec.table, value, path=path, section=where, resolve=resolve)
        elif not _matches(value, ann):
            raise ConfigError("wrong type", path=path, field=where, expected=ann, actual=value)
        elif isinstance(value, list):
            value = tuple(value)
        elif ann == "float":
            value = float(value)
        out[f.name] = value
    return out


def from_table(cls, table: Any, *, path: str | None, section: str,
               resolve: Callable[[str], Path] | None = None):
    """``cls`` built from a recipe table and checked (:func:`check_settings`); errors name ``path`` and
    ``section.key``."""
    values = table_values(cls, table, path=path, section=section, resolve=resolve)
    missing = [f.name for f in fields(cls) if f.name not in values and f.default is MISSING
               and f.default_factory is MISSING]
    if missing:
        raise ConfigError("missing key", path=path, field=f"{section}.{recipe_key(cls, missing[0])}")
    obj = cls(**values)
    check_settings(obj, path=path, section=section, resolve=resolve)
    return obj


def check_settings(obj, *, path: str | None = None, section: str = "",
                   resolve: Callable[[str], Path] | None = None) -> None:
    """Every declared setting of ``obj`` against its declaration, in field order; the first failure raises.

    Without ``resolve`` (a dataclass built in code, not from a recipe) paths are not checked."""
    for f in fields(obj):
        spec, value = f.metadata.get("setting"), getattr(obj, f.name)
        if spec is None or spec.item is not None or value in spec.keep:
            continue
        where = f"{section}.{recipe_key(type(obj), f.name)}" if section else f.name
        if spec.table is not None:
            check_settings(value, path=path, section=where, resolve=resolve)
            continue
        if not _matches(value, _ann(f)):
            raise ConfigError("wrong type", path=path, field=where, expected=_ann(f), actual=value)
        _check_value(spec, value, path=path, where=where, resolve=resolve)


def _check_value(spec: Setting, value: Any, *, path: str | None, where: str,
                 resolve: Callable[[str], Path] | None) -> None:
    many = isinstance(value, tuple)
    items = [(f"{where}[{i}]", v) for i, v in enumerate(value)] if many else [(where, value)]
    if spec.nonempty and not (value if many else str(value).strip()):
        raise ConfigError("must not be empty", path=path, field=where)
    if spec.pattern and not re.match(spec.pattern, value):
        raise ConfigError(spec.pattern_error, path=path, field=where, expected=spec.pattern, actual=value)
    if spec.choices:
        allowed = _choices(spec)
        for key, v in items:
            if v not in allowed:
                raise ConfigError(f"unknown {spec.noun or where.rsplit('.', 1)[-1]}", path=path, field=key,
                                  expected=allowed, actual=v)
    if (spec.lo is not None and value < spec.lo) or (spec.hi is not None and value > spec.hi):
        raise ConfigError("out of range", path=path, field=where, expected=f"{spec.lo}..{spec.hi}", actual=value)
    if spec.exists and resolve is not None:
        for key, v in items:
            if v and not resolve(v).exists():
                raise ConfigError(f"{spec.noun or 'path'} not found", path=path, field=key, actual=str(resolve(v)))
            if v:   # a FIFO or a device would hang every later read (``build --dry-run`` included)
                try:
                    check_recipe_path(resolve(v), spec.noun or "path")
                except InputError as exc:
                    raise ConfigError(exc.message, path=path, field=key, actual=str(resolve(v))) from None


def settings_rows(cls, section: str) -> list[tuple[str, str, str, str, str]]:
    """One row per recipe key of ``cls``: key, type, default, what is allowed, help (for the docs' table)."""
    rows = []
    for f in fields(cls):
        spec = _spec(f)
        if spec.set_by:
            continue
        key = f"{section}.{recipe_key(cls, f.name)}"
        if spec.item is not None:
            rows += [(f"[[{key}]]", "a list of tables", "[]", "", spec.help)]
            rows += settings_rows(spec.item, f"{key}[]")
            continue
        if spec.table is not None:
            rows += [(f"[{key}]", "a table", "{}", "", spec.help)]
            rows += settings_rows(spec.table, key)
            continue
        default = "required" if f.default is MISSING else _toml(f.default)
        rows.append((key, _words(_ann(f)), default, _allowed(spec), spec.help))
    return rows


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return repr(value)


def _allowed(spec: Setting) -> str:
    parts = [" | ".join(_toml(c) for c in _choices(spec))] if spec.choices else []
    if spec.lo is not None or spec.hi is not None:
        parts.append(f"{spec.lo}..{spec.hi}")
    if spec.pattern:
        parts.append(f"`{spec.pattern}`")
    parts += ["not empty"] * spec.nonempty + ["must exist"] * spec.exists
    parts += [f"or {_toml(k)}" for k in spec.keep if k != ""]
    return "; ".join(parts)


__all__ = ["check_field_types", "Setting", "setting", "from_table", "table_values", "check_settings", "recipe_key",
           "settings_rows"]
