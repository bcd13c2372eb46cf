"""Build-report pictures and tables (matplotlib imported lazily, Agg canvas only)."""

from __future__ import annotations

__all__ = ["sankey"]
