"""Development labels of the embedded classifier (not part of the product: tools/train_heads.py and the
benchmarks fit and measure with them).

Hand labels are keyed by (session_id, message index): the texts stay in ``../shared`` (not licensed for
redistribution); only the keys and the labels are committed (``tests/data/hand_labels_v1.jsonl``).
SWE-Bench Pro's own ``issue_specificity`` tags and the fixed dev/held-out half of the declared-type signal
(:mod:`builder.classify.declared`) are the other development readings; :func:`save_heads` writes a fit.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from builder.classify.declared import BUG, FEATURE
from builder.classify.embedded import LinearHead
from swe_taskflow.atomic import write_text
from swe_taskflow.errors import InputError
from swe_taskflow.hashing import compact_json_text
from swe_taskflow.jsonl import read_jsonl
from swe_taskflow.session_table import read_sessions_report
from swe_taskflow.taxonomy import check_intent


@dataclass(frozen=True)
class HandLabel:
    session_id: str
    index: int
    intent: str


def load_hand_labels(path: str | Path) -> list[HandLabel]:
    out = []
    for line, row in read_jsonl(path):
        if row.get("labeler") != "hand":
            raise InputError("not a hand label", path=str(path), row=line, field="labeler",
                             expected="hand", actual=row.get("labeler"))
        if "text" in row:
            raise InputError("hand-label rows must not carry message text", path=str(path), row=line, field="text")
        out.append(HandLabel(str(row["session_id"]), int(row["index"]),
                             check_intent(row.get("intent"), path=str(path), row=line)))
    return out


def texts_for(labels: list[HandLabel], sessions_path: str | Path) -> list[str]:
    """The message text of each hand label, looked up in the corpus file by (session_id, index)."""
    records, _ = read_sessions_report(sessions_path, skip_empty=True)
    by_key = {}
    for r in records:
        idx = r.message_index or tuple(range(len(r.texts)))
        for i, t in zip(idx, r.texts):
            by_key[(r.session_id, int(i))] = t
    texts = []
    for lab in labels:
        if (lab.session_id, lab.index) not in by_key:
            raise InputError("hand-labelled message not found in the corpus", path=str(sessions_path),
                             field="session_id/index", actual=f"{lab.session_id}/{lab.index}")
        texts.append(by_key[(lab.session_id, lab.index)])
    return texts


def specificity_type(issue_specificity: str | list[str]) -> str | None:
    """SWE-Bench Pro's own ``issue_specificity`` tags (HF export) as one type: all ``*_bug`` -> bug-fix, all
    ``*_feat`` -> new-feature; ``*_enh`` (refactoring, code quality) or a mix -> None (no single reading)."""
    tags = json.loads(issue_specificity) if isinstance(issue_specificity, str) else list(issue_specificity)
    kinds = {t.rsplit("_", 1)[-1] for t in tags}
    return {frozenset({"bug"}): BUG, frozenset({"feat"}): FEATURE}.get(frozenset(kinds))


def is_dev_half(key: str) -> bool:
    """The seeded-free, fixed dev/held-out split of the declared-type signal: sha256(key) even -> dev."""
    return int(hashlib.sha256(key.encode("utf-8")).hexdigest(), 16) % 2 == 0


def save_heads(path: str | Path, general: LinearHead, issue: LinearHead, training: dict) -> None:
    """Write the heads file (sorted keys, one trailing newline: byte-identical for identical fits)."""
    text = compact_json_text({"general": general.to_dict(), "issue": issue.to_dict(), "training": training})
    write_text(path, text + "\n")
