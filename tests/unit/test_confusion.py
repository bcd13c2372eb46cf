"""The confusion file (``classify agreement --json``) and the misclassification matrix drawn from it."""

from __future__ import annotations

import numpy as np
import pytest

from swe_taskflow.agreement import agreement_document, pairwise
from swe_taskflow.confusion import PRIOR_WEIGHT, Confusion, confusion_from_dict
from swe_taskflow.errors import InputError
from swe_taskflow.taxonomy import INTENTS

K = len(INTENTS)


def _counts():
    c = np.zeros((K, K), dtype=np.int64)
    c[1, 1], c[1, 6] = 300, 100          # bug-fix: 75% right, 25% read as debug
    c[6, 6], c[6, 1] = 30, 10
    c[2, 2] = 5                          # new-feature: 5 messages, all right
    return c                             # every other true intent: no labelled message


def test_matrix_is_the_dirichlet_posterior_mean_with_a_pooled_prior():
    conf = Confusion(_counts())
    m = conf.matrix()
    assert m.sum(axis=1) == pytest.approx(np.ones(K)) and m.min() > 0
    assert m[1, 1] == pytest.approx(0.75, abs=0.01) and m[1, 6] == pytest.approx(0.25, abs=0.01)   # data dominate
    accuracy = (335 + 1) / (445 + 2)
    assert m[2, 2] == pytest.approx((5 + PRIOR_WEIGHT * accuracy) / (5 + PRIOR_WEIGHT))   # a few messages: prior matters
    assert m[0, 0] == pytest.approx(accuracy) and m[0, 6] > m[0, 3]     # no message: the pooled behaviour
    assert conf.unlabelled_rows == [x for i, x in enumerate(INTENTS) if i not in (1, 2, 6)]


def test_draws_are_rows_of_the_posterior():
    conf = Confusion(_counts())
    d = conf.draw(np.random.default_rng(0), 4000)
    assert d.shape == (4000, K, K) and d.sum(axis=2) == pytest.approx(np.ones((4000, K)))
    assert d.mean(axis=0) == pytest.approx(conf.matrix(), abs=0.02)
    assert d[:, 1, 1].std() < d[:, 2, 2].std() < d[:, 0, 0].std()        # more labels, less spread
    assert np.array_equal(conf.draw(np.random.default_rng(1), 3), conf.draw(np.random.default_rng(1), 3))


def _doc():
    a = ["bug-fix"] * 3 + ["debug"]
    b = ["bug-fix", "debug", "bug-fix", "debug"]
    return agreement_document(pairwise({"reader.jsonl": a, "clf.jsonl": b}), n_messages=4)


def test_an_agreement_document_reads_as_a_confusion():
    conf = confusion_from_dict(_doc(), path="C.json", sha256="ab")
    assert conf.n == 4 and conf.truth == "reader.jsonl" and conf.predicted == "clf.jsonl"
    assert conf.counts[1, 1] == 2 and conf.counts[1, 6] == 1 and conf.counts[6, 6] == 1
    assert conf.record()["confusion_sha256"] == "ab" and conf.record()["n_labelled"] == 4


@pytest.mark.parametrize("edit, field", [
    (lambda d: d.pop("format"), "format"),
    (lambda d: d.update(format_version=9), "format_version"),
    (lambda d: d.update(pairs=d["pairs"] * 2), "pairs"),
    (lambda d: d["pairs"][0].pop("confusion"), "pairs[0].confusion"),
    (lambda d: d["pairs"][0]["confusion"].update(labels=INTENTS[:-1]), "pairs[0].confusion.labels"),
    (lambda d: d["pairs"][0]["confusion"]["counts"][0].__setitem__(0, 1.5), "pairs[0].confusion.counts"),
    (lambda d: d["pairs"][0]["confusion"]["counts"][0].__setitem__(0, True), "pairs[0].confusion.counts"),
    (lambda d: d["pairs"][0]["confusion"]["counts"][0].__setitem__(0, 10**30), "pairs[0].confusion.counts"),
    (lambda d: d["pairs"][0]["confusion"]["counts"].pop(), "pairs[0].confusion.counts"),
    (lambda d: d["pairs"][0]["confusion"].update(counts=[[0] * K] * K), "pairs[0].confusion.counts"),
])
def test_a_malformed_confusion_names_the_field(edit, field):
    doc = _doc()
    edit(doc)
    with pytest.raises(InputError) as err:
        confusion_from_dict(doc, path="C.json")
    assert err.value.field == field and err.value.path == "C.json"
