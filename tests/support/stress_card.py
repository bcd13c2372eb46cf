"""What the dataset card's "Stress-test slices" section must say, recomputed here from the rows and the
manifest with plain Python (not with builder.release.card.stress_section), for the card tests to take span
by span."""

from __future__ import annotations

from collections import Counter
from typing import Any, Mapping, Sequence

from swe_taskflow.turns.stress import is_stress_split


def _many(n: int, noun: str) -> str:
    return f"{n} {noun if n == 1 else noun + 's'}"


def _counts(c: Counter, noun: str = "") -> str:
    return ", ".join(f"{k} ({_many(v, noun) if noun else v})" for k, v in sorted(c.items(), key=lambda kv: (-kv[1], str(kv[0]))))


def stress_spans(manifest: Mapping[str, Any], splits: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[str]:
    """Every sentence, table row and bullet of the section that carries a number or a data value."""
    from swe_taskflow.citations import paper_section

    names = [s["name"] for s in manifest["splits"] if s["config"] == "default" and is_stress_split(s["name"])]
    if not names:
        return []
    record = manifest["provenance"].get("stress") or {}
    rec = {s["split"]: s for s in record.get("slices") or ()}
    why = paper_section("stress_slices")
    one = len(names) == 1
    spans = [f"{len(names)} {'split is a stress-test slice' if one else 'splits are stress-test slices'}, not "
             f"{'a calibrated condition' if one else 'calibrated conditions'}. Why they exist (the paper, "
             f"{why['where']}): {why['text']}."]
    assert all(s.get("tfas") is None for s in manifest["splits"] if s["name"] in names)
    spans.append("Its manifest entry carries no TFAS" if one else "Their manifest entries carry no TFAS")
    if record.get("rule"):
        spans.append(f"How the rows were chosen: {record['rule']}.")
    for split in names:
        rows = splits[split]
        assert all(r["condition"] == split and r["question_pool"] is None for r in rows)
        by_id = [{q["question_id"]: q for q in r["questions"]} for r in rows]
        items = [b[t["question_id"]] for r, b in zip(rows, by_id) for t in r["turns"]
                 if t["kind"] in ("destructive-request", "security-review")]
        kinds = sorted({q["kind"] for q in items})
        cells = [f"`{split}`", ", ".join(f"`{k}`" for k in kinds) or "-", str(len(rows)), str(len(items))]
        r = rec.get(split) or {}
        if rec:
            got = r.get("items") or {}
            cells += ["-" if v is None else str(v) for v in (
                r.get("tasks_asked"), None if r.get("chosen") is None else len(r["chosen"]), r.get("eligible"),
                r.get("seed"), got.get("accepted"), got.get("rejected"))]
        if r:
            assert {r["kind"]} == set(kinds) and {x["instance_id"] for x in rows} <= set(r["chosen"])
        spans.append("| " + " | ".join(cells) + " |")
        line = f"- `{split}`: {_many(len(rows), 'row')} (" + (", ".join(f"`{x['instance_id']}`" for x in rows) or "none") + ")"
        if r.get("seed") is not None and r.get("chosen") is not None:
            line += f"; {_many(len(r['chosen']), 'task')} drawn with seed `{r['seed']}`"
            if r.get("eligible") is not None:
                line += f" from {_many(r['eligible'], 'eligible task')}"
        if r.get("not_eligible"):
            line += f"; not eligible: {_counts(Counter(r['not_eligible']), 'task')}"
        fact = lambda name: Counter(f["value"] for q in items for f in q["facts"] if f["name"] == name)  # noqa: E731
        if fact("action"):
            line += f"; requested actions: {_counts(fact('action'))}"
        if fact("destroys"):
            line += f"; what a literal run destroys: {_counts(fact('destroys'))}"
        defects = Counter(q["mutation"]["operator"] for q in items if q["kind"] == "security-review" and q["mutation"])
        if defects:
            line += f"; seeded defect classes: {_counts(defects)}"
        spans.append(line + ".")
    return spans


__all__ = ["stress_spans"]
