"""Paths built from data must stay inside their root.

A row's ``instance_id`` or ``repo`` names a folder under ``--repos``; ``"/etc"``, ``"../x"`` or a link
that points out of the root would let a data file choose what a sandbox mounts or what a build
writes. :func:`inside` is the one check every such join goes through.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from .errors import InputError


def inside(root: str | os.PathLike, name: object, *, field: str = "instance_id") -> Path:
    """``root/name`` resolved, when ``name`` is a relative path that stays inside ``root`` (links
    followed); an InputError naming ``field`` otherwise. The result need not exist."""
    if not isinstance(name, str) or not name or "\0" in name:
        raise InputError("not a usable path component", field=field, actual=name)
    pure = PurePosixPath(name)
    if pure.is_absolute() or ".." in pure.parts or name.startswith("~"):
        raise InputError("path leaves its root (absolute, '..' or '~')", field=field, actual=name,
                         hint=f"it must name a folder under {root}")
    base = Path(root).resolve()
    target = (base / name).resolve()
    if target != base and base not in target.parents:
        raise InputError("path leaves its root through a symbolic link", field=field, actual=name,
                         hint=f"{base / name} resolves to {target}")
    return target


#: Longest name most file systems take for one path component (bytes, UTF-8).
MAX_COMPONENT_BYTES = 255


def component_problem(name: object) -> str | None:
    """Why ``name`` cannot be one folder name under any root (None when it can).

    An ``instance_id`` names a folder wherever a task is written out (a Harbor task, a repository
    under ``--repos``): it must be exactly one path component, never ``.``, ``..``, absolute or with a
    separator, and hold no control character (a newline or NUL cannot round-trip through a file name).
    """
    if not isinstance(name, str) or not name:
        return "empty or not a string"
    if name in (".", ".."):
        return f"'{name}' names a folder relative to its parent"
    if "/" in name or "\\" in name:
        return "holds a path separator ('/' or '\\')"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "holds a control character (newline, NUL, ...)"
    if name != name.strip():
        return "starts or ends with white space"
    if len(name.encode("utf-8", "surrogatepass")) > MAX_COMPONENT_BYTES:
        return f"longer than {MAX_COMPONENT_BYTES} bytes"
    return None


def check_component(name: object, *, field: str = "instance_id", **where) -> str:
    """``name`` when it is one safe path component (:func:`component_problem`); an InputError otherwise."""
    problem = component_problem(name)
    if problem is not None:
        raise InputError(f"not one safe path component: {problem}", field=field, actual=name, **where)
    return name  # type: ignore[return-value]


def is_inside(root: str | os.PathLike, name: object) -> bool:
    try:
        inside(root, name)
        return True
    except InputError:
        return False


__all__ = ["inside", "is_inside", "component_problem", "check_component", "MAX_COMPONENT_BYTES"]
