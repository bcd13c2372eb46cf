"""Cross-validation grouped by repository: the yardstick every setting of the embedded classifier is chosen by.

Development messages of one repository share sessions, topics, templates and near-copies; folds that split a
repository score memory, not reading (issue 34: leave-one-dev-file-out said 0.60-0.74, fresh messages 0.59).
Here every repository lies wholly in one fold: what is scored was never fitted on, nor anything else from its
repository. Folds are assigned without randomness (largest repository first, each to the smallest fold so far,
ties to the lower fold number), so the figure is reproducible from the label files alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

#: folds of the grouped cross-validation
FOLDS = 5
#: the confidences the headline figure counts (a reader's ``low``: two or more labels about as good)
CONFIDENT = ("high", "medium")


def repo_folds(repos: Sequence[str], k: int = FOLDS) -> np.ndarray:
    """The fold (0..k-1) of each row, every repository in one fold, folds balanced by row count."""
    counts = Counter(repos)
    sizes, fold_of = [0] * k, {}
    for repo in sorted(counts, key=lambda r: (-counts[r], r)):
        f = int(np.argmin(sizes))
        fold_of[repo] = f
        sizes[f] += counts[repo]
    return np.array([fold_of[r] for r in repos], dtype=int)


def cross_validate(repos: Sequence[str], fit_predict: Callable[[np.ndarray, np.ndarray], Sequence[str]],
                   k: int = FOLDS) -> list[str]:
    """Out-of-fold predictions: ``fit_predict(train_rows, test_rows)`` returns the labels of ``test_rows`` from a
    model fitted on ``train_rows`` only."""
    folds = repo_folds(repos, k)
    pred: list[str | None] = [None] * len(repos)
    for f in range(k):
        test = np.flatnonzero(folds == f)
        if len(test) == 0:
            continue
        for i, p in zip(test, fit_predict(np.flatnonzero(folds != f), test)):
            pred[i] = p
    return pred  # type: ignore[return-value]


def agreement(gold: Sequence[str], pred: Sequence[str], confidence: Sequence[str | None]) -> dict:
    """Exact agreement (and row count) on all rows, on the confident ones (high + medium) and per confidence;
    rows of the first samples, read without a confidence, count as ``unrated``."""
    g, p = np.asarray(gold), np.asarray(pred)
    conf = np.array([c or "unrated" for c in confidence])
    out = {}
    for name, mask in (("all", np.ones(len(g), bool)), ("high+medium", np.isin(conf, CONFIDENT)),
                       *((c, conf == c) for c in ("high", "medium", "low", "unrated"))):
        if mask.any():
            out[name] = {"exact": round(float(np.mean(g[mask] == p[mask])), 3), "n": int(mask.sum())}
    return out
