"""Task Flows corrected for the classifier's errors (issue 34, part 4).

A classifier at 75% agreement still moves a Task Flow: it confuses bug-fix with debug and planning with
new-feature, and it moves messages in and out of the excluded labels (greeting, meta-question, other), which
also changes which messages the transitions skip. A target measured by a classifier carries its errors as a
bias, and selection optimizes towards it. The correction removes that bias on average, given the
classifier's misclassification matrix ``M[true, predicted]`` (rows sum to 1; :mod:`swe_taskflow.confusion`),
assuming independent errors per message:

1. **Raw adjacent pairs, deconvolved.** A true raw pair ``i -> j`` (16 intents, ``START`` before a session's
   first message, ``END`` after its last, excluded labels kept) is predicted as ``a -> b`` with probability
   ``M[i, a] * M[j, b]`` (``START``/``END`` are never misread), so ``E[N_pred] = n * Ms^T P Mt``. The true pair
   distribution ``P`` is its maximum-likelihood value, found by EM (each step stays on the simplex: no
   negative share; the log-likelihood is concave in ``P``). This holds whatever the sequences look like.
2. **Shares and adjacent transitions from P.** Every message is the target of exactly one raw pair, so the
   intent counts (``P_T``) are ``P``'s target marginal; transitions between *adjacent* retained messages
   (``START -> first``, ``last -> END`` included) are ``P``'s retained cells.
3. **Transitions that skip excluded messages, from each session's posterior.** ``P_R`` also holds edges
   ``a -> b`` with excluded messages between them (and ``START``/``END`` edges over an excluded prefix or
   suffix): pairs cannot tell those. ``P`` defines a first-order Markov chain of the true intents; each
   session's posterior over its true label sequence given its predicted labels (forward-backward with
   emission ``M``) gives the expected count of those skipping edges (a forward pass that carries the last
   retained intent). This part alone leans on the Markov model, and only where excluded messages sit
   between retained ones.

``P_L`` counts every message, so it does not depend on labels and is kept. With ``M`` the identity the
corrected flow is the raw one. The bootstrap (:func:`bootstrap_corrected_shares`) draws whole sessions and a
matrix per resample and redoes steps 1-2, so its share intervals hold the classification uncertainty too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .errors import FlowError
from .flow import END, N_SIDE, N_T, START, FlowCounts, length_bins, N_L
from .taxonomy import INTENTS, RETAINED_POSITION

K = len(INTENTS)
#: Raw pair axes: sources are the 16 intents then START, targets the 16 intents then END.
RAW_START = K
RAW_END = K
N_RAW = (K + 1) * (K + 1)
_IS_RET = RETAINED_POSITION >= 0
_RET_CODES = np.flatnonzero(_IS_RET)        # intent codes of the 13 retained intents, in retained order
_EXC_CODES = np.flatnonzero(~_IS_RET)
_SIDE = np.append(_RET_CODES, K)            # raw index of each flow side (13 retained, then START / END)

#: EM stops when no cell of P moves more than this in a cycle (or after MAX_ITER EM steps).
TOL = 1e-10
MAX_ITER = 20_000
#: EM tolerance of bootstrap resamples: their spread is many orders above it.
BOOTSTRAP_TOL = 1e-8
#: Cells (resamples x sessions) of one bootstrap batch's draw counts (~160 MB of float64).
_BATCH_CELLS = 20_000_000
METHOD = ("EM deconvolution of the predicted raw adjacent pairs through M x M (shares and adjacent transitions); "
          "transitions that skip excluded messages: posterior expected counts under the Markov chain of the "
          "deconvolved pairs")


# ------------------------------------------------------------------------------------------ raw adjacent pairs

def raw_pair_codes(codes: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every raw adjacent pair (``START -> first``, inner, ``last -> END``) as ``source * 17 + target``,
    with the index of its session; excluded labels are *not* removed here."""
    codes = np.asarray(codes, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    n = lengths.size
    ends = np.cumsum(lengths)
    starts = ends - lengths
    inner = np.ones(codes.size, dtype=bool)
    inner[starts] = False                                  # position p pairs with p - 1 unless p starts a session
    pos = np.flatnonzero(inner)
    pairs = np.concatenate([RAW_START * (K + 1) + codes[starts], codes[pos - 1] * (K + 1) + codes[pos],
                            codes[ends - 1] * (K + 1) + RAW_END])
    sess = np.repeat(np.arange(n), lengths)
    return pairs, np.concatenate([np.arange(n), sess[pos], np.arange(n)])


def raw_pair_counts(codes: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The ``(17, 17)`` raw adjacent pair counts of a corpus."""
    pairs, _ = raw_pair_codes(codes, lengths)
    return np.bincount(pairs, minlength=N_RAW).astype(np.float64).reshape(K + 1, K + 1)


def session_pair_matrix(codes: np.ndarray, lengths: np.ndarray):
    """Per-session raw pair counts, a sparse ``(n_sessions, 289)`` CSR matrix (bootstrap: ``W @ matrix``)."""
    from scipy import sparse

    pairs, sess = raw_pair_codes(codes, lengths)
    m = sparse.csr_matrix((np.ones(pairs.size), (sess, pairs)), shape=(np.asarray(lengths).size, N_RAW))
    m.sum_duplicates()
    return m


def extend(m: np.ndarray) -> np.ndarray:
    """``M`` (..., 16, 16) with a 17th row and column for ``START`` / ``END``, which are never misread."""
    m = np.asarray(m, dtype=np.float64)
    out = np.zeros(m.shape[:-2] + (K + 1, K + 1))
    out[..., :K, :K] = m
    out[..., K, K] = 1.0
    return out


def _allowed() -> np.ndarray:
    a = np.ones((K + 1, K + 1))
    a[RAW_START, RAW_END] = 0.0                             # every session has a message
    return a


def deconvolve_pairs(counts: np.ndarray, m: np.ndarray, *, tol: float = TOL,
                     max_iter: int = MAX_ITER) -> tuple[np.ndarray, int]:
    """Maximum-likelihood true raw pair distribution ``P`` (..., 17, 17) from observed pair counts.

    ``counts`` (..., 17, 17) observed (predicted-label) pair counts; ``m`` (..., 16, 16) the
    misclassification matrix ``M[true, predicted]``; leading axes are a batch (bootstrap resamples).
    EM from an interior start, accelerated by SQUAREM (Varadhan and Roland 2008: two EM steps, an
    extrapolation, one EM step from there, kept only when it stays on the simplex and its likelihood is
    not below the two plain steps'), until no cell moves more than ``tol`` in a cycle. Returns ``(P, EM steps)``.
    """
    counts = np.asarray(counts, dtype=np.float64)
    me = extend(m)
    shape = np.broadcast_shapes(counts.shape, me.shape)
    counts = np.broadcast_to(counts, shape).reshape(-1, K + 1, K + 1)
    me = np.broadcast_to(me, shape).reshape(-1, K + 1, K + 1)
    mt = np.swapaxes(me, -1, -2)
    total = counts.sum(axis=(-1, -2), keepdims=True)
    if (total <= 0).any():
        raise FlowError("no message pair to deconvolve", field="sessions")
    allowed = _allowed()
    p = allowed / allowed.sum() * 0.5 + counts / total * 0.5
    if ((counts > 0) & (mt @ p @ me <= 0)).any():           # p is interior: only M can make a seen pair impossible
        raise FlowError("predicted labels that no true intent produces under the confusion matrix",
                        field="confusion", hint="every predicted label needs a column of M with a positive entry")
    todo = np.arange(p.shape[0])                            # batch entries not converged yet
    steps = 0
    while todo.size and steps < max_iter:
        n, a, at = counts[todo] / total[todo], me[todo], mt[todo]
        seen = n > 0

        def em(q: np.ndarray) -> np.ndarray:
            new = q * (a @ np.divide(n, at @ q @ a, out=np.zeros_like(q), where=seen) @ at) * allowed
            return new / new.sum(axis=(-1, -2), keepdims=True)

        def loglik(q: np.ndarray) -> np.ndarray:
            pred = at @ q @ a
            return (n * np.log(np.where(seen, pred, 1.0))).sum(axis=(-1, -2))

        p0 = p[todo]
        p1 = em(p0)
        p2 = em(p1)
        r, v = p1 - p0, p2 - 2 * p1 + p0
        rn = np.sqrt((r * r).sum(axis=(-1, -2), keepdims=True))
        vn = np.sqrt((v * v).sum(axis=(-1, -2), keepdims=True))
        alpha = np.minimum(-rn / np.where(vn > 0, vn, 1.0), -1.0)
        ext = p0 - 2 * alpha * r + alpha * alpha * v
        feasible = (ext >= 0).all(axis=(-1, -2), keepdims=True)
        p3 = em(np.where(feasible, ext, p2))
        new = np.where((loglik(p3) >= loglik(p2))[:, None, None], p3, p2)
        steps += 3
        p[todo] = new
        todo = todo[np.abs(new - p0).max(axis=(-1, -2)) >= tol]
    return p.reshape(shape), steps


# ------------------------------------------------------------------------------------------ from P to flow counts

def intent_shares(p: np.ndarray) -> np.ndarray:
    """Retained intent shares (..., 13) of raw pair distributions ``p`` (..., 17, 17): their target marginal."""
    t = np.asarray(p)[..., :, _RET_CODES].sum(axis=-2)
    return t / t.sum(axis=-1, keepdims=True)


def adjacent_transitions(p: np.ndarray) -> np.ndarray:
    """``p``'s cells between retained intents, ``START`` and ``END`` as a ``(14, 14)`` flow transition matrix
    (``START -> END`` is not a transition): the transitions between adjacent retained messages."""
    r = np.asarray(p)[np.ix_(_SIDE, _SIDE)].copy()
    r[START, END] = 0.0
    return r


@dataclass(frozen=True)
class Chain:
    """A first-order Markov chain of true intents: ``start`` (16,), ``step`` (16, 17) whose last column is the
    probability to end after the intent. Built from a raw pair distribution."""

    start: np.ndarray
    step: np.ndarray

    @staticmethod
    def from_pairs(p: np.ndarray) -> "Chain":
        p = np.asarray(p, dtype=np.float64)
        start = p[RAW_START, :K] / p[RAW_START, :K].sum()
        tot = p[:K].sum(axis=1, keepdims=True)
        step = np.where(tot > 0, p[:K] / np.where(tot > 0, tot, 1.0), 1.0 / (K + 1))   # an unseen intent's row is never used
        return Chain(start, step)


# ------------------------------------------------------------------------------------------ the skipping edges

def skipping_transitions(codes: np.ndarray, lengths: np.ndarray, chain: Chain, m: np.ndarray) -> np.ndarray:
    """Expected counts ``(14, 14)`` of the flow's transitions that skip at least one excluded message, given
    the predicted ``codes`` (sessions of ``lengths``), the chain of true intents and ``M[true, predicted]``.

    Sessions are sorted by length (longest first), so those still running at position t are a prefix; one
    numpy step per position. Scaled forward ``alpha`` and backward ``beta`` as usual, then a forward pass of
    ``phi[s, l, z]`` = P(labels up to t, z_t = z, last retained intent before t = l) / scaling (``l`` one of the
    13 retained intents or ``START``; it sums over ``l`` to ``alpha``). An edge ``l -> b`` at t skips when
    z_{t-1} is excluded; an ``l -> END`` edge skips when the last message is excluded.
    """
    codes = np.asarray(codes, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    order = np.argsort(-lengths, kind="stable")
    starts = (np.cumsum(lengths) - lengths)[order]
    sl = lengths[order]
    maxlen = int(sl[0])
    active = [int(np.searchsorted(-sl, -t, side="right")) for t in range(1, maxlen + 1)] + [0]
    obs = [codes[starts[:active[t]] + t] for t in range(maxlen)]
    m = np.asarray(m, dtype=np.float64)
    trans, to_end = chain.step[:, :K], chain.step[:, K]
    emit = m.T                                               # emit[o] = M[:, o]
    alpha: list[np.ndarray] = []
    scale: list[np.ndarray] = []
    for t in range(maxlen):
        a = chain.start * emit[obs[t]] if t == 0 else (alpha[t - 1][:active[t]] @ trans) * emit[obs[t]]
        c = a.sum(axis=1)
        if (c <= 0).any():
            raise FlowError("predicted labels that no true intent produces under the confusion matrix",
                            field="confusion")
        alpha.append(a / c[:, None])
        scale.append(c)
    beta: list[np.ndarray] = [np.empty(0)] * maxlen
    for t in range(maxlen - 1, -1, -1):
        k, k_next = active[t], active[t + 1]
        b = np.empty((k, K))
        if k_next:
            b[:k_next] = ((emit[obs[t + 1]] * beta[t + 1]) @ trans.T) / scale[t + 1][:, None]
        b[k_next:] = to_end[None, :] / (alpha[t][k_next:] @ to_end)[:, None]     # sessions whose last message is t
        beta[t] = b
    counts = np.zeros((N_SIDE, N_SIDE))
    phi = np.zeros((active[0], N_SIDE, K))
    phi[:, START, :] = alpha[0]
    for t in range(maxlen):
        k, k_next = active[t], active[t + 1]
        ending = phi[k_next:k] * beta[t][k_next:, None, :]               # l -> END past an excluded last message
        counts[:N_T, END] += ending[:, :N_T][..., _EXC_CODES].sum(axis=(0, 2))
        if not k_next:
            break
        e = emit[obs[t + 1]][:, None, :] / scale[t + 1][:, None, None]
        skip = (phi[:k_next][..., _EXC_CODES] @ trans[_EXC_CODES]) * e    # arrived at t+1 from an excluded z_t
        counts[:, :N_T] += (skip * beta[t + 1][:, None, :])[..., _RET_CODES].sum(axis=0)
        carry = np.zeros((k_next, N_SIDE, K))
        carry[:, np.arange(N_T), _RET_CODES] = alpha[t][:k_next][:, _RET_CODES]   # z_t retained: it is the new l
        phi = (carry @ trans) * e + skip
    return counts


# ------------------------------------------------------------------------------------------ the corrected flow

@dataclass(frozen=True)
class Corrected:
    """A corpus' flow counts corrected for the classifier's errors: expected true counts (floats)."""

    counts: FlowCounts
    pairs: np.ndarray        # the deconvolved raw pair distribution (17, 17)
    em_steps: int


def correct(codes: np.ndarray, lengths: np.ndarray, m: np.ndarray) -> Corrected:
    """The corrected flow counts of predicted ``codes`` (sessions of ``lengths``) under ``M[true, predicted]``."""
    codes = np.asarray(codes, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    if not lengths.size:
        raise FlowError("no session to correct", field="sessions")
    if codes.min() < 0 or codes.max() >= K:
        raise FlowError("every message needs a predicted intent to be corrected", field="intent")
    n_pairs = codes.size + lengths.size                    # START -> first, the inner pairs, last -> END
    p, steps = deconvolve_pairs(raw_pair_counts(codes, lengths), m)
    intents = n_pairs * p[:, _RET_CODES].sum(axis=0)
    transitions = n_pairs * adjacent_transitions(p) + skipping_transitions(codes, lengths, Chain.from_pairs(p), m)
    lengths_hist = np.bincount(length_bins(lengths), minlength=N_L).astype(np.float64)
    counts = FlowCounts(lengths_hist, intents, transitions.reshape(-1), n_sessions=int(lengths.size),
                        n_messages=int(codes.size), n_retained=int(_IS_RET[codes].sum()))
    return Corrected(counts, p, steps)


def bootstrap_corrected_shares(codes: np.ndarray, lengths: np.ndarray,
                               draw_m: Callable[[np.random.Generator, int], np.ndarray], *, n_resamples: int,
                               rng: np.random.Generator) -> np.ndarray:
    """``(n_resamples, 13)`` corrected intent shares, each from whole sessions drawn with replacement AND a
    misclassification matrix drawn by ``draw_m(rng, size)`` (:meth:`swe_taskflow.confusion.Confusion.draw`),
    so their spread holds the classification uncertainty as well as the sampling."""
    from .bootstrap import session_draws

    pair_matrix = session_pair_matrix(codes, lengths)
    n = int(np.asarray(lengths).size)
    batch = max(1, _BATCH_CELLS // max(n, 1))
    out = np.empty((n_resamples, N_T))
    for lo in range(0, n_resamples, batch):
        b = min(batch, n_resamples - lo)
        w = session_draws(n, b, rng)
        pairs = np.asarray((pair_matrix.T @ w.T).T).reshape(b, K + 1, K + 1)
        p, _ = deconvolve_pairs(pairs, draw_m(rng, b), tol=BOOTSTRAP_TOL)
        out[lo:lo + b] = intent_shares(p)
    return out


__all__ = ["METHOD", "Chain", "Corrected", "raw_pair_counts", "session_pair_matrix", "deconvolve_pairs",
           "intent_shares", "adjacent_transitions", "skipping_transitions", "correct", "bootstrap_corrected_shares"]
