"""Agreement math cross-checked against scikit-learn's independent implementation."""

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from swe_taskflow.agreement import cohen_kappa, confusion, exact_agreement, format_confusion, pairwise
from swe_taskflow.errors import InputError
from swe_taskflow.taxonomy import INTENTS


def _random_labels(rng, n, p_same, base=None):
    a = list(rng.choice(INTENTS, size=n)) if base is None else list(base)
    b = [x if rng.random() < p_same else str(rng.choice(INTENTS)) for x in a]
    return [str(x) for x in a], b


@pytest.mark.parametrize("seed", range(6))
def test_kappa_and_confusion_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    a, b = _random_labels(rng, 200, p_same=rng.uniform(0.1, 0.9))
    assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    np.testing.assert_array_equal(confusion(a, b), confusion_matrix(a, b, labels=list(INTENTS)))
    assert exact_agreement(a, b) == pytest.approx(np.mean(np.array(a) == np.array(b)))


def test_kappa_skewed_labels_match_sklearn():
    a = ["bug-fix"] * 40 + ["other"] * 5 + ["execute"] * 5
    b = ["bug-fix"] * 35 + ["new-feature"] * 5 + ["other"] * 3 + ["execute"] * 7
    assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)


def test_identical_and_degenerate():
    a = ["tests", "debug", "tests"]
    assert exact_agreement(a, a) == 1.0 and cohen_kappa(a, a) == pytest.approx(1.0)
    assert cohen_kappa(["other"] * 3, ["other"] * 3) == 1.0


def test_pairwise_and_errors():
    sets = {"x": ["tests", "debug"], "y": ["tests", "explain"], "z": ["tests", "debug"]}
    pairs = pairwise(sets)
    assert [(p.a, p.b) for p in pairs] == [("x", "y"), ("x", "z"), ("y", "z")]
    assert pairs[0].exact == 0.5 and pairs[1].exact == 1.0
    assert "debug" in format_confusion(pairs[0].confusion)
    with pytest.raises(InputError):
        exact_agreement(["tests"], [])
    with pytest.raises(InputError):
        confusion(["tests"], ["nope"])
    with pytest.raises(InputError):
        pairwise({"x": ["tests"]})
