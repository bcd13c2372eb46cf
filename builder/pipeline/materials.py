"""Task materials and condition rows as the assemble, select, write and report stages see them.

Pure functions of typed stage outputs (builder.pipeline.stage_data), kept outside ``stages/`` so that
no stage imports a sibling.
"""

from __future__ import annotations

from typing import Any

from swe_taskflow.candidates import build_materials
from swe_taskflow.schema import QAItem, SplitResult

_LABEL_FIELDS = ("declared_intent", "classified_intent")


def labelled_items(labelled: list[dict[str, Any]]) -> list[QAItem]:
    """The classify_turns stage's labelled questions and augmentation items as QAItems."""
    return [QAItem.from_dict({k: v for k, v in obj.items() if k not in _LABEL_FIELDS}, row=n)
            for n, obj in enumerate(labelled, start=1)]


def materials_and_intents(splits: list[SplitResult], labelled: list[dict[str, Any]],
                          intents: list[dict[str, Any]], pool_name: str | None = None):
    """Task materials (splits + accepted questions of ``pool_name``, relabelled; every pool when None),
    the text -> intent map, and the pool summary."""
    pool = labelled_items(labelled)
    if pool_name is not None:   # augmentation items belong to no question pool: the selection may use them all
        pool = [q for q in pool if q.pool == pool_name or q.kind != "qa"]
    materials, pool_summary = build_materials(splits, pool)
    return materials, {obj["text"]: obj["intent"] for obj in intents}, pool_summary


def condition_rows(recipe, *maps: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """Split name -> its ConditionRow dicts, in the recipe's order (fixed conditions and the selection)."""
    found = {split: rows for m in maps for split, rows in m.items()}
    return {s.split: found[s.split] for s in recipe.splits() if s.split in found}
