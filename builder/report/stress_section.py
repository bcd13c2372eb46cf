"""The build report's "Stress-test slices" section: each slice's draw and rows, apart from the calibrated core,
and every stress item the creation-time checks rejected, with its reason (docs/stress.md)."""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from swe_taskflow.markdown import table as md_table

WHY = ("A selection that maximizes alignment with observed frequencies pushes rare intents toward zero; the "
       "paper's Appendix C (step 7) asks that rare but consequential intents, such as destructive execution "
       "commands and security-relevant code review, be evaluated as explicit stress-test slices with their own "
       "task counts, reported separately from the calibrated core and decided before optimization. These splits "
       "are those slices: they are not in the TFAS tables above, no TFAS is computed for them, and the "
       "TFAS-optimized selection never saw them.")


def stress_md(summary: Mapping[str, Any], slices: Sequence[Mapping[str, Any]]) -> list[str]:
    """Markdown lines of the section (empty when the build has no stress slice and no stress spec)."""
    if not summary.get("enabled"):
        return []
    out = ["## Stress-test slices (reported apart from the calibrated core)", "", WHY, ""]
    if slices:
        out += ["How each slice's rows were chosen: " + slices[0]["rule"] + ".", ""]
        out += md_table(["split", "kind", "tasks asked", "seed", "eligible tasks", "rows", "items tried", "chosen"],
                        [(f"`{s['split']}`", s["kind"], s["tasks_asked"], s["seed"], s["eligible"], len(s["chosen"]),
                          len(s["tried"]), ", ".join(f"`{c['question_id']}`" for c in s["chosen"]) or "none")
                         for s in slices])
        out.append("")
        short = [s for s in slices if len(s["chosen"]) < s["tasks_asked"]]
        for s in short:
            out.append(f"- `{s['split']}` holds {len(s['chosen'])} of the {s['tasks_asked']} tasks asked: "
                       f"{s['eligible']} eligible; not eligible: "
                       + ("; ".join(f"{why} ({n} tasks)" for why, n in s["not_eligible"].items()) or "none") + ".")
        if short:
            out.append("")
    counts = summary.get("by_kind_status") or {}
    out += ["### Stress items per kind and status", ""]
    out += md_table(["kind", "accepted", "rejected", "error"],
                    [(k, v.get("accepted", 0), v.get("rejected", 0), v.get("error", 0)) for k, v in counts.items()])
    out += ["", "### Rejected at creation (every stress item, with its reason)", ""]
    rejected = summary.get("rejected") or []
    out += md_table(["item", "kind", "pool", "status", "reason"],
                    [(f"`{r['question_id']}`", r["kind"], r["pool"], r["status"], r["reason"].replace("|", "/"))
                     for r in rejected]) if rejected else ["none"]
    if summary.get("unknown_task_specs"):
        out += ["", "Specs for tasks not in this build (not checked): "
                + ", ".join(f"`{x}`" for x in summary["unknown_task_specs"])]
    out += ["", f"Sandbox: {json.dumps({k: (summary.get('sandbox') or {}).get(k) for k in ('sandbox', 'tasks')})}; "
            f"writer: {(summary.get('writer') or {}).get('name', '?')}.", ""]
    return out


__all__ = ["stress_md", "WHY"]
