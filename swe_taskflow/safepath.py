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


def is_inside(root: str | os.PathLike, name: object) -> bool:
    try:
        inside(root, name)
        return True
    except InputError:
        return False


__all__ = ["inside", "is_inside"]
