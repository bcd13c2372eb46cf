"""A classifier's confusion matrix on held-out labels, and the misclassification matrix drawn from it.

Written by ``swe-taskflow classify agreement READER.jsonl CLASSIFIER.jsonl --json C.json`` (format
:data:`swe_taskflow.agreement.AGREEMENT_FORMAT`): ``counts[i][j]`` = messages the pair's first file (the
careful reader: the truth) labels ``labels[i]`` and its second file (the classifier) labels ``labels[j]``.
:mod:`swe_taskflow.correction` needs ``M[true, predicted]`` = P(the classifier says j | the message is i).
Each row is the posterior mean of a Dirichlet whose prior is worth :data:`PRIOR_WEIGHT` labelled messages and
has the sample's pooled shape (its overall accuracy on the diagonal, Laplace-smoothed; its errors spread over
predicted labels as all the sample's errors are): a row read from 5 messages leans on the classifier's overall
behaviour instead of claiming it never errs, and a true intent the sample never holds gets the pooled
behaviour (the target lists it under ``rows_without_labels``). On synthetic corpora this prior gave lower
errors than a flat one or none (docs/flow.md). The bootstrap draws each row from that Dirichlet posterior.

Assumption (stated in docs/flow.md): the classifier's error rates per *true* intent are the same on the
labelled sample and on the measured corpus (the shares may differ; that is what is corrected).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from .agreement import AGREEMENT_FORMAT, AGREEMENT_VERSION
from .errors import InputError
from .jsonl import check_format, check_input_file, decode, loads
from .taxonomy import INTENTS

K = len(INTENTS)
#: Labelled messages the Dirichlet prior of each row is worth.
PRIOR_WEIGHT = 4.0


@dataclass(frozen=True)
class Confusion:
    """Counts of (truth, predicted) label pairs: ``counts[i, j]``, rows the truth, columns the classifier."""

    counts: np.ndarray
    truth: str = ""
    predicted: str = ""
    sha256: str = ""
    source: str = ""

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    @property
    def unlabelled_rows(self) -> list[str]:
        """True intents the labelled sample does not hold (their rows are the pooled prior)."""
        return [INTENTS[i] for i in np.flatnonzero(self.counts.sum(axis=1) == 0)]

    def _alpha(self) -> np.ndarray:
        """Dirichlet posterior parameters of each row: counts + PRIOR_WEIGHT * the pooled prior row."""
        c = self.counts.astype(np.float64)
        accuracy = (np.trace(c) + 1.0) / (c.sum() + 2.0)
        errors = c.sum(axis=0) - np.diag(c) + 1.0 / K           # how often each label is predicted wrongly
        off = np.broadcast_to(errors, (K, K)).copy()
        np.fill_diagonal(off, 0.0)
        prior = (1.0 - accuracy) * off / off.sum(axis=1, keepdims=True) + accuracy * np.eye(K)
        return c + PRIOR_WEIGHT * prior

    def matrix(self) -> np.ndarray:
        """``M[true, predicted]`` (16, 16): each row's Dirichlet posterior mean."""
        alpha = self._alpha()
        return alpha / alpha.sum(axis=1, keepdims=True)

    def draw(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` matrices (size, 16, 16), each row drawn from its Dirichlet posterior (normalized gamma draws)."""
        g = rng.standard_gamma(np.broadcast_to(self._alpha(), (size, K, K)))
        return g / g.sum(axis=2, keepdims=True)

    def record(self) -> dict[str, Any]:
        """What a corrected target records about the matrix it was corrected by."""
        return {"confusion_sha256": self.sha256, "confusion_file": self.source, "n_labelled": self.n,
                "truth_file": self.truth, "classifier_file": self.predicted, "prior_weight": PRIOR_WEIGHT,
                "rows_without_labels": self.unlabelled_rows}


def confusion_from_dict(doc: Mapping[str, Any], *, path: str = "<confusion>", sha256: str = "") -> Confusion:
    """The one pair of an agreement document (``classify agreement READER CLASSIFIER --json``), checked."""
    check_format(doc, AGREEMENT_FORMAT, AGREEMENT_VERSION, kind="agreement", name="classify agreement JSON",
                 where=path)
    pairs = doc.get("pairs")
    if not isinstance(pairs, list) or len(pairs) != 1 or not isinstance(pairs[0], dict):
        raise InputError("a confusion file holds exactly one pair (the reader's labels, then the classifier's)",
                         path=path, field="pairs", actual=len(pairs) if isinstance(pairs, list) else type(pairs).__name__,
                         hint="swe-taskflow classify agreement READER.jsonl CLASSIFIER.jsonl --json C.json")
    pair = pairs[0]
    conf = pair.get("confusion")
    if not isinstance(conf, dict):
        raise InputError("missing confusion counts", path=path, field="pairs[0].confusion")
    if conf.get("labels") != list(INTENTS):
        raise InputError("confusion labels differ from this version's taxonomy", path=path,
                         field="pairs[0].confusion.labels", expected=list(INTENTS), actual=conf.get("labels"))
    raw = conf.get("counts")
    ok = (isinstance(raw, list) and len(raw) == K
          and all(isinstance(r, list) and len(r) == K and all(type(x) is int and 0 <= x < 10**12 for x in r)
                  for r in raw))
    if not ok:
        raise InputError("confusion counts must be a 16 x 16 table of integers in [0, 10^12)", path=path,
                         field="pairs[0].confusion.counts")
    counts = np.array(raw, dtype=np.int64)
    if counts.sum() < 1:
        raise InputError("the confusion matrix counts no message", path=path, field="pairs[0].confusion.counts")
    return Confusion(counts, truth=Path(str(pair.get("a", ""))).name, predicted=Path(str(pair.get("b", ""))).name,
                     sha256=sha256, source=Path(path).name)


def load_confusion(path: str | Path) -> Confusion:
    """Read a confusion file; its sha256 (of the bytes) identifies it in every corrected target."""
    p = check_input_file(path, "confusion file")
    data = p.read_bytes()
    doc = loads(decode(data, path=str(p)), path=str(p))
    if not isinstance(doc, dict):
        raise InputError("a confusion file is a JSON object", path=str(p), actual=type(doc).__name__)
    return confusion_from_dict(doc, path=str(p), sha256=hashlib.sha256(data).hexdigest())


__all__ = ["PRIOR_WEIGHT", "Confusion", "confusion_from_dict", "load_confusion"]
