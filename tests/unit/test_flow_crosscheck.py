"""Task Flow and TFAS against an independent brute-force computation, and the paper's known cases.

The reference below is written from the paper's text alone: plain Python loops over label lists,
its own hard-coded list of retained intents and length bins, and scipy's entropy for the JSD.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon
from scipy.stats import entropy

from swe_taskflow import flow
from swe_taskflow.taxonomy import INTENTS

# Appendix A, typed out again on purpose (not imported): the 16 labels and the 3 excluded from TFAS.
PAPER_INTENTS = ["tests", "bug-fix", "new-feature", "generate-docs", "refactor", "transformation", "debug",
                 "planning", "explain", "question", "meta-question", "code-review", "execute", "data-analysis",
                 "greeting", "other"]
PAPER_EXCLUDED = {"greeting", "meta-question", "other"}


def _bin(n: int) -> str:
    if n <= 5:
        return str(n)
    return "6-10" if n <= 10 else "11+"


def brute_flow(sessions, min_messages=1):
    """Three dicts of probabilities, counted with loops."""
    L, T, R = Counter(), Counter(), Counter()
    for s in sessions:
        if len(s) < min_messages:
            continue
        L[_bin(len(s))] += 1
        kept = [x for x in s if x not in PAPER_EXCLUDED]
        for x in kept:
            T[x] += 1
        if kept:
            path = ["START"] + kept + ["END"]
            for a, b in zip(path, path[1:]):
                R[(a, b)] += 1

    def norm(c):
        tot = sum(c.values())
        return {k: v / tot for k, v in c.items()}

    return norm(L), norm(T), norm(R)


def brute_jsd(p: dict, q: dict) -> float:
    keys = sorted(set(p) | set(q), key=str)
    pv = np.array([p.get(k, 0.0) for k in keys])
    qv = np.array([q.get(k, 0.0) for k in keys])
    m = 0.5 * (pv + qv)
    return 0.5 * entropy(pv, m, base=2) + 0.5 * entropy(qv, m, base=2)


def brute_tfas(target, bench):
    s = [1.0 - brute_jsd(p, q) for p, q in zip(target, bench)]
    return 100.0 * (s[0] * s[1] * s[2]) ** (1.0 / 3.0), s


def _as_dicts(f: flow.Flow):
    L = {b: f.length[i] for i, b in enumerate(flow.LENGTH_BINS) if f.length[i] > 0}
    T = {x: f.intent[i] for i, x in enumerate(flow.RETAINED) if f.intent[i] > 0}
    R = {}
    mat = f.transition.reshape(flow.N_SIDE, flow.N_SIDE)
    for i, a in enumerate(flow.TRANSITION_SOURCES):
        for j, b in enumerate(flow.TRANSITION_TARGETS):
            if mat[i, j] > 0:
                R[(a, b)] = mat[i, j]
    return L, T, R


def random_sessions(rng, n, max_len, weights=None):
    p = None if weights is None else np.asarray(weights, float) / np.sum(weights)
    return [list(rng.choice(PAPER_INTENTS, size=int(rng.integers(1, max_len + 1)), p=p)) for _ in range(n)]


def test_taxonomy_matches_paper():
    assert list(INTENTS) == PAPER_INTENTS
    assert set(flow.RETAINED) == set(PAPER_INTENTS) - PAPER_EXCLUDED


@pytest.mark.parametrize("seed", range(8))
def test_flow_matches_bruteforce(seed):
    rng = np.random.default_rng(seed)
    sessions = random_sessions(rng, int(rng.integers(5, 120)), int(rng.integers(3, 16)))
    min_messages = int(rng.integers(1, 4))
    if not any(len(s) >= min_messages and set(s) - PAPER_EXCLUDED for s in sessions):
        pytest.skip("drawn corpus has nothing retained")
    ours = _as_dicts(flow.measure(sessions, min_messages=min_messages))
    ref = brute_flow(sessions, min_messages)
    for got, want in zip(ours, ref):
        assert set(got) == set(want)
        for k in want:
            assert got[k] == pytest.approx(want[k], abs=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_tfas_matches_bruteforce(seed):
    rng = np.random.default_rng(100 + seed)
    w = rng.random(16)
    a = random_sessions(rng, int(rng.integers(20, 200)), int(rng.integers(3, 14)), w)
    b = random_sessions(rng, int(rng.integers(20, 200)), int(rng.integers(1, 8)))
    got = flow.score(flow.measure(a, min_messages=3), flow.measure(b))
    want, (sl, st, sr) = brute_tfas(brute_flow(a, 3), brute_flow(b, 1))
    assert got.tfas == pytest.approx(want, abs=1e-9)
    assert (got.S_L, got.S_T, got.S_R) == pytest.approx((sl, st, sr), abs=1e-10)


@pytest.mark.parametrize("seed", range(5))
def test_jsd_is_the_squared_scipy_distance(seed):
    rng = np.random.default_rng(seed)
    p = rng.random(30) * (rng.random(30) > 0.3)
    q = rng.random(30) * (rng.random(30) > 0.3)
    p, q = p / p.sum(), q / q.sum()
    assert flow.jsd(p, q) == pytest.approx(jensenshannon(p, q, base=2) ** 2, abs=1e-12)
    qs = np.stack([q, p, 0.5 * (p + q)])
    ref = [jensenshannon(p, x, base=2) ** 2 for x in qs]
    assert flow.jsd_many(p, qs) == pytest.approx(ref, abs=1e-12)
    assert flow.jsd_pairs(np.stack([p, q]), np.stack([q, q])) == pytest.approx([ref[0], 0.0], abs=1e-12)
    terms = flow.jsd_terms(p, q)
    assert (terms >= 0).all() and terms.sum() == pytest.approx(ref[0], abs=1e-12)


def test_disjoint_supports_give_jsd_one():
    assert flow.jsd([1.0, 0.0], [0.0, 1.0]) == pytest.approx(1.0)


def test_identical_corpora_score_100():
    rng = np.random.default_rng(7)
    s = random_sessions(rng, 150, 12)
    f = flow.measure(s, min_messages=3)
    got = flow.score(f, f)
    assert got.tfas == pytest.approx(100.0) and got.S_L == got.S_T == got.S_R == pytest.approx(1.0)


def test_single_message_benchmark_against_long_target_scores_zero():
    rng = np.random.default_rng(3)
    target = flow.measure(random_sessions(rng, 200, 10), min_messages=3)
    bench = flow.measure([[x] for x in rng.choice(["bug-fix", "new-feature", "explain"], 50)])
    got = flow.score(target, bench)
    assert got.S_L == 0.0
    assert got.tfas == 0.0
    assert got.S_T > 0.0 and got.S_R > 0.0   # only the length component is disjoint


def test_excluded_message_between_two_retained_makes_them_adjacent():
    f = flow.measure([["bug-fix", "greeting", "explain"]])
    mat = f.transition.reshape(flow.N_SIDE, flow.N_SIDE)
    src, dst = flow.TRANSITION_SOURCES.index, flow.TRANSITION_TARGETS.index
    expected = {("START", "bug-fix"), ("bug-fix", "explain"), ("explain", "END")}
    got = {(flow.TRANSITION_SOURCES[i], flow.TRANSITION_TARGETS[j]) for i, j in zip(*np.nonzero(mat))}
    assert got == expected
    assert mat[src("bug-fix"), dst("explain")] == pytest.approx(1 / 3)
    # the raw length still counts the excluded message
    assert f.length[flow.LENGTH_BINS.index("3")] == 1.0
    assert f.intent.sum() == pytest.approx(1.0) and f.n_retained == 2


def test_session_of_only_excluded_messages_counts_in_length_only():
    c = flow.count_sessions([["greeting", "other"], ["bug-fix"]])
    assert c.length.sum() == 2 and c.intent.sum() == 1 and c.transition.sum() == 2


def test_session_count_matrix_rows_match_single_session_counts():
    rng = np.random.default_rng(11)
    sessions = random_sessions(rng, 40, 9)
    lengths = np.array([len(s) for s in sessions])
    codes = np.array([PAPER_INTENTS.index(x) for s in sessions for x in s])
    m = flow.session_count_matrix(codes, lengths).toarray()
    for i, s in enumerate(sessions):
        one = flow.count_sessions([s])
        assert m[i, flow.SLICE_L] == pytest.approx(one.length)
        assert m[i, flow.SLICE_T] == pytest.approx(one.intent)
        assert m[i, flow.SLICE_R] == pytest.approx(one.transition)


def test_zero_length_session_is_an_error():
    with pytest.raises(flow.FlowError) as exc:
        flow.length_bins([3, 0])
    assert exc.value.row == 2 and exc.value.field == "messages"
