"""Requirement coverage for the split checks: which turn sentences can stand for a requirement sentence.

Sentences are sets of content words (see :func:`swe_taskflow.split_checks.content_words`); similarity
is an IDF-weighted F1. A sentence is compared only with sentences sharing a word with it, rarest words
first and at most :data:`CANDIDATE_BUDGET` of them, which is exact for issues of up to that many
sentences and keeps a huge issue linear instead of quadratic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence, TypeVar

#: Most sentences one sentence is compared with (rarest shared words first).
CANDIDATE_BUDGET = 128

T = TypeVar("T")


def idf_of(sents: Sequence[set[str]]) -> dict[str, float]:
    """Inverse sentence frequency of each content word of the issue: words every sentence repeats
    ("method", the project name) say little about which requirement a turn covers."""
    df: dict[str, int] = {}
    for s in sents:
        for w in s:
            df[w] = df.get(w, 0) + 1
    n = len(sents)
    return {w: math.log((n + 1) / (c + 0.5)) for w, c in df.items()}


def _wsum(words: set[str], idf: dict[str, float]) -> float:
    return sum(idf.get(w, 1.0) for w in words)


def _f1(a: set[str], b: set[str], idf: dict[str, float], wa: float | None = None, wb: float | None = None) -> float:
    """IDF-weighted F1 overlap of two word sets (1.0 for a verbatim copy); ``wa``/``wb``: their weights, if known."""
    inter = _wsum(a & b, idf)
    if inter <= 0:
        return 0.0
    wa = _wsum(a, idf) if wa is None else wa
    wb = _wsum(b, idf) if wb is None else wb
    return 2 * inter / (wa + wb)    # = 2pr/(p+r) with p = inter/wb, r = inter/wa


def _postings(sets: Iterable[set[str]]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, s in enumerate(sets):
        for w in s:
            out.setdefault(w, []).append(i)
    return out


def _candidates(words: set[str], postings: Mapping[str, list[T]], budget: int = CANDIDATE_BUDGET) -> list[T]:
    """Sentences sharing a word with ``words``, rarest words first, at most ``budget`` of them.

    A sentence that shares no word scores 0, so when the shared words' postings fit the budget (always
    when there are at most ``budget`` sentences) the result is every sentence that can score: exact.
    Past the budget the most common words stop adding candidates, which keeps a check on a huge issue
    linear in its length instead of quadratic.
    """
    ws = sorted((w for w in words if w in postings), key=lambda w: (len(postings[w]), w))
    out: set[T] = set()
    for w in ws:
        plist = postings[w]
        if len(out) + len(plist) > budget:
            if not out:
                out.update(plist[:budget])
            break
        out.update(plist)
    return sorted(out)


@dataclass(frozen=True)
class TurnIndex:
    """Turn sentences (content words) and, for each, how closely its best-matching issue sentence matches it."""

    sents: tuple[tuple[set[str], ...], ...]     # per turn, per sentence
    best: tuple[tuple[float, ...], ...]          # per turn, per sentence: max F1 over issue sentences
    weight: tuple[tuple[float, ...], ...]        # per turn, per sentence: IDF weight of its words
    postings: dict[str, list[tuple[int, int]]]   # word -> (turn, sentence) holding it


def index_turns(issue_sents: list[set[str]], turn_sents: Sequence[Sequence[set[str]]],
                idf: dict[str, float]) -> TurnIndex:
    """The turn sentences' words, best match among issue sentences, weights, and a word index."""
    exact = {frozenset(x) for x in issue_sents}
    issue_post = _postings(issue_sents)
    issue_w = [_wsum(x, idf) for x in issue_sents]
    sents, best, weight = [], [], []
    for ts in turn_sents:
        ts = tuple(ts)
        ws = tuple(_wsum(t, idf) for t in ts)
        row = []
        for t, wt in zip(ts, ws):
            if t and frozenset(t) in exact:
                row.append(1.0)      # a verbatim copy of an issue sentence: nothing matches better
            else:
                row.append(max((_f1(issue_sents[i], t, idf, issue_w[i], wt) for i in _candidates(t, issue_post)),
                               default=0.0))
        sents.append(ts)
        best.append(tuple(row))
        weight.append(ws)
    flat = [(ti, j) for ti, ts in enumerate(sents) for j in range(len(ts))]
    post = {w: [flat[i] for i in ids] for w, ids in _postings(sents[ti][j] for ti, j in flat).items()}
    return TurnIndex(tuple(sents), tuple(best), tuple(weight), post)


def coverage(need: set[str], index: TurnIndex, idf: dict[str, float], claim_ratio: float,
             window: int) -> float:
    """Best IDF-weighted share of the unit's content words found in a window of up to
    ``window`` consecutive turn sentences that the unit may claim.

    A turn sentence is claimable only if it resembles the unit nearly as much (``claim_ratio``)
    as it resembles its closest issue sentence: a verbatim copy of *another* requirement cannot
    stand in for a dropped one, while a paraphrase merging two requirements serves both. Only windows
    holding a sentence that shares a word with the unit can score, so only those are looked at.
    """
    total = _wsum(need, idf)
    if total <= 0:
        return 1.0
    claim: dict[tuple[int, int], set[str]] = {}

    def claimable(ti: int, j: int) -> set[str]:
        if (ti, j) not in claim:
            t, b = index.sents[ti][j], index.best[ti][j]
            claim[ti, j] = t if _f1(need, t, idf, total, index.weight[ti][j]) >= claim_ratio * b else set()
        return claim[ti, j]

    best = 0.0
    for ti, j in _candidates(need, index.postings):
        n = len(index.sents[ti])
        for start in range(max(0, j - window + 1), j + 1):
            acc: set[str] = set().union(*(claimable(ti, i) for i in range(start, min(n, start + window))))
            best = max(best, _wsum(need & acc, idf) / total)
    return best


__all__ = ["CANDIDATE_BUDGET", "TurnIndex", "coverage", "idf_of", "index_turns"]
