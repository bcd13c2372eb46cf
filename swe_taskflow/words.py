"""Counts in prose: "1 task", "2 tasks" (issue 36: the CLI printed "1 tasks", "1 sessions")."""

from __future__ import annotations

#: Nouns whose plural is not the singular plus "s".
_IRREGULAR = {"trajectory": "trajectories", "category": "categories", "repository": "repositories",
              "summary": "summaries", "is": "are", "was": "were"}


def plural(noun: str, n: int) -> str:
    """``noun`` as it goes with ``n``: ``plural("task", 1) == "task"``, ``plural("trajectory", 2) == "trajectories"``."""
    if n == 1:
        return noun
    return _IRREGULAR.get(noun, noun + "s")


def counted(n: int, noun: str) -> str:
    """``n`` and its noun: ``counted(1, "session") == "1 session"``, ``counted(3, "session") == "3 sessions"``."""
    return f"{n} {plural(noun, n)}"


__all__ = ["counted", "plural"]
