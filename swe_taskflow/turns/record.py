"""The kind-specific reference fields of a release row's question item (hidden from the agent).

One place for both sides of the schema: :func:`question_fields` is what the row features add to each
``questions`` item, :func:`question_values` fills them from a :class:`~swe_taskflow.schema.QAItem`.
A ``qa`` item carries ``kind = "qa"`` and empty values.
"""

from __future__ import annotations

from typing import Any

from ..schema import QAItem


def question_fields() -> dict[str, Any]:
    """``datasets`` features of the reference fields (see docs/augmentations.md, docs/data-model.md)."""
    from datasets import List, Value
    s, i = Value("string"), Value("int64")
    return {"kind": s, "command": s, "facts": List({"name": s, "value": s}),
            "locations": List({"path": s, "symbol": s, "line_start": i, "line_end": i}),
            "mutation": {"operator": s, "path": s, "line": i, "before": s, "after": s},
            "requirement_part": i, "checks": List({"name": s, "passed": Value("bool"), "detail": s})}


def question_values(item: QAItem) -> dict[str, Any]:
    """The reference fields of ``item`` as a release row stores them."""
    m = item.mutation
    return {"kind": item.kind, "command": item.command,
            "facts": [{"name": str(f["name"]), "value": str(f["value"])} for f in item.facts],
            "locations": [{"path": str(x.get("path") or ""), "symbol": str(x.get("symbol") or ""),
                           "line_start": int(x.get("line_start") or 0), "line_end": int(x.get("line_end") or 0)}
                          for x in item.locations],
            "mutation": None if m is None else {"operator": str(m.get("operator", "")), "path": str(m.get("path", "")),
                                                "line": int(m.get("line") or 0), "before": str(m.get("before", "")),
                                                "after": str(m.get("after", ""))},
            "requirement_part": item.requirement_part,
            "checks": [{"name": str(c["name"]), "passed": bool(c["passed"]), "detail": str(c.get("detail") or "")}
                       for c in item.checks]}


__all__ = ["question_fields", "question_values"]
