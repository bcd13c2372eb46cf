"""How the TFAS-optimized selection searches and what it must respect; named presets.

The paper asks that "the component scores and full candidate-selection configuration accompany
every aggregate TFAS" (Appendix F), so a :class:`SelectConfig` is a plain, serializable record and
:func:`describe` turns it into the one line reports print beside a score.

Constraints are lower bounds on corpus sums of per-candidate features (:data:`FEATURES`): each
``min_*_share`` field's help says what it bounds, docs/select.md ("Constraints") why.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, Mapping

from .candidates import MAX_QUESTIONS
from .errors import ConfigError
from .fieldtypes import check_settings, setting, table_values

#: The paper's three placement patterns (Appendix F), in report order.
PLACEMENTS = ("only_before", "only_after", "interleaved")
#: Per-candidate quantities the constraints bound from below (corpus sums).
FEATURES = ("full_split", "questions", "qa_task", *PLACEMENTS)


#: Upper bound of restarts and sweeps (a recipe typo like 1e9 would run for days).
MAX_SEARCH_STEPS = 100_000
#: Augmentation turns one session may carry: at most one per kind (execute, debug, planning, review).
MAX_AUGMENTS = 4


#: Named configurations. ``paper``: the optimized run of Appendix F. Every ok-split task keeps its
#: three issue turns (the 445 tasks without questions stay as Split; the optimizer only decides,
#: per task, how many of its questions to keep and where); every task with questions carries at
#: least one (113 + 85 + 57 = all 255 in the paper); each placement pattern holds at least a fifth
#: of those tasks (the paper reports 67 / 86 / 102 of 255, the smallest 26%); 64 restarts, up to 20
#: sweeps, fixed seed, long-slice filter, at most three questions per session.
PRESETS: Mapping[str, Mapping[str, Any]] = {
    "paper": {"restarts": 64, "sweeps": 20, "seed": 0, "max_questions_per_task": 3, "include_original": False,
              "apply_target_filter": True, "min_full_split_share": 1.0, "min_question_share": 0.0,
              "min_qa_task_share": 1.0, "min_placement_share": 0.2},
}


def _share(help: str) -> Any:
    return setting(0.0, lo=0.0, hi=1.0, help=help)


@dataclass(frozen=True)
class SelectConfig:
    """How the TFAS-optimized selection searches, and the constraints it must respect (each setting declared
    once: :func:`swe_taskflow.fieldtypes.setting`)."""

    restarts: int = setting(64, lo=1, hi=MAX_SEARCH_STEPS, help="Random starting selections (paper: 64).")
    sweeps: int = setting(20, lo=1, hi=MAX_SEARCH_STEPS,
                          help="At most this many sweeps over all tasks per restart (paper: 20).")
    seed: int = setting(0, lo=0, hi=2**63 - 1, help="Seed of the one numpy generator all randomness comes from.")
    max_questions_per_task: int = setting(MAX_QUESTIONS, lo=0, hi=MAX_QUESTIONS, key="max_questions",
                                          help="Most questions one session may carry.")
    include_original: bool = setting(True, help="Whether the original single prompt (and its QA placements) is in "
                                                "the family of ok-split tasks.")
    apply_target_filter: bool = setting(True, help="Keep only candidates with at least ``target.min_messages`` "
                                                   "turns (the long-slice filter).")
    min_full_split_share: float = _share("Share of ok-split tasks that must keep their three issue turns (1.0: the "
                                         "paper's run, where the optimizer only chose how many questions and where).")
    min_question_share: float = _share("Share of the usable questions (at most ``max_questions`` per task) to keep.")
    min_qa_task_share: float = _share("Share of the tasks with usable questions that must carry at least one question "
                                      "(1.0: the paper's run, where all 255 tasks with questions got one to three).")
    min_placement_share: float = _share("Diversity: each placement pattern (only before, only after, interleaved) "
                                        "must be the pattern of at least this share (at most 1/3) of the tasks with "
                                        "usable questions.")
    preset: str = setting("", choices=PRESETS, noun="selection preset", keep=("",),
                          help="Named configuration the other keys override (``paper``: Appendix F's run); "
                               "recorded, never re-applied.")
    max_augments_per_session: int = setting(0, lo=0, hi=MAX_AUGMENTS, set_by="augmentations.max_per_session",
                                         help="Augmentation turns (at most one per kind, valid placements only: "
                                              "docs/augmentations.md) one session may add; 0: the paper's family.")

    def __post_init__(self) -> None:
        check_settings(self)
        if len(PLACEMENTS) * self.min_placement_share > 1.0 + 1e-12:
            raise ConfigError("three placement patterns cannot each hold more than a third of the tasks",
                              field="min_placement_share", expected="<= 1/3", actual=self.min_placement_share)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_preset(cls, name: str, **overrides: Any) -> "SelectConfig":
        """The preset's values with ``overrides`` on top (None values are ignored)."""
        if name not in PRESETS:
            raise ConfigError("unknown selection preset", field="preset", expected=sorted(PRESETS), actual=name)
        known = {f.name for f in fields(cls)}
        bad = sorted(set(overrides) - known)
        if bad:
            raise ConfigError("unknown selection setting", field=bad[0], expected=sorted(known))
        values = {**PRESETS[name], **{k: v for k, v in overrides.items() if v is not None}}
        return cls(**values, preset=name)

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any], *, where: str | None = None) -> "SelectConfig":
        """A recipe's ``[select]`` table: its preset (if it names one) with the table's keys on top; an error
        names the file and ``select.<key>`` (the recipe's spelling: ``max_questions``)."""
        values = table_values(cls, settings, path=where, section="select")
        preset = values.pop("preset", "")
        try:
            return cls.from_preset(preset, **values) if preset else cls(**values)
        except ConfigError as exc:
            key = next((k for k, f in _KEYS.items() if f == exc.field), exc.field)
            raise ConfigError(exc.message, path=where, field=f"select.{key}" if key else "select",
                              expected=exc.expected, actual=exc.actual, hint=exc.hint) from None

    def overrides(self) -> dict[str, Any]:
        """Settings that differ from the preset's (all non-default settings without a preset)."""
        base = SelectConfig.from_preset(self.preset) if self.preset else SelectConfig()
        return {k: v for k, v in self.to_dict().items() if k != "preset" and v != getattr(base, k)}


#: Recipe key -> SelectConfig field (the declarations' ``key``).
_KEYS: Mapping[str, str] = {f.metadata["setting"].key or f.name: f.name for f in fields(SelectConfig)}

def describe(config: SelectConfig | Mapping[str, Any]) -> str:
    """The selection configuration in one line, for printing beside an aggregate TFAS."""
    c = config if isinstance(config, SelectConfig) else SelectConfig(**dict(config))
    head = f"preset {c.preset}" if c.preset else "no preset"
    ov = c.overrides() if c.preset else {}
    if ov:
        head += " (overridden: " + ", ".join(f"{k}={v}" for k, v in sorted(ov.items())) + ")"
    parts = [f"{c.restarts} restarts x <= {c.sweeps} sweeps, seed {c.seed}",
             f"<= {c.max_questions_per_task} questions per session",
             "original prompt in family" if c.include_original else "original prompt not in family",
             "long-slice filter" if c.apply_target_filter else "no length filter"]
    if c.max_augments_per_session:
        parts.append(f"<= {c.max_augments_per_session} augmentation turns per session")
    for name, text in (("min_full_split_share", "keep 3 issue turns"), ("min_qa_task_share", "tasks with questions carry one"),
                       ("min_question_share", "questions kept"), ("min_placement_share", "each placement pattern")):
        v = getattr(c, name)
        if v:
            parts.append(f"{text} >= {100 * v:g}%")
    return f"{head}: " + "; ".join(parts)


#: How each fixed condition picks a task's one candidate (no search).
FIXED_RULES: Mapping[str, str] = {
    "single_prompt": "fixed: the original prompt",
    "split_prompt": "fixed: the 3 split turns",
    "split_prompt_concat": "fixed: the 3 split parts in one message",
    "qa_first": "fixed: every question of the task, then the 3 issue turns",
    "qa_last": "fixed: the 3 issue turns, then every question of the task",
    "qa_random": "fixed: every question of the task at a seeded random interleaving",
    "qa_only": "fixed: the task's questions only",
}


def describe_split(condition: str, *, pool: str | None = None, seed: int = 0,
                   config: SelectConfig | Mapping[str, Any] | None = None) -> str:
    """The candidate-selection configuration of one released split, in one line."""
    if condition == "tfas_optimized":
        text = "TFAS-optimized, " + (describe(config) if config is not None else "configuration not recorded")
    else:
        text = FIXED_RULES.get(condition, f"fixed: condition {condition}")
        if condition == "qa_random":
            text += f" (seed {seed})"
    return text + (f"; question pool {pool}" if pool else "")


__all__ = ["MAX_QUESTIONS", "PLACEMENTS", "FEATURES", "SelectConfig", "PRESETS", "describe", "FIXED_RULES",
           "describe_split"]
