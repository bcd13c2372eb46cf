"""Agreement between label sets over the same messages (paper Appendix A's inter-model robustness check):
pairwise exact agreement, Cohen's kappa, and a confusion table. Pure: lists of labels in, numbers out.

:func:`agreement_document` is the JSON of ``classify agreement --json``; with the careful reader's labels
first and a classifier's second, its one pair's counts are the confusion matrix that ``flow measure
--confusion`` corrects a Task Flow by (:mod:`swe_taskflow.confusion`)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Mapping, Sequence

import numpy as np

from .errors import InputError
from .taxonomy import INTENTS

AGREEMENT_FORMAT = "swe-taskflow/agreement"
AGREEMENT_VERSION = 1


def _check(a: Sequence[str], b: Sequence[str]) -> None:
    if len(a) != len(b):
        raise InputError("label lists differ in length", expected=len(a), actual=len(b))
    if not a:
        raise InputError("no labels to compare")


def exact_agreement(a: Sequence[str], b: Sequence[str]) -> float:
    """Share of positions where the two labels are equal."""
    _check(a, b)
    return float(np.mean([x == y for x, y in zip(a, b)]))


def confusion(a: Sequence[str], b: Sequence[str], labels: Sequence[str] = INTENTS) -> np.ndarray:
    """Counts[i, j] = messages labelled labels[i] by ``a`` and labels[j] by ``b``."""
    _check(a, b)
    index = {lab: i for i, lab in enumerate(labels)}
    m = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for x, y in zip(a, b):
        if x not in index or y not in index:
            raise InputError("label outside the label set", actual=x if x not in index else y,
                             hint="allowed: " + ", ".join(labels))
        m[index[x], index[y]] += 1
    return m


def cohen_kappa(a: Sequence[str], b: Sequence[str], labels: Sequence[str] = INTENTS) -> float:
    """Cohen's kappa (unweighted): (p_o - p_e) / (1 - p_e); 1.0 when both raters use one identical label."""
    m = confusion(a, b, labels).astype(np.float64)
    n = m.sum()
    p_o = np.trace(m) / n
    p_e = float((m.sum(1) / n) @ (m.sum(0) / n))
    if p_e >= 1.0:
        return 1.0 if p_o >= 1.0 else 0.0
    return float((p_o - p_e) / (1.0 - p_e))


@dataclass(frozen=True)
class PairAgreement:
    a: str
    b: str
    n: int
    exact: float
    kappa: float
    confusion: np.ndarray

    def as_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "n": self.n, "exact": round(self.exact, 6),
                "kappa": round(self.kappa, 6)}


def pairwise(label_sets: Mapping[str, Sequence[str]], labels: Sequence[str] = INTENTS) -> list[PairAgreement]:
    """Every pair of named label lists (same messages, same order), in name order of the mapping."""
    if len(label_sets) < 2:
        raise InputError("agreement needs at least two label sets", actual=len(label_sets))
    return [PairAgreement(na, nb, len(a), exact_agreement(a, b), cohen_kappa(a, b, labels), confusion(a, b, labels))
            for (na, a), (nb, b) in combinations(label_sets.items(), 2)]


def agreement_document(pairs: Sequence[PairAgreement], *, n_messages: int,
                       labels: Sequence[str] = INTENTS) -> dict:
    """Figures per pair, each with its confusion counts: ``counts[i][j]`` = messages the pair's first file
    (``rows``, ``a``) labels ``labels[i]`` and its second file (``columns``, ``b``) labels ``labels[j]``."""
    return {"format": AGREEMENT_FORMAT, "format_version": AGREEMENT_VERSION, "n_messages": n_messages,
            "mean_exact": round(sum(pa.exact for pa in pairs) / len(pairs), 6),
            "pairs": [{**pa.as_dict(), "confusion": {"rows": pa.a, "columns": pa.b, "labels": list(labels),
                                                     "counts": pa.confusion.tolist()}} for pa in pairs]}


def format_confusion(m: np.ndarray, labels: Sequence[str] = INTENTS, *, drop_empty: bool = True) -> str:
    """A plain-text table (rows: first rater, columns: second); empty rows/columns dropped."""
    keep = [i for i in range(len(labels)) if not drop_empty or m[i].sum() or m[:, i].sum()]
    w = max(len(labels[i]) for i in keep) if keep else 5
    cw = max(4, max((len(str(m[i, j])) for i in keep for j in keep), default=1) + 1)
    short = [labels[i][:cw - 1] for i in keep]
    lines = [" " * w + " " + "".join(s.rjust(cw) for s in short)]
    for i in keep:
        lines.append(labels[i].ljust(w) + " " + "".join(str(m[i, j]).rjust(cw) for j in keep))
    return "\n".join(lines)
