"""Release writing, publishing and trajectory import (builder side; heavy imports stay lazy)."""

from __future__ import annotations

from .writer import write_release

__all__ = ["write_release"]
