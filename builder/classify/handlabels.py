"""Hand labels keyed by (session_id, message index): the texts stay in ``../shared`` (not licensed for
redistribution); only the keys and the labels are committed (``tests/data/hand_labels_v1.jsonl``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from swe_taskflow.errors import InputError
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
