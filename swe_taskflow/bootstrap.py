"""Bootstrap confidence intervals for TFAS, its components and intent shares.

Rare transitions make P_R unstable, so the paper resamples *whole sessions*, never single edges.
Each corpus becomes a sparse per-session count matrix ``M`` (sessions x 216 columns, see
:func:`swe_taskflow.flow.session_count_matrix`); a batch of resamples is a dense matrix ``W`` of how
often each session was drawn (``rng.multinomial``), and the resampled counts of the whole batch are
one product ``W @ M``. Everything is seeded through ``numpy.random.default_rng(seed)``: same inputs
and seed, same intervals.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .errors import ConfigError, FlowError
from .flow import (SLICE_L, SLICE_R, SLICE_T, Flow, FlowCounts, jsd_pairs, score, session_count_matrix,
                   tfas_from_components)
from .taxonomy import RETAINED, encode

#: Cells of ``W`` (resamples x sessions) built at once; bounds memory to ~160 MB of float64.
_BATCH_CELLS = 20_000_000


@dataclass(frozen=True)
class SessionCounts:
    """A corpus kept per session, so it can be resampled: the sparse count matrix and its totals."""

    matrix: Any            # scipy.sparse.csr_matrix (n_sessions, 216)
    n_messages: int

    @property
    def n_sessions(self) -> int:
        return int(self.matrix.shape[0])

    def totals(self) -> FlowCounts:
        s = np.asarray(self.matrix.sum(axis=0)).ravel()
        return FlowCounts(s[SLICE_L].copy(), s[SLICE_T].copy(), s[SLICE_R].copy(), n_sessions=self.n_sessions,
                          n_messages=self.n_messages, n_retained=int(s[SLICE_T].sum()))


def session_counts(sessions: Sequence[Sequence[str]], *, min_messages: int = 1) -> SessionCounts:
    """Per-session counts of sessions given as intent lists, keeping those with >= ``min_messages``."""
    seqs = [s for s in sessions if len(s) >= max(1, min_messages)]
    if not seqs:
        raise FlowError("no session left to resample", field="min_messages", actual=min_messages)
    lengths = np.fromiter((len(s) for s in seqs), dtype=np.int64, count=len(seqs))
    return session_counts_from_codes(encode([label for s in seqs for label in s]), lengths)


def session_counts_from_codes(codes: np.ndarray, lengths: np.ndarray) -> SessionCounts:
    """Per-session counts from intent codes and session lengths (a session table's columns, no label lists)."""
    if not len(lengths):
        raise FlowError("no session left to resample", field="sessions", actual=0)
    return SessionCounts(session_count_matrix(codes, lengths), int(np.asarray(codes).size))


@dataclass(frozen=True)
class Interval:
    """A point estimate with its percentile bootstrap interval."""

    value: float
    lo: float
    hi: float

    def as_dict(self) -> dict[str, float]:
        return {"value": self.value, "lo": self.lo, "hi": self.hi}


@dataclass(frozen=True)
class BootstrapResult:
    """Intervals for TFAS, S_L, S_T, S_R and the benchmark's (and a resampled target's) intent shares.

    ``n_undefined`` counts resamples where a distribution was empty (e.g. no retained message was
    drawn); they are left out of the percentiles and reported here, never hidden.
    """

    n_resamples: int
    seed: int
    confidence: float
    tfas: Interval
    S_L: Interval
    S_T: Interval
    S_R: Interval
    benchmark_shares: dict[str, Interval] = field(default_factory=dict)
    target_shares: dict[str, Interval] = field(default_factory=dict)
    target_resampled: bool = False
    n_undefined: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "n_resamples": self.n_resamples, "seed": self.seed, "confidence": self.confidence,
            "method": "percentile; whole sessions resampled with replacement",
            "target_resampled": self.target_resampled, "n_undefined": self.n_undefined,
            "tfas": [self.tfas.lo, self.tfas.hi], "S_L": [self.S_L.lo, self.S_L.hi],
            "S_T": [self.S_T.lo, self.S_T.hi], "S_R": [self.S_R.lo, self.S_R.hi],
            "benchmark_shares": {k: v.as_dict() for k, v in self.benchmark_shares.items()},
            "target_shares": {k: v.as_dict() for k, v in self.target_shares.items()},
        }


def _check(n_resamples: int, confidence: float) -> None:
    if not isinstance(n_resamples, int) or n_resamples < 1:
        raise ConfigError("number of bootstrap resamples must be a positive integer", field="n_resamples",
                          actual=n_resamples)
    if not 0.0 < confidence < 1.0:
        raise ConfigError("confidence must be in (0, 1)", field="confidence", actual=confidence)


def session_draws(n: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``(size, n)`` draw counts: how often each of ``n`` sessions is drawn in each of ``size`` resamples."""
    return rng.multinomial(n, np.full(n, 1.0 / n), size=size).astype(np.float64)


def resample_counts(sc: SessionCounts, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_resamples, 216)`` resampled count vectors: each draws ``n_sessions`` sessions with replacement."""
    n = sc.n_sessions
    out = np.empty((n_resamples, sc.matrix.shape[1]), dtype=np.float64)
    batch = max(1, _BATCH_CELLS // max(n, 1))
    for start in range(0, n_resamples, batch):
        b = min(batch, n_resamples - start)
        w = session_draws(n, b, rng)
        out[start:start + b] = np.asarray((sc.matrix.T @ w.T).T)
    return out


def _normalize_rows(c: np.ndarray) -> np.ndarray:
    tot = c.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(tot > 0, c / np.where(tot > 0, tot, 1.0), 0.0)


def _interval(point: float, samples: np.ndarray, confidence: float) -> Interval:
    a = (1.0 - confidence) / 2.0
    ok = samples[np.isfinite(samples)]
    if ok.size == 0:
        return Interval(float(point), float("nan"), float("nan"))
    lo, hi = np.quantile(ok, [a, 1.0 - a])
    return Interval(float(point), float(lo), float(hi))


def share_intervals(point: np.ndarray, samples: np.ndarray, confidence: float) -> dict[str, Interval]:
    """Each retained intent's share ``point`` with the percentile interval of ``samples`` (resamples x 13)."""
    return {name: _interval(float(point[i]), samples[:, i], confidence) for i, name in enumerate(RETAINED)}


def bootstrap_score(target: Flow | SessionCounts, benchmark: SessionCounts, *, n_resamples: int = 1000,
                    seed: int = 0, confidence: float = 0.95) -> BootstrapResult:
    """Bootstrap TFAS of ``benchmark`` against ``target``, resampling whole benchmark sessions.

    A target given as a :class:`Flow` (e.g. from a target file) is held fixed; a target given as
    :class:`SessionCounts` is resampled too, independently, in the same resample batch. The point
    estimates are the scores of the unresampled corpora.
    """
    _check(n_resamples, confidence)
    rng = np.random.default_rng(seed)
    b = resample_counts(benchmark, n_resamples, rng)
    bench_flow = benchmark.totals().normalized()
    if isinstance(target, SessionCounts):
        t = resample_counts(target, n_resamples, rng)
        target_flow = target.totals().normalized()
        tL, tT, tR = (_normalize_rows(t[:, s]) for s in (SLICE_L, SLICE_T, SLICE_R))
        resampled = True
    else:
        target_flow = target
        tL, tT, tR = (np.broadcast_to(v, (n_resamples, v.size)) for v in
                      (target.length, target.intent, target.transition))
        resampled = False
    bL, bT, bR = (_normalize_rows(b[:, s]) for s in (SLICE_L, SLICE_T, SLICE_R))
    s_l, s_t, s_r = (1.0 - jsd_pairs(t, b) for t, b in ((tL, bL), (tT, bT), (tR, bR)))
    tf = tfas_from_components(s_l, s_t, s_r)
    undefined = int((~np.isfinite(tf)).sum())
    point = score(target_flow, bench_flow)
    return BootstrapResult(
        n_resamples=n_resamples, seed=seed, confidence=confidence,
        tfas=_interval(point.tfas, tf, confidence), S_L=_interval(point.S_L, s_l, confidence),
        S_T=_interval(point.S_T, s_t, confidence), S_R=_interval(point.S_R, s_r, confidence),
        benchmark_shares=share_intervals(bench_flow.intent, bT, confidence),
        target_shares=share_intervals(target_flow.intent, tT, confidence) if resampled else {},
        target_resampled=resampled, n_undefined=undefined)


def bootstrap_shares(corpus: SessionCounts, *, n_resamples: int = 1000, seed: int = 0,
                     confidence: float = 0.95) -> dict[str, Interval]:
    """Intervals for each retained intent's share of P_T, resampling whole sessions."""
    _check(n_resamples, confidence)
    rng = np.random.default_rng(seed)
    c = resample_counts(corpus, n_resamples, rng)
    return share_intervals(corpus.totals().normalized().intent, _normalize_rows(c[:, SLICE_T]), confidence)


__all__ = ["SessionCounts", "Interval", "BootstrapResult", "session_counts", "session_counts_from_codes", "resample_counts",
           "session_draws", "share_intervals", "bootstrap_score", "bootstrap_shares"]
