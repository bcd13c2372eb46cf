"""The recipe's ``[augmentations]`` section (docs/augmentations.md) and its validation."""

from __future__ import annotations

from dataclasses import dataclass

from swe_taskflow.errors import ConfigError


@dataclass(frozen=True)
class AugmentationsSection:
    """Verifiable turns beyond issue and QA turns (docs/augmentations.md); off unless ``kinds`` names some."""

    kinds: tuple[str, ...] = ()
    """Kinds to generate: any of ``execute``, ``debug``, ``planning``, ``review`` (empty: none)."""
    writer: str = "template"
    """Who words the turns: ``template`` (hand-written phrasings, offline) or ``llm``."""
    llm: str = ""
    """LLM backend for the ``llm`` writer (``openai``, ``transformers``, ``replay``)."""
    model: str = ""
    """Model id for the ``llm`` writer."""
    responses: str = ""
    """Response store for the ``llm`` writer (relative to the recipe; replayed offline)."""
    per_kind: int = 2
    """Accepted items per kind and task, at most."""
    review_attempts: int = 4
    """Seeded defects tried per task for review turns."""
    specs: tuple[str, ...] = ()
    """Hand-written spec files (JSONL, relative to the recipe), checked like generated ones."""
    max_per_session: int = 2
    """Augmentation turns the TFAS-optimized selection may add to one session (0: the paper's family)."""
    intents: str = "declared"
    """Intents of augmentation turns for TFAS: ``declared`` (the kind's, as QA turns carry explain) or
    ``classify`` (the classifier's label); the report lists every disagreement either way."""
    timeout_s: int = 120
    """Wall-clock limit of one sandbox run of a check."""


def check_augmentations(recipe) -> None:
    """Validate the [augmentations] section (every error names the recipe and the key)."""
    from swe_taskflow.augment.kinds import AUGMENT_KINDS

    p, sec = str(recipe.path), recipe.augmentations
    for i, k in enumerate(sec.kinds):
        if k not in AUGMENT_KINDS:
            raise ConfigError("unknown augmentation kind", path=p, field=f"augmentations.kinds[{i}]",
                              expected=AUGMENT_KINDS, actual=k)
    if sec.writer not in ("template", "llm"):
        raise ConfigError("unknown augmentation writer", path=p, field="augmentations.writer",
                          expected=("template", "llm"), actual=sec.writer)
    if sec.writer == "llm" and not sec.llm:
        raise ConfigError("the llm writer needs augmentations.llm", path=p, field="augmentations.llm")
    if sec.intents not in ("classify", "declared"):
        raise ConfigError("unknown augmentation intents", path=p, field="augmentations.intents",
                          expected=("classify", "declared"), actual=sec.intents)
    for key, value, lo, hi in (("per_kind", sec.per_kind, 1, 10), ("review_attempts", sec.review_attempts, 1, 50),
                               ("max_per_session", sec.max_per_session, 0, 4), ("timeout_s", sec.timeout_s, 1, 3600)):
        if not lo <= value <= hi:
            raise ConfigError("out of range", path=p, field=f"augmentations.{key}", expected=f"{lo}..{hi}",
                              actual=value)
    for i, f in enumerate(sec.specs):
        if not recipe.resolve(f).exists():
            raise ConfigError("spec file not found", path=p, field=f"augmentations.specs[{i}]",
                              actual=str(recipe.resolve(f)))
    if sec.responses and not recipe.resolve(sec.responses).exists():
        raise ConfigError("path not found", path=p, field="augmentations.responses",
                          actual=str(recipe.resolve(sec.responses)))


def selection_config(recipe):
    """The TFAS-optimized selection's config: the [select] section's, admitting ``max_per_session``
    augmentation turns per session when [augmentations] names kinds (one place for stages and provenance)."""
    import dataclasses

    sec = recipe.augmentations
    return dataclasses.replace(recipe.select, max_augments_per_task=sec.max_per_session if sec.kinds else 0)


__all__ = ["AugmentationsSection", "check_augmentations", "selection_config"]
