"""Bootstrap over whole sessions: resampled counts vs a brute-force replay, determinism, sanity."""

from __future__ import annotations

import numpy as np
import pytest

from swe_taskflow import flow
from swe_taskflow.bootstrap import (SessionCounts, bootstrap_score, bootstrap_shares, resample_counts,
                                    session_counts)
from swe_taskflow.errors import ConfigError
from swe_taskflow.taxonomy import INTENTS


def _sessions(seed, n, max_len):
    rng = np.random.default_rng(seed)
    return [list(rng.choice(INTENTS, size=int(rng.integers(1, max_len + 1)))) for _ in range(n)]


def test_resampled_counts_equal_counting_the_drawn_sessions():
    """Replay the same multinomial draws by hand: repeat each session as often as drawn, count it plainly."""
    sessions = _sessions(1, 60, 9)
    sc = session_counts(sessions)
    got = resample_counts(sc, 7, np.random.default_rng(42))
    draws = np.random.default_rng(42).multinomial(len(sessions), np.full(len(sessions), 1 / len(sessions)), size=7)
    for b in range(7):
        replay = [s for s, k in zip(sessions, draws[b]) for _ in range(k)]
        c = flow.count_sessions(replay)
        assert got[b, flow.SLICE_L] == pytest.approx(c.length)
        assert got[b, flow.SLICE_T] == pytest.approx(c.intent)
        assert got[b, flow.SLICE_R] == pytest.approx(c.transition)


def test_resample_draws_whole_sessions():
    sc = session_counts(_sessions(2, 25, 6))
    got = resample_counts(sc, 50, np.random.default_rng(0))
    assert (got[:, flow.SLICE_L].sum(axis=1) == 25).all()      # n sessions every time


def test_batches_do_not_change_results(monkeypatch):
    import swe_taskflow.bootstrap as bs

    sc = session_counts(_sessions(3, 40, 7))
    a = resample_counts(sc, 30, np.random.default_rng(5))
    monkeypatch.setattr(bs, "_BATCH_CELLS", 40 * 4)            # 4 resamples a batch
    b = resample_counts(sc, 30, np.random.default_rng(5))
    assert np.array_equal(a, b)


def test_identical_sessions_give_degenerate_intervals():
    one = ["bug-fix", "explain", "planning", "greeting"]
    sc = session_counts([one] * 30)
    r = bootstrap_score(sc.totals().normalized(), sc, n_resamples=50, seed=1)
    for k in ("tfas", "S_L", "S_T", "S_R"):
        iv = getattr(r, k)
        assert iv.lo == pytest.approx(iv.value) and iv.hi == pytest.approx(iv.value)
    assert r.tfas.value == pytest.approx(100.0)


def test_seeded_and_deterministic():
    t = session_counts(_sessions(4, 200, 10), min_messages=3)
    b = session_counts(_sessions(5, 80, 4))
    a1 = bootstrap_score(t, b, n_resamples=100, seed=9).as_dict()
    a2 = bootstrap_score(t, b, n_resamples=100, seed=9).as_dict()
    a3 = bootstrap_score(t, b, n_resamples=100, seed=10).as_dict()
    assert a1 == a2 and a1 != a3
    assert a1["target_resampled"] is True and set(a1["target_shares"]) == set(flow.RETAINED)


def test_point_estimates_are_the_plain_score():
    t = session_counts(_sessions(6, 150, 10), min_messages=3)
    b = session_counts(_sessions(7, 90, 5))
    r = bootstrap_score(t.totals().normalized(), b, n_resamples=20, seed=0)
    s = flow.score(t.totals().normalized(), b.totals().normalized())
    assert (r.tfas.value, r.S_L.value, r.S_T.value, r.S_R.value) == pytest.approx((s.tfas, s.S_L, s.S_T, s.S_R))
    for k in ("tfas", "S_L", "S_T", "S_R"):
        assert getattr(r, k).lo <= getattr(r, k).hi


def test_share_intervals_cover_point_and_shrink_with_size():
    small = session_counts(_sessions(8, 40, 6))
    big = session_counts(_sessions(8, 4000, 6))
    s = bootstrap_shares(small, n_resamples=400, seed=0)
    g = bootstrap_shares(big, n_resamples=400, seed=0)
    for name in flow.RETAINED:
        assert g[name].lo <= g[name].value <= g[name].hi
        assert (g[name].hi - g[name].lo) < (s[name].hi - s[name].lo)
    # the share bootstrap mean stays close to the share (brute check on the resampled shares)
    c = resample_counts(big, 200, np.random.default_rng(1))[:, flow.SLICE_T]
    shares = c / c.sum(axis=1, keepdims=True)
    assert shares.mean(axis=0) == pytest.approx(big.totals().normalized().intent, abs=3e-3)


def test_empty_resamples_are_counted_not_hidden():
    # one session of two retained messages among many of excluded ones: some resamples have no retained message
    sessions = [["greeting"]] * 9 + [["bug-fix", "explain"]]
    sc = session_counts(sessions)
    r = bootstrap_score(sc.totals().normalized(), sc, n_resamples=200, seed=0)
    assert r.n_undefined > 0


def test_bad_settings():
    sc = session_counts(_sessions(9, 10, 3))
    with pytest.raises(ConfigError):
        bootstrap_score(sc, sc, n_resamples=0)
    with pytest.raises(ConfigError):
        bootstrap_shares(sc, confidence=1.5)
    assert isinstance(sc, SessionCounts)
