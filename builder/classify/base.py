"""What every classifier returns and exposes: one of the 16 intents per message, with a confidence."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Protocol, Sequence, runtime_checkable

from swe_taskflow.taxonomy import INTENTS


@dataclass(frozen=True)
class Prediction:
    """One message's label.

    ``intent`` is always one of ``swe_taskflow.taxonomy.INTENTS``; ``confidence`` is the probability the
    classifier gives it (0..1); ``probs`` maps every intent to its probability where the classifier has one.
    """

    intent: str
    confidence: float
    probs: Mapping[str, float] | None = None

    def to_dict(self) -> dict:
        d = {"intent": self.intent, "confidence": round(float(self.confidence), 6)}
        if self.probs is not None:
            d["probs"] = {k: round(float(v), 6) for k, v in self.probs.items()}
        return d

    @staticmethod
    def from_dict(d: Mapping) -> "Prediction":
        probs = d.get("probs")
        return Prediction(str(d["intent"]), float(d["confidence"]), dict(probs) if probs is not None else None)


@runtime_checkable
class Classifier(Protocol):
    """A message classifier: ``info`` identifies it for caches and provenance; ``predict`` labels texts."""

    info: dict

    def predict(self, texts: Sequence[str]) -> list[Prediction]: ...


def prediction_from_scores(scores, *, labels: Sequence[str] = INTENTS) -> Prediction:
    """Softmax over per-label scores -> Prediction (argmax; ties go to the earlier label, deterministically)."""
    import numpy as np

    s = np.asarray(scores, dtype=np.float64)
    e = np.exp(s - s.max())
    p = e / e.sum()
    k = int(np.argmax(s))
    return Prediction(labels[k], float(p[k]), {lab: float(x) for lab, x in zip(labels, p)})
