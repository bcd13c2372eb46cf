"""The grouped cross-validation (tools/grouped_cv.py): no repository is both fitted on and scored, folds are
balanced and need no randomness, and the agreement counts the confident rows apart. Hand-written toy data."""

from __future__ import annotations

import numpy as np

from tools.dev_labels import HandLabel, paired_readings
from tools.grouped_cv import agreement, cross_validate, repo_folds


def test_every_repository_lies_in_one_fold_and_folds_are_balanced():
    repos = ["a"] * 50 + ["b"] * 30 + ["c"] * 20 + ["d"] * 20 + ["e"] * 10 + ["f"] * 10 + ["g"] * 5 + ["h"] * 5
    folds = repo_folds(repos, 3)
    for r in set(repos):
        assert len({f for f, x in zip(folds, repos) if x == r}) == 1
    assert sorted(np.bincount(folds)) == [50, 50, 50]  # greedy largest-first fills them evenly here
    assert (repo_folds(repos[::-1], 3)[::-1] == folds).all()  # row order does not move a repository


def test_cross_validate_never_fits_on_a_scored_repository():
    repos = [f"r{i % 7}" for i in range(70)]
    seen = []

    def fit_predict(train, test):
        assert not {repos[i] for i in train} & {repos[i] for i in test}
        assert len(set(train) | set(test)) == 70
        seen.extend(test)
        return [repos[i] for i in test]

    assert cross_validate(repos, fit_predict, k=5) == repos
    assert sorted(seen) == list(range(70))


def test_agreement_counts_confident_rows_apart():
    gold = ["bug-fix", "bug-fix", "tests", "other", "planning"]
    pred = ["bug-fix", "debug", "tests", "bug-fix", "planning"]
    got = agreement(gold, pred, ["high", "medium", "low", "low", None])
    assert got["all"] == {"exact": 0.6, "n": 5}
    assert got["high+medium"] == {"exact": 0.5, "n": 2}
    assert got["low"] == {"exact": 0.5, "n": 2} and got["unrated"] == {"exact": 1.0, "n": 1}


def test_paired_readings_match_messages_by_key():
    first = [HandLabel("s", 0, "tests", "high", "reader-a"), HandLabel("s", 1, "other", "low", "reader-a"),
             HandLabel("s", 0, "debug", "high", "reader-x")]
    second = [HandLabel("t", 0, "tests", "high", "reader-b"), HandLabel("s", 0, "bug-fix", "medium", "reader-b")]
    assert [(a.intent, b.intent) for a, b in paired_readings(first, second)] == [("tests", "bug-fix")]
