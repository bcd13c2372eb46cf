"""Which scorer scores an answer turn of each kind, registered explicitly in this one place: QA turns by the
judge (builder.evaluation.scoring), augmentation kinds by their deterministic scorers (builder.augment.scoring).
A kind without a scorer is reported as ``unscored``, never guessed."""

from __future__ import annotations

from typing import Any, Mapping

from swe_taskflow.augment.kinds import AUGMENT_KINDS
from swe_taskflow.errors import ConfigError

from builder.augment.scoring import augmentation_scorer

from .scoring import Scorer, ScorerFactory, Verdict, qa_judge

_REGISTRY: dict[str, ScorerFactory] = {"qa": qa_judge, **{kind: augmentation_scorer(kind) for kind in AUGMENT_KINDS}}


def register_scorer(kind: str, factory: ScorerFactory) -> None:
    """Score answer turns of ``kind`` with ``factory(context)`` (a new turn kind adds its scorer here)."""
    if kind == "issue":
        raise ConfigError("issue turns are scored by their checkpoints, not by an answer scorer", field="kind")
    _REGISTRY[kind] = factory


def scorer_for(kind: str, context: Mapping[str, Any]) -> Scorer:
    factory = _REGISTRY.get(kind)
    if factory is None:
        return lambda case: Verdict("unscored", reason=f"no scorer is registered for turn kind {kind!r}")
    return factory(context)


__all__ = ["register_scorer", "scorer_for"]
