"""Development labels of the embedded classifier (not part of the product: tools/train_heads.py and the
benchmarks fit and measure with them).

Hand labels are keyed by (session_id, message index): the texts stay in ``../shared`` (not licensed for
redistribution); only the keys and the labels are committed (``tests/data/*labels*.jsonl``). Two row shapes:
the first samples' ``{session_id, index, intent, labeler: "hand"}`` and the careful readers' rows of issue 34,
``{session_id, index, intent, confidence, labeler, conventions}`` (docs/label-conventions.md).
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
from tools.labeling import CONFIDENCES


_OLD_FIELDS = frozenset({"session_id", "index", "intent", "labeler"})
_NEW_FIELDS = _OLD_FIELDS | {"confidence", "conventions"}


@dataclass(frozen=True)
class HandLabel:
    session_id: str
    index: int
    intent: str
    confidence: str | None = None
    """``high``, ``medium`` or ``low``; None for the first samples (``labeler: "hand"``), read without one."""
    labeler: str = "hand"


def load_hand_labels(path: str | Path) -> list[HandLabel]:
    """Rows of either shape; anything else (message text, unknown fields, a missing confidence on a reader's row)
    is an error naming the file, row and field."""
    out = []
    for line, row in read_jsonl(path):
        if "text" in row:
            raise InputError("hand-label rows must not carry message text", path=str(path), row=line, field="text")
        labeler = row.get("labeler")
        if not isinstance(labeler, str) or not labeler:
            raise InputError("a label row names no labeler", path=str(path), row=line, field="labeler",
                             actual=labeler)
        fields = _OLD_FIELDS if labeler == "hand" and "confidence" not in row else _NEW_FIELDS
        if set(row) != fields:
            raise InputError("a label row has other fields than its shape allows", path=str(path), row=line,
                             field=",".join(sorted(set(row) ^ fields)), expected=sorted(fields))
        confidence = row.get("confidence")
        if confidence is not None and confidence not in CONFIDENCES:
            raise InputError("unknown confidence", path=str(path), row=line, field="confidence",
                             expected=list(CONFIDENCES), actual=confidence)
        out.append(HandLabel(str(row["session_id"]), int(row["index"]),
                             check_intent(row.get("intent"), path=str(path), row=line), confidence, labeler))
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


@dataclass(frozen=True)
class DevMessage:
    """One development message as the classifier is fitted and cross-validated on it."""

    text: str
    intent: str
    confidence: str | None
    repo: str
    """The unit of the grouped cross-validation: no repository is both fitted on and scored."""
    source: str
    """The label file's name."""


def development_set(paths, sessions: str | Path, reserved: str | Path) -> tuple[list[DevMessage], dict]:
    """The rows of the label files ``paths`` that may be fitted on, with their texts, and what was left out.

    Left out: a message whose stripped text hashes to a line of ``reserved`` (kept for independent evaluation),
    a message of a held-out repository (:data:`tools.labeling.HELD_OUT_REPOS`), and a second row for a text
    already taken (identical texts in two folds would leak; the first row, in file order, wins)."""
    from tools.labeling import HELD_OUT_REPOS, corpus_index, reserved_hashes, text_sha256

    banned, index = reserved_hashes(Path(reserved)), corpus_index(Path(sessions))
    out, seen = [], set()
    dropped = {"reserved": 0, "held_out_repository": 0, "duplicate_text": 0}
    for path in map(Path, paths):
        for lab in load_hand_labels(path):
            if (lab.session_id, lab.index) not in index:
                raise InputError("labelled message not found in the corpus", path=str(path),
                                 field="session_id/index", actual=f"{lab.session_id}/{lab.index}")
            repo, _, text = index[(lab.session_id, lab.index)]
            h = text_sha256(text)
            why = ("reserved" if h in banned else "held_out_repository" if repo in HELD_OUT_REPOS
                   else "duplicate_text" if h in seen else None)
            if why:
                dropped[why] += 1
                continue
            seen.add(h)
            out.append(DevMessage(text, lab.intent, lab.confidence, repo, path.name))
    return out, dropped


def paired_readings(first: list[HandLabel], second: list[HandLabel]) -> list[tuple[HandLabel, HandLabel]]:
    """(first reading, second reading) of every message both lists label, in ``second``'s order (a key read twice
    in ``first`` pairs with its first row)."""
    by_key: dict[tuple[str, int], HandLabel] = {}
    for lab in first:
        by_key.setdefault((lab.session_id, lab.index), lab)
    return [(by_key[(b.session_id, b.index)], b) for b in second if (b.session_id, b.index) in by_key]
