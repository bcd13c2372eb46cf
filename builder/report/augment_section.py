"""The build report's "Augmentations" section: TFAS with and without the new turns (components beside
the aggregate), what the creation-time checks accepted and rejected (with every reason), what could
not be proposed, and where the classifier disagrees with the kinds' declared intents."""

from __future__ import annotations

import json
from typing import Any, Mapping

from swe_taskflow.markdown import table as md_table


def augmentation_md(data: Mapping[str, Any]) -> list[str]:
    """Markdown lines of the section (empty when the build made no augmentation turn)."""
    stage, table = data.get("stage") or {}, data.get("tfas") or []
    if not stage.get("enabled"):
        return []
    out = ["## Augmentations (execute, debug, planning, review)", "",
           "Verifiable turns for intents the paper leaves open (docs/augmentations.md). "
           f"Kinds: {', '.join(stage.get('kinds', [])) or 'none (hand-written specs only)'}; "
           f"writer: {(stage.get('writer') or {}).get('name', '?')}; "
           f"sandbox: {(stage.get('sandbox') or {}).get('sandbox', 'none')}.", ""]
    if table:
        out += ["### TFAS of the optimized selection with and without the new augmentations", "",
                "Same target, search, seed and constraints; only the candidate family differs "
                "(`only <kind>`: that kind alone). Measured unfiltered, like Table 2.", ""]
        out += md_table(["family", "S_L", "S_T", "S_R", "TFAS", "turns", "augmentation turns", "by kind"],
                      [(r["family"], f"{r['S_L']:.3f}", f"{r['S_T']:.3f}", f"{r['S_R']:.3f}", f"{r['tfas']:.1f}",
                        r["turns"], r["augmentation_turns"],
                        json.dumps(r["by_kind"], sort_keys=True) if r["by_kind"] else "-") for r in table])
        out.append("")
    counts = stage.get("by_kind_status") or {}
    out += ["### Items per kind and status", ""]
    out += md_table(["kind", "accepted", "rejected", "error"],
                  [(k, v.get("accepted", 0), v.get("rejected", 0), v.get("error", 0)) for k, v in counts.items()])
    out += ["", "### Rejected at creation (every item, with its reason)", ""]
    rejected = stage.get("rejected") or []
    out += md_table(["item", "kind", "pool", "status", "reason"],
                  [(f"`{r['question_id']}`", r["kind"], r["pool"], r["status"], r["reason"].replace("|", "/"))
                   for r in rejected]) if rejected else ["none"]
    out += ["", "### Not proposed", ""]
    np_ = stage.get("not_proposed") or {}
    out += [f"- **{k}**: " + "; ".join(f"{why} ({n} tasks)" for why, n in v.items()) for k, v in np_.items()] or ["none"]
    if stage.get("unknown_task_specs"):
        out.append("- hand-written specs for tasks not in this build (not checked): "
                   + ", ".join(f"`{x}`" for x in stage["unknown_task_specs"]))
    if stage.get("not_tried_after_acceptance"):
        out.append(f"- generated specs not tried once a kind had its items: "
                   f"{json.dumps(stage['not_tried_after_acceptance'], sort_keys=True)}")
    dis = data.get("disagreements") or {}
    out += ["", "### Classifier on the generated texts", "",
            f"Turn intents used for TFAS: **{data.get('intents', 'declared')}** "
            "(`declared`: the kind's intent; `classify`: the classifier's label, as for every message).", ""]
    if dis:
        out += md_table(["kind", "declared intent", "texts", "labelled as declared", "labels"],
                      [(k, v["declared"], v["texts"], v["agree"], json.dumps(v["labels"], sort_keys=True))
                       for k, v in dis.items()])
        items = [(k, i) for k, v in dis.items() for i in v["items"]]
        if items:
            out += ["", "Disagreements:", ""]
            out += [f"- `{i['question_id']}` ({k}, {i['status']}): labelled **{i['label']}**" for k, i in items]
    else:
        out.append("No generated text.")
    out.append("")
    return out


__all__ = ["augmentation_md"]
