"""Task-Flow distributions and TFAS, exactly as the paper's Section 3 and Appendix F define them.

- P_L: raw session lengths (all user messages) in bins 1, 2, 3, 4, 5, 6-10, 11+.
- P_T: intents over retained messages only (13 labels: greeting, meta-question, other removed).
- P_R: directed transitions between adjacent *retained* messages (excluded ones are removed first),
  with explicit START and END edges around each filtered sequence. A session with no retained
  message adds nothing to P_T or P_R (it still counts in P_L).
- JSD is the Jensen-Shannon *divergence* with base-2 logarithms; S_k = 1 - JSD(P_k, Q_k);
  TFAS = 100 * (S_L * S_T * S_R) ** (1/3).

Counts are kept unnormalized (:class:`FlowCounts`) so that corpora can be added, subtracted and
updated incrementally; each distribution is normalized on its own only when scored.
Everything here is vectorized over a whole corpus: one pass of numpy over concatenated codes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from .errors import FlowError
from .taxonomy import INTENTS, RETAINED, RETAINED_POSITION, encode

LENGTH_BINS: tuple[str, ...] = ("1", "2", "3", "4", "5", "6-10", "11+")
N_L = len(LENGTH_BINS)
N_T = len(RETAINED)
#: Transition matrix: rows are sources (13 retained intents, then START), columns are targets
#: (13 retained intents, then END). START->END is never counted.
N_SIDE = N_T + 1
N_R = N_SIDE * N_SIDE
START = N_T
END = N_T
TRANSITION_SOURCES: tuple[str, ...] = RETAINED + ("START",)
TRANSITION_TARGETS: tuple[str, ...] = RETAINED + ("END",)

# bin index for lengths 0..11 (0 is invalid and flagged by callers); 11+ clamps
_BIN_OF_LENGTH = np.array([-1, 0, 1, 2, 3, 4, 5, 5, 5, 5, 5, 6], dtype=np.int64)


def length_bins(lengths: np.ndarray | Sequence[int]) -> np.ndarray:
    """Vectorized bin index (0..6) of raw session lengths; a length below 1 is an error."""
    arr = np.asarray(lengths, dtype=np.int64)
    if arr.size and arr.min() < 1:
        bad = int(np.flatnonzero(arr < 1)[0])
        raise FlowError("a session has no user message", row=bad + 1, field="messages",
                        expected=">= 1 message", actual=int(arr[bad]))
    return _BIN_OF_LENGTH[np.minimum(arr, 11)]


def length_bin_label(n: int) -> str:
    return LENGTH_BINS[int(length_bins([n])[0])]


@dataclass(frozen=True)
class FlowCounts:
    """Unnormalized Task-Flow counts of a corpus (or of one session)."""

    length: np.ndarray      # (7,)
    intent: np.ndarray      # (13,)
    transition: np.ndarray  # (14*14,) flattened [source, target]
    n_sessions: int
    n_messages: int
    n_retained: int

    @staticmethod
    def zeros() -> "FlowCounts":
        return FlowCounts(np.zeros(N_L), np.zeros(N_T), np.zeros(N_R), 0, 0, 0)

    def __add__(self, other: "FlowCounts") -> "FlowCounts":
        return FlowCounts(self.length + other.length, self.intent + other.intent,
                          self.transition + other.transition, self.n_sessions + other.n_sessions,
                          self.n_messages + other.n_messages, self.n_retained + other.n_retained)

    def normalized(self) -> "Flow":
        return Flow(_normalize(self.length, "P_L"), _normalize(self.intent, "P_T"),
                    _normalize(self.transition, "P_R"), n_sessions=self.n_sessions,
                    n_messages=self.n_messages, n_retained=self.n_retained)


@dataclass(frozen=True)
class Flow:
    """A normalized Task Flow: the three distributions TFAS compares."""

    length: np.ndarray      # P_L (7,)
    intent: np.ndarray      # P_T (13,)
    transition: np.ndarray  # P_R (196,)
    n_sessions: int = 0
    n_messages: int = 0
    n_retained: int = 0


def _normalize(v: np.ndarray, name: str) -> np.ndarray:
    total = float(v.sum())
    if total <= 0:
        raise FlowError(f"{name} is empty: no session or retained message to measure",
                        hint="check the session filter and that messages carry retained intents")
    return np.asarray(v, dtype=np.float64) / total


def _corpus_arrays(codes, lengths) -> tuple[np.ndarray, np.ndarray]:
    """Intent codes and session lengths as int64 arrays; a FlowError when the lengths do not cover the codes."""
    codes = np.asarray(codes, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    if int(lengths.sum()) != codes.size:
        raise FlowError("session lengths do not add up to the number of messages",
                        expected=int(lengths.sum()), actual=int(codes.size))
    return codes, lengths


def counts_from_codes(codes: np.ndarray, lengths: np.ndarray) -> FlowCounts:
    """Count a whole corpus at once.

    ``codes``: int array of intent indexes (into INTENTS) of all messages, sessions concatenated
    in order; ``lengths``: messages per session (each >= 1), summing to ``len(codes)``.
    """
    codes, lengths = _corpus_arrays(codes, lengths)
    n_sess = lengths.size
    L = np.bincount(length_bins(lengths), minlength=N_L).astype(np.float64)
    rp, _, edge_sess, edges = _retained_and_edges(codes, lengths)
    T = np.bincount(rp, minlength=N_T).astype(np.float64)
    R = np.bincount(edges, minlength=N_R).astype(np.float64) if edges.size else np.zeros(N_R, dtype=np.float64)
    return FlowCounts(L, T, R, n_sessions=int(n_sess), n_messages=int(codes.size),
                      n_retained=int(rp.size))


def _retained_and_edges(codes: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, ...]:
    """Retained positions of the kept messages, and each transition edge with its session index.

    Returns ``(rp, session, edge_session, edge_code)``: ``rp`` the retained index (0..12) of every
    retained message in corpus order and ``session`` its session; ``edge_code = source * N_SIDE +
    target`` of every START, inner and END edge, and ``edge_session`` the session each edge belongs to.
    """
    n_sess = lengths.size
    pos = RETAINED_POSITION[codes] if codes.size else np.zeros(0, dtype=np.int64)
    keep = pos >= 0
    rp = pos[keep]
    if not rp.size:
        empty = np.zeros(0, dtype=np.int64)
        return rp, empty, empty, empty
    sess = np.repeat(np.arange(n_sess), lengths)[keep]
    same = sess[1:] == sess[:-1]
    first = np.ones(rp.size, dtype=bool)
    first[1:] = ~same
    last = np.ones(rp.size, dtype=bool)
    last[:-1] = ~same
    edges = np.concatenate([
        START * N_SIDE + rp[first],
        rp[:-1][same] * N_SIDE + rp[1:][same],
        rp[last] * N_SIDE + END,
    ])
    edge_sess = np.concatenate([sess[first], sess[:-1][same], sess[last]])
    return rp, sess, edge_sess, edges


#: Column layout of :func:`session_count_matrix`: length bins, then intents, then transitions.
SLICE_L = slice(0, N_L)
SLICE_T = slice(N_L, N_L + N_T)
SLICE_R = slice(N_L + N_T, N_L + N_T + N_R)
N_COLUMNS = N_L + N_T + N_R


def session_count_matrix(codes: np.ndarray, lengths: np.ndarray):
    """Per-session counts as a sparse ``(n_sessions, 7 + 13 + 196)`` CSR matrix (float64).

    Row ``i`` holds session ``i``'s length-bin one-hot, its retained-intent counts and its
    transition counts (columns :data:`SLICE_L`, :data:`SLICE_T`, :data:`SLICE_R`); the column sums
    equal :func:`counts_from_codes`. Bootstrap resamples multiply resample weights by this matrix.
    """
    from scipy import sparse

    codes, lengths = _corpus_arrays(codes, lengths)
    n_sess = lengths.size
    rp, msg_sess, edge_sess, edges = _retained_and_edges(codes, lengths)
    rows = np.concatenate([np.arange(n_sess), msg_sess, edge_sess])
    cols = np.concatenate([length_bins(lengths) + SLICE_L.start, rp + SLICE_T.start, edges + SLICE_R.start])
    data = np.ones(rows.size, dtype=np.float64)
    m = sparse.csr_matrix((data, (rows, cols)), shape=(n_sess, N_COLUMNS))
    m.sum_duplicates()
    return m


def count_sessions(sessions: Iterable[Sequence[str]], *, min_messages: int = 1) -> FlowCounts:
    """Count sessions given as lists of intent labels, keeping those with >= ``min_messages``."""
    seqs = [list(s) for s in sessions if len(s) >= max(1, min_messages)]
    lengths = np.fromiter((len(s) for s in seqs), dtype=np.int64, count=len(seqs))
    flat = [label for s in seqs for label in s]
    return counts_from_codes(encode(flat), lengths)


def measure(sessions: Iterable[Sequence[str]], *, min_messages: int = 1) -> Flow:
    """The normalized Task Flow of sessions given as lists of intent labels."""
    return count_sessions(sessions, min_messages=min_messages).normalized()


def jsd(p: np.ndarray, q: np.ndarray) -> float:
    """Jensen-Shannon divergence, base 2, of two distributions on one support (0 log 0 = 0)."""
    return float(jsd_many(np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)[None, :])[0])


def _jsd_rows(ps: np.ndarray, qs: np.ndarray) -> np.ndarray:
    """Row-wise JSD (base 2) of broadcastable 2-D stacks, clipped to [0, 1]."""
    m = 0.5 * (ps + qs)
    with np.errstate(divide="ignore", invalid="ignore"):
        kp = np.where(ps > 0, ps * np.log2(ps / m), 0.0).sum(axis=1)
        kq = np.where(qs > 0, qs * np.log2(qs / m), 0.0).sum(axis=1)
    return np.clip(0.5 * (kp + kq), 0.0, 1.0)


def jsd_many(p: np.ndarray, qs: np.ndarray) -> np.ndarray:
    """JSD (base 2) of one distribution ``p`` (k,) against each row of ``qs`` (n, k), vectorized."""
    p = np.asarray(p, dtype=np.float64)
    qs = np.atleast_2d(np.asarray(qs, dtype=np.float64))
    if p.shape[-1] != qs.shape[-1]:
        raise FlowError("distributions have different supports", expected=p.shape[-1], actual=qs.shape[-1])
    return _jsd_rows(p[None, :], qs)


def jsd_pairs(ps: np.ndarray, qs: np.ndarray) -> np.ndarray:
    """Row-wise JSD (base 2) of two ``(n, k)`` stacks of distributions; a row that is all zero gives NaN."""
    ps = np.atleast_2d(np.asarray(ps, dtype=np.float64))
    qs = np.atleast_2d(np.asarray(qs, dtype=np.float64))
    if ps.shape != qs.shape:
        raise FlowError("distribution stacks have different shapes", expected=ps.shape, actual=qs.shape)
    out = _jsd_rows(ps, qs)
    bad = ~(np.isclose(ps.sum(axis=1), 1.0) & np.isclose(qs.sum(axis=1), 1.0))
    out[bad] = np.nan
    return out


def jsd_terms(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Each support element's share of JSD(p, q): ``0.5 * (p log2(p/m) + q log2(q/m))``, >= 0, summing to the JSD."""
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    m = 0.5 * (p + q)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = 0.5 * (np.where(p > 0, p * np.log2(p / m), 0.0) + np.where(q > 0, q * np.log2(q / m), 0.0))
    return np.maximum(t, 0.0)


@dataclass(frozen=True)
class TFASScore:
    """TFAS with its three components (every reported TFAS comes with them)."""

    tfas: float
    S_L: float
    S_T: float
    S_R: float

    def as_dict(self) -> dict[str, float]:
        return {"tfas": self.tfas, "S_L": self.S_L, "S_T": self.S_T, "S_R": self.S_R}


def tfas_from_components(s_l, s_t, s_r):
    """TFAS = 100 * geometric mean of the components; works on scalars and arrays."""
    return 100.0 * np.cbrt(np.asarray(s_l) * np.asarray(s_t) * np.asarray(s_r))


def score(target: Flow, benchmark: Flow) -> TFASScore:
    """TFAS of ``benchmark`` against ``target``."""
    s_l = 1.0 - jsd(target.length, benchmark.length)
    s_t = 1.0 - jsd(target.intent, benchmark.intent)
    s_r = 1.0 - jsd(target.transition, benchmark.transition)
    return TFASScore(float(tfas_from_components(s_l, s_t, s_r)), s_l, s_t, s_r)


__all__ = [
    "LENGTH_BINS", "N_L", "N_T", "N_R", "N_SIDE", "START", "END", "TRANSITION_SOURCES",
    "TRANSITION_TARGETS", "INTENTS", "FlowCounts", "Flow", "TFASScore", "length_bins",
    "length_bin_label", "counts_from_codes", "count_sessions", "measure", "jsd", "jsd_many",
    "tfas_from_components", "score", "jsd_pairs", "jsd_terms", "session_count_matrix", "SLICE_L",
    "SLICE_T", "SLICE_R", "N_COLUMNS",
]
