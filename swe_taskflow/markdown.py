"""Markdown tables: the one writer of every table the project prints (gap tables, the dataset card, the
build report).

One helper rather than a library (tabulate, py-markdown-table): those pad cells to a common width, and
the card's bytes are release content, so its table lines must stay exactly ``| a | b |``.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

_RULE = {"l": "---", "r": "---:"}


def table(head: Sequence[str], rows: Iterable[Sequence[Any]], align: str = "") -> list[str]:
    """The lines of a pipe table: ``align`` holds one letter per column, ``l`` (left) or ``r`` (right);
    empty means the first column left and the others right. Cells are written as ``str(cell)``."""
    align = align or "l" + "r" * (len(head) - 1)
    if len(align) != len(head) or set(align) - set(_RULE):
        raise ValueError(f"align {align!r} needs one of l/r per column ({len(head)} columns)")
    return ["| " + " | ".join(head) + " |", "|" + "|".join(_RULE[a] for a in align) + "|",
            *["| " + " | ".join(str(c) for c in r) + " |" for r in rows]]


__all__ = ["table"]
