"""Release writing, publishing and trajectory import (builder side; heavy imports stay lazy)."""

from __future__ import annotations

from .writer import write_release

__all__ = ["write_release", "push_release", "import_trajectories", "add_trajectories"]


def __getattr__(name: str):
    if name == "push_release":
        from .push import push_release
        return push_release
    if name in ("import_trajectories", "add_trajectories"):
        from . import trajectories
        return getattr(trajectories, name)
    raise AttributeError(name)
