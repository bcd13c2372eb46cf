"""Linear (multinomial logistic) heads of the embedded classifier, stored as plain numbers in JSON.

A head maps a feature row to log-probabilities over its classes. The weights are fitted by
tools/train_heads.py on development hand labels (aggregate numbers only: no message text is stored)
and shipped in ``builder/data/classifier/heads_v2.json``; the file's sha256 is part of the
classifier's version, hence of the label cache key.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from swe_taskflow.errors import InputError
from swe_taskflow.taxonomy import INTENTS

from builder.resources import builder_path

DEFAULT_HEADS = builder_path("data", "classifier", "heads_v2.json")


@dataclass(frozen=True)
class LinearHead:
    classes: tuple[str, ...]
    """Output labels, one per row of ``coef``."""
    features: tuple[tuple[str, int], ...]
    """(block name, width) of the input row, in order: the row is these blocks concatenated."""
    coef: np.ndarray
    """(classes, features) weights."""
    intercept: np.ndarray
    """(classes,) biases."""

    @property
    def width(self) -> int:
        return sum(w for _, w in self.features)

    def log_proba(self, x: np.ndarray) -> np.ndarray:
        """(n, classes) log-probabilities of the rows of ``x``."""
        z = np.asarray(x, dtype=np.float64) @ self.coef.T + self.intercept
        z -= z.max(axis=1, keepdims=True)
        return z - np.log(np.exp(z).sum(axis=1, keepdims=True))

    def to_dict(self) -> dict:
        return {"classes": list(self.classes), "features": [[n, w] for n, w in self.features],
                "coef": [[float(f"{v:.7g}") for v in row] for row in self.coef],
                "intercept": [float(f"{v:.7g}") for v in self.intercept]}

    @staticmethod
    def from_dict(d: dict, *, where: str = "") -> "LinearHead":
        try:
            head = LinearHead(tuple(d["classes"]), tuple((str(n), int(w)) for n, w in d["features"]),
                              np.asarray(d["coef"], dtype=np.float64), np.asarray(d["intercept"], dtype=np.float64))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError("malformed classifier head", path=where, field=str(exc)) from None
        if head.coef.shape != (len(head.classes), head.width) or head.intercept.shape != (len(head.classes),):
            raise InputError("classifier head shapes do not match", path=where, field="coef",
                             expected=[len(head.classes), head.width], actual=list(head.coef.shape))
        unknown = [c for c in head.classes if c not in INTENTS]
        if unknown:
            raise InputError("classifier head names unknown intents", path=where, field="classes", actual=unknown)
        return head


@dataclass(frozen=True)
class Heads:
    general: LinearHead
    """Every message: the 16 intents from exemplar similarities, cue words, form and the MiniLM embedding."""
    issue: LinearHead
    """Issue reports only: how their bug-fix / new-feature / refactor mass is split (:mod:`.issue`)."""
    sha256: str
    """sha256 of the file's bytes."""
    training: dict
    """How the heads were fitted (label files and their sha256, counts, hyper-parameters)."""


def load_heads(path: str | Path = DEFAULT_HEADS) -> Heads:
    path = Path(path)
    if not path.is_file():
        raise InputError("classifier heads file not found", path=str(path),
                         hint="python -m tools.train_heads")
    raw = path.read_bytes()
    try:
        d = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError("classifier heads file is not JSON", path=str(path), field=str(exc)) from None
    return Heads(LinearHead.from_dict(d["general"], where=str(path)), LinearHead.from_dict(d["issue"], where=str(path)),
                 hashlib.sha256(raw).hexdigest(), dict(d.get("training", {})))
