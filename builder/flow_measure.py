"""Measure a Task Flow from a sessions file: read it (Arrow), keep the sessions that are measured, label the
messages that carry no intent (through the label cache), count, and (given a confusion file) correct the counts
for the classifier's errors. The one algorithm behind ``flow measure``, ``flow score/gap/plot`` on a sessions
file and the shipped default targets (tools/default_target.py)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from swe_taskflow.errors import ModelError
from swe_taskflow.flow import FlowCounts
from swe_taskflow.session_table import SessionTable, read_session_table

if TYPE_CHECKING:
    from swe_taskflow.confusion import Confusion

Note = Callable[[str], None]
def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr)     # sys.stderr looked up at each call: it may be replaced (pytest, a GUI)


@dataclass(frozen=True)
class Labelling:
    """How messages without an intent are labelled."""

    classifier: str = "embedded"
    device: str = "auto"
    label_cache: bool = True


def _load_classifier(labelling: Labelling):
    try:
        from .classify import load_classifier
    except ImportError as exc:
        raise ModelError("the sessions have unlabelled messages and no classifier is available",
                         field="classifier", actual=labelling.classifier,
                         hint=f"install the build extra (pip install 'swe-taskflow[build]') or label the "
                              f"messages first ({exc})") from None
    return load_classifier(labelling.classifier, device=labelling.device)


def read_labelled(path: str, *, labelling: Labelling = Labelling(), skip_empty: bool = False,
                  keep_messages: bool = False, select: Callable[[SessionTable], SessionTable] | None = None,
                  note: Note = _stderr) -> tuple[SessionTable, dict[str, Any], int]:
    """Sessions of ``path`` (those ``select`` keeps, if given) with every message labelled.

    Returns (table, classifier info, number of empty sessions skipped). Texts are kept only when asked for
    (``keep_messages``) or when messages must be classified (then the file is read again with them: classifying
    dominates that run). Selection comes before classification, so only the messages measured are classified.
    """
    table, skipped = read_session_table(path, skip_empty=skip_empty, keep_messages=keep_messages)
    if not table.labelled and not keep_messages:
        table, skipped = read_session_table(path, skip_empty=skip_empty, keep_messages=True)
    for sk in skipped:
        note(f"{path}:{sk.line}: skipped session {sk.session_id}: {sk.reason}")
    if skipped:
        note(f"{path}: {len(skipped)} empty session(s) skipped, {table.n_sessions} read")
    if select is not None:
        table = select(table)
        if not table.n_sessions:
            return table, {}, len(skipped)
    if table.labelled:
        return table, {"name": "input-labels", "note": "intents given in the sessions file"}, len(skipped)
    from .classify import label_texts
    from swe_taskflow.sessions import label_sessions

    clf = _load_classifier(labelling)
    note(f"{path}: classifying {int((table.codes < 0).sum())} unlabelled message(s) with {labelling.classifier}")
    labelled = SessionTable.from_records(
        label_sessions(table.records(), lambda texts: label_texts(texts, clf, cache=labelling.label_cache)),
        table.lines)
    return labelled, dict(clf.info), len(skipped)


@dataclass(frozen=True)
class Measured:
    """A measured sessions file: the sessions kept (labelled), their counts and how they were chosen."""

    table: SessionTable
    counts: FlowCounts
    classifier: dict[str, Any]
    n_read: int
    n_skipped: int
    n_long: int
    """Sessions with at least ``min_messages`` messages, before the per-repository cap."""


def measure_file(path: str, *, min_messages: int, cap_per_repo: int | None = None, seed: int = 0,
                 labelling: Labelling = Labelling(), skip_empty: bool = False, keep_messages: bool = False,
                 note: Note = _stderr) -> Measured:
    """Read, keep sessions of at least ``min_messages`` messages, cap each repository at ``cap_per_repo`` sessions
    (a seeded sample), label, count."""
    facts: dict[str, int] = {}

    def select(table: SessionTable) -> SessionTable:
        facts["read"] = table.n_sessions
        kept = table.filter_min_messages(min_messages)
        facts["long"] = kept.n_sessions
        if cap_per_repo is not None:
            kept = kept.cap_per_repo(cap_per_repo, np.random.default_rng(seed))
            note(f"{path}: capped at {cap_per_repo} per repo: {kept.n_sessions} of {facts['long']} sessions kept")
        return kept

    table, info, n_skipped = read_labelled(path, labelling=labelling, skip_empty=skip_empty,
                                           keep_messages=keep_messages, select=select, note=note)
    return Measured(table, table.counts() if table.n_sessions else FlowCounts.zeros(), info, facts["read"],
                    n_skipped, facts["long"])


RAW_BOOTSTRAP = "percentile; whole sessions resampled with replacement"
CORRECTED_BOOTSTRAP = ("percentile; whole sessions resampled with replacement and each row of the "
                       "misclassification matrix drawn from its Dirichlet posterior, the correction redone per resample")


def target_counts(m: Measured, *, confusion: Confusion | None = None, bootstrap: int = 0, seed: int = 0,
                  confidence: float = 0.95, note: Note = _stderr) -> tuple[FlowCounts, dict[str, Any]]:
    """The counts a target file holds, raw or (given the classifier's ``confusion`` on held-out labels, read by
    ``swe_taskflow.confusion.load_confusion`` before anything is classified) corrected for its errors, and the
    file's ``correction`` / ``bootstrap`` records (``bootstrap`` resamples)."""
    from swe_taskflow.bootstrap import bootstrap_shares, share_intervals
    from swe_taskflow.target import bootstrap_record

    extra: dict[str, Any] = {}
    if confusion is None:
        if bootstrap:
            iv = bootstrap_shares(m.table.session_counts(), n_resamples=bootstrap, seed=seed, confidence=confidence)
            extra["bootstrap"] = bootstrap_record(iv, n_resamples=bootstrap, seed=seed, confidence=confidence,
                                                  method=RAW_BOOTSTRAP)
        return m.counts, extra
    from swe_taskflow.correction import METHOD, bootstrap_corrected_shares, correct

    if m.classifier.get("name") == "input-labels":
        note("note: the sessions carry their intents; --confusion treats them as the classifier's predictions")
    if confusion.unlabelled_rows:
        note(f"{confusion.source}: no labelled message of {', '.join(confusion.unlabelled_rows)}: their rows are the prior")
    corrected = correct(m.table.codes, m.table.lengths, confusion.matrix())
    extra["correction"] = {"method": METHOD, **confusion.record(),
                           "expected_retained_messages": round(float(corrected.counts.intent.sum()), 6),
                           "raw_P_T": [round(float(x), 12) for x in m.counts.normalized().intent]}
    if bootstrap:
        samples = bootstrap_corrected_shares(m.table.codes, m.table.lengths, confusion.draw, n_resamples=bootstrap,
                                             rng=np.random.default_rng(seed))
        iv = share_intervals(corrected.counts.normalized().intent, samples, confidence)
        extra["bootstrap"] = bootstrap_record(iv, n_resamples=bootstrap, seed=seed, confidence=confidence,
                                              method=CORRECTED_BOOTSTRAP)
    return corrected.counts, extra


__all__ = ["Labelling", "Measured", "read_labelled", "measure_file", "target_counts"]
