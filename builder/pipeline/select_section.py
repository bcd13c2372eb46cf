"""The recipe's ``[select]`` section: the TFAS-optimized selection's settings, or a named preset.

Kept apart from :mod:`builder.pipeline.recipe` so the selection's settings live next to each other;
:func:`resolve_select` fills the keys a recipe leaves unset from its preset (docs/select.md).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Mapping

from swe_taskflow.errors import ConfigError


@dataclass(frozen=True)
class SelectSection:
    preset: str = ""
    """A named selection configuration (``paper``: Appendix F's optimized run, see docs/select.md); keys set
    here override its values; empty: the defaults below."""
    seed: int = 0
    """Seed of the randomized local search."""
    restarts: int = 64
    """Restarts of the local search (paper: 64)."""
    sweeps: int = 20
    """Sweeps per restart, at most (paper: 20)."""
    max_questions: int = 3
    """At most this many questions per session (0..3)."""
    include_original: bool = True
    """Whether the original single prompt is in the candidate family of tasks with an ok split."""
    apply_target_filter: bool = True
    """Only candidates with at least the target's ``min_messages`` turns."""
    min_full_split_share: float = 0.0
    """Share of ok-split tasks that must keep three issue turns (1.0: the paper's run)."""
    min_question_share: float = 0.0
    """Share of the usable questions that must be kept."""
    min_qa_task_share: float = 0.0
    """Share of the tasks with usable questions that must carry at least one (1.0: the paper's run)."""
    min_placement_share: float = 0.0
    """Diversity: share of the tasks with usable questions each placement pattern (only before, only after,
    interleaved) must hold at least (0..1/3)."""

    def to_config(self):
        """The :class:`swe_taskflow.select_config.SelectConfig` these settings describe."""
        from swe_taskflow.select_config import SelectConfig

        d = asdict(self)
        d["max_questions_per_task"] = d.pop("max_questions")
        return SelectConfig(**d)


def resolve_select(section: SelectSection, given: Mapping[str, Any], path: Path) -> SelectSection:
    """With a preset, the keys the recipe does not set take the preset's values (not the defaults above)."""
    if not section.preset:
        return section
    from swe_taskflow.select_config import PRESETS

    if section.preset not in PRESETS:
        raise ConfigError("unknown selection preset", path=str(path), field="select.preset", expected=sorted(PRESETS),
                          actual=section.preset)
    values = {("max_questions" if k == "max_questions_per_task" else k): v for k, v in PRESETS[section.preset].items()}
    return SelectSection(**{**values, **{k: getattr(section, k) for k in given}})


__all__ = ["SelectSection", "resolve_select"]
