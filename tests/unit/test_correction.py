"""Task Flows corrected for the classifier's errors: the EM, the posterior pass and recovery on synthetic corpora
with known true labels and a known confusion (tests/support/noisy_flows.py)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from swe_taskflow.bootstrap import bootstrap_shares, session_counts_from_codes, share_intervals
from swe_taskflow.confusion import Confusion
from swe_taskflow.correction import (K, Chain, bootstrap_corrected_shares, correct, deconvolve_pairs, extend,
                                     raw_pair_counts, skipping_transitions)
from swe_taskflow.flow import counts_from_codes, score
from swe_taskflow.taxonomy import RETAINED, RETAINED_POSITION
from tests.support.noisy_flows import NoisyCorpus, classifier_matrix


def _random_chain(rng):
    return Chain(rng.dirichlet(np.ones(K)), rng.dirichlet(np.ones(K + 1), size=K))


def _skipping_edges(z: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Independent reference: the weighted count of the flow's edges that skip >= 1 excluded message, read off
    label sequences ``z`` (n_sequences, length) one position at a time."""
    out = np.zeros((14, 14))
    last = np.full(len(z), 13)                                  # START
    after_excluded = np.zeros(len(z), bool)
    for x in z.T:
        r = RETAINED_POSITION[x]
        hit = (r >= 0) & after_excluded
        np.add.at(out, (last[hit], r[hit]), weight[hit])
        last = np.where(r >= 0, r, last)
        after_excluded = r < 0
    hit = after_excluded & (last != 13)
    np.add.at(out, (last[hit], np.full(hit.sum(), 13)), weight[hit])
    return out


def test_skipping_edges_match_brute_force_enumeration():
    rng = np.random.default_rng(1)
    chain = _random_chain(rng)
    m = rng.dirichlet(np.full(K, 0.3), size=K) * 0.5 + np.eye(K) * 0.5
    # predicted labels with excluded ones (meta-question 10, greeting 14, other 15) at start, middle and end
    sessions = [[3], [14, 2], [0, 15, 1], [15, 14], [15, 3, 14], [1, 10, 15, 1]]
    want = np.zeros((14, 14))
    for obs in sessions:                                        # every true sequence, weighted by its posterior
        z = np.array(list(itertools.product(range(K), repeat=len(obs))))
        p = chain.start[z[:, 0]] * m[z[:, 0], obs[0]] * chain.step[z[:, -1], K]
        for t in range(1, len(obs)):
            p *= chain.step[z[:, t - 1], z[:, t]] * m[z[:, t], obs[t]]
        want += _skipping_edges(z, p / p.sum())
    got = skipping_transitions(np.concatenate(sessions), np.array([len(s) for s in sessions]), chain, m)
    assert want.sum() > 1.0 and got == pytest.approx(want, abs=1e-12)


def test_em_solves_the_linear_system_on_a_well_conditioned_matrix():
    rng = np.random.default_rng(2)
    m = np.full((K, K), 0.15 / (K - 1)) + np.eye(K) * (0.85 - 0.15 / (K - 1))
    p = rng.dirichlet(np.ones((K + 1) ** 2)).reshape(K + 1, K + 1)
    p[K, K] = 0.0
    p /= p.sum()
    me = extend(m)
    expected = 1e5 * me.T @ p @ me                             # exact expected predicted pair counts
    got, steps = deconvolve_pairs(expected, m)
    direct = np.linalg.solve(me.T, expected / 1e5) @ np.linalg.inv(me)   # independent: invert M x M
    assert steps < 2000 and got == pytest.approx(direct, abs=1e-8) and got == pytest.approx(p, abs=1e-8)


def _noisy_pairs():
    """Predicted pair counts of a sparse true pair distribution through the ~75% classifier: the ML is on the boundary."""
    rng = np.random.default_rng(3)
    m = classifier_matrix(0.75)
    me = extend(m)
    truth = rng.dirichlet(np.full((K + 1) ** 2, 0.5)).reshape(K + 1, K + 1)
    truth[K, K] = 0.0
    truth /= truth.sum()
    counts = rng.multinomial(3000, (me.T @ truth @ me).ravel()).reshape(K + 1, K + 1).astype(float)
    return m, me, counts


def test_em_meets_the_optimality_conditions():
    """The log-likelihood is concave in P on the simplex, so P is the global maximum iff (KKT) the gradient
    ``Ms (N / Q) Mt^T`` equals n where P > 0 and is at most n where P = 0."""
    m, me, counts = _noisy_pairs()
    p, _ = deconvolve_pairs(counts, m)
    q = me.T @ p @ me
    grad = me @ np.divide(counts, q, out=np.zeros_like(q), where=counts > 0) @ me.T
    n = counts.sum()
    grad[K, K] = 0.0                                           # START -> END is not a free cell
    support = p > 1e-6
    assert support.sum() > 50 and (~support).sum() > 0          # an interior part and a boundary part
    assert grad[support] == pytest.approx(n, rel=1e-4) and grad.max() <= n * (1 + 1e-4)


@pytest.mark.slow
def test_em_reaches_the_maximum_likelihood_a_generic_optimizer_finds():
    """Independent: L-BFGS over a softmax parametrization of the same likelihood finds no higher value."""
    from scipy.optimize import minimize

    m, me, counts = _noisy_pairs()
    mask = np.ones((K + 1, K + 1), bool)
    mask[K, K] = False

    def loglik(p):
        q = me.T @ p @ me
        return float(np.where(counts > 0, counts * np.log(np.where(counts > 0, q, 1.0)), 0.0).sum())

    def neg(theta):
        e = np.exp(theta - theta.max())
        p = np.zeros((K + 1, K + 1))
        p[mask] = e / e.sum()
        q = me.T @ p @ me
        g = (me @ np.where(counts > 0, counts / np.where(q > 0, q, 1.0), 0.0) @ me.T)[mask]
        return -loglik(p), -(p[mask] * (g - (p[mask] * g).sum()))

    best = minimize(neg, np.zeros(mask.sum()), jac=True, method="L-BFGS-B", options={"maxiter": 20000, "gtol": 1e-10})
    em, _ = deconvolve_pairs(counts, m)
    assert em.min() >= 0 and em.sum() == pytest.approx(1.0) and em[K, K] == 0.0
    assert loglik(em) >= -best.fun - 1e-6
    assert np.abs(em[mask] - np.exp(best.x - best.x.max()) / np.exp(best.x - best.x.max()).sum()).max() < 2e-3


def test_identity_confusion_gives_the_raw_flow_exactly():
    c = NoisyCorpus.draw(4, sessions=300, labelled=10)
    got = correct(c.predicted, c.lengths, np.eye(K)).counts
    want = counts_from_codes(c.predicted, c.lengths)
    for a, b in ((got.length, want.length), (got.intent, want.intent), (got.transition, want.transition)):
        assert a == pytest.approx(b, abs=1e-6)


def _errors(c: NoisyCorpus, corrected):
    truth = counts_from_codes(c.true_codes, c.lengths).normalized()
    raw = counts_from_codes(c.predicted, c.lengths).normalized()
    cor = corrected.normalized()
    l1 = lambda a, b: float(np.abs(a - b).sum())  # noqa: E731
    return (l1(raw.intent, truth.intent), l1(cor.intent, truth.intent), l1(raw.transition, truth.transition),
            l1(cor.transition, truth.transition), score(truth, raw).tfas, score(truth, cor).tfas)


def test_corrected_flow_is_closer_to_the_truth_than_the_raw_one():
    c = NoisyCorpus.draw(0)
    conf = Confusion(c.confusion_counts())
    raw_t, cor_t, raw_r, cor_r, raw_tfas, cor_tfas = _errors(c, correct(c.predicted, c.lengths, conf.matrix()).counts)
    assert 0.7 < float((c.predicted == c.true_codes).mean()) < 0.8      # the issue's ~75% classifier
    assert cor_t < 0.5 * raw_t and cor_r < 0.7 * raw_r and cor_tfas > raw_tfas
    # with the exact matrix what is left is the noise of the labels themselves
    ex_t, ex_r = _errors(c, correct(c.predicted, c.lengths, classifier_matrix(0.75)).counts)[1::2][:2]
    assert ex_t < 0.25 * raw_t and ex_r < 0.5 * raw_r


def test_corrected_target_scores_100_against_itself(tmp_path):
    from swe_taskflow.target import Target, load_target

    c = NoisyCorpus.draw(5, sessions=200, labelled=500)
    conf = Confusion(c.confusion_counts(), sha256="0" * 64)
    t = Target.from_counts(correct(c.predicted, c.lengths, conf.matrix()).counts, name="x", population="p",
                           correction=conf.record())
    t.save(tmp_path / "t.json")
    back = load_target(tmp_path / "t.json")
    assert back.corrected and back.correction["n_labelled"] == 500
    assert score(back.flow, back.flow).tfas == pytest.approx(100.0) and score(back.flow, t.flow).tfas > 99.9999


def test_bootstrap_is_seeded():
    c = NoisyCorpus.draw(6, sessions=100, labelled=300)
    conf = Confusion(c.confusion_counts())
    run = lambda seed: bootstrap_corrected_shares(c.predicted, c.lengths, conf.draw, n_resamples=8,  # noqa: E731
                                                  rng=np.random.default_rng(seed))
    a, b, other = run(1), run(1), run(2)
    assert np.array_equal(a, b) and not np.array_equal(a, other)
    assert a.shape == (8, 13) and a.sum(axis=1) == pytest.approx(np.ones(8)) and a.min() >= 0


@pytest.mark.slow
def test_corrected_intervals_cover_the_truth_and_raw_ones_do_not():
    """Four corpora (1,500 true sessions each, ~12,000 messages; 2,500 labelled messages for the confusion):
    95% intervals from resampled sessions AND resampled confusion rows hold the population's true shares; the raw
    shares' intervals (sessions only) mostly do not."""
    covered = raw_covered = total = 0
    errs = []
    for seed in range(4):
        c = NoisyCorpus.draw(seed)
        conf = Confusion(c.confusion_counts())
        cor = correct(c.predicted, c.lengths, conf.matrix())
        samples = bootstrap_corrected_shares(c.predicted, c.lengths, conf.draw, n_resamples=200,
                                             rng=np.random.default_rng(seed))
        iv = share_intervals(cor.counts.normalized().intent, samples, 0.95)
        raw_iv = bootstrap_shares(session_counts_from_codes(c.predicted, c.lengths), n_resamples=200, seed=seed)
        truth = c.chain.shares()
        covered += sum(iv[k].lo <= truth[i] <= iv[k].hi for i, k in enumerate(RETAINED))
        raw_covered += sum(raw_iv[k].lo <= truth[i] <= raw_iv[k].hi for i, k in enumerate(RETAINED))
        total += len(RETAINED)
        errs.append(_errors(c, cor.counts))
    mean = np.mean(errs, axis=0)
    assert covered / total >= 0.9 and raw_covered / total <= 0.4
    assert mean[1] < 0.5 * mean[0] and mean[3] < 0.7 * mean[2] and mean[5] > mean[4]


def test_a_predicted_label_no_true_intent_produces_is_an_error():
    from swe_taskflow.errors import FlowError

    m = np.eye(K)
    m[3] = m[4]                                               # nothing is ever predicted as intent 3 ...
    with pytest.raises(FlowError) as err:
        correct(np.array([3, 1]), np.array([2]), m)           # ... yet a message was
    assert err.value.field == "confusion"
