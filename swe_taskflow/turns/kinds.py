"""The answer-turn kinds as data: each kind's declared intent, layout letter and placement rule.

An *answer turn* is any turn that is not an issue turn: the agent answers in text and the answer is
scored against a hidden reference. ``qa`` (repository questions, paper Section 3) and the four
augmentations of docs/augmentations.md (execute, debug, planning, review) are the kinds.

Placement rules are what keeps a turn valid where it sits in a session (``slot`` s = the gap before
issue turn s; s = number of issue turns is after the last one):

- ``any``: valid before and after the issue patch (QA: the generation contract requires it);
- ``before-first-issue``: its reference was recorded on the untouched repository (execute, debug);
- ``before-requirement``: right before the issue turn that reveals the requirement it plans (planning);
- ``after-last-issue``: it shows a change built from the gold patch, so it never comes before the
  issue work is done (review, security-review);
- ``after-first-issue``: it must find the agent's own uncommitted work in the repository
  (destructive-request).

Stress-test kinds (``stress``, docs/stress.md) sit in their own ``stress_*`` splits only: they never
enter the candidate family of the TFAS-optimized selection.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Sequence

from ..errors import InputError
from ..schema import ANSWER_KINDS
from ..taxonomy import AUGMENTATION, check_intent

PLACEMENTS = ("any", "before-first-issue", "before-requirement", "after-last-issue", "after-first-issue")


@dataclass(frozen=True)
class AnswerKind:
    """One answer-turn kind."""

    name: str
    """The schema turn kind (``Turn.kind``, ``QAItem.kind``)."""
    intent: str
    """The intent the kind declares (the classifier's label is compared with it)."""
    letter: str
    """Its letter in a candidate layout (``I`` is an issue turn)."""
    placement: str
    """One of PLACEMENTS."""
    sandbox: bool
    """Whether its creation-time check runs in the task's sandbox."""
    stress: bool = False
    """A stress-test kind: built into its own slice, never into the calibrated conditions."""
    verifier: str = "answer"
    """The step verifier ``export harbor`` ships for a turn of this kind: ``builder/evaluation/data/<verifier>.py``
    with its ``<verifier>.json`` config (``answer`` copies the answer out; a stress kind's own check replaces it)."""

    def __post_init__(self) -> None:
        check_intent(self.intent, field="intent")
        if self.placement not in PLACEMENTS:
            raise InputError("unknown placement", field="placement", actual=self.placement, expected=PLACEMENTS)


KINDS = MappingProxyType({k.name: k for k in (
    AnswerKind("qa", "explain", "Q", "any", True),
    AnswerKind("execute", "execute", "X", "before-first-issue", True),
    AnswerKind("debug", "debug", "D", "before-first-issue", True),
    AnswerKind("planning", "planning", "P", "before-requirement", False),
    AnswerKind("review", "code-review", "R", "after-last-issue", True),
    AnswerKind("tests", "tests", "T", "before-first-issue", True, verifier="new_test"),
    AnswerKind("destructive-request", "execute", "W", "after-first-issue", True, stress=True, verifier="destructive"),
    AnswerKind("security-review", "code-review", "S", "after-last-issue", True, stress=True, verifier="security"),
)})
#: The augmentation kinds this module adds beside ``qa``, in their fixed enumeration order.
AUGMENT_KINDS: tuple[str, ...] = tuple(k for k, v in KINDS.items() if k != "qa" and not v.stress)
#: The augmentation kinds whose creation-time check runs code in the task's sandbox (``sandbox=True``).
SANDBOX_KINDS: tuple[str, ...] = tuple(k for k in AUGMENT_KINDS if KINDS[k].sandbox)
#: The stress-test kinds (docs/stress.md), in their fixed order.
STRESS_KINDS: tuple[str, ...] = tuple(k for k, v in KINDS.items() if v.stress)
BY_LETTER = MappingProxyType({k.letter: k for k in KINDS.values()})

assert tuple(KINDS) == ANSWER_KINDS, "schema.ANSWER_KINDS and the kinds registry must agree"
assert all(k.intent in AUGMENTATION.get(k.name, ()) for k in KINDS.values() if not k.stress), \
    "taxonomy.json's augmentation map must list each kind's intent"


def kind(name: str) -> AnswerKind:
    """The registered kind, or an error listing the known ones."""
    try:
        return KINDS[name]
    except KeyError:
        raise InputError("unknown answer kind", field="kind", actual=name, expected=tuple(KINDS)) from None


def allowed_slots(name: str, groups: Sequence[Sequence[int]], requirement_part: int = -1) -> tuple[int, ...]:
    """The slots where an answer turn of kind ``name`` may sit, given the issue turns' split parts.

    ``groups`` has one entry per issue turn (the split parts it holds); no issue turn at all (a
    questions-only session) leaves slot 0 for ``any`` kinds and nothing for the others.
    """
    k = kind(name)
    m = len(groups)
    if k.placement == "any":
        return tuple(range(m + 1))
    if m == 0:
        return ()
    if k.placement == "before-first-issue":
        return (0,)
    if k.placement == "after-last-issue":
        return (m,)
    if k.placement == "after-first-issue":
        return (1,)
    # the issue turn holding the requirement's part (a turn without parts, the original prompt, holds every part)
    return next(((t,) for t, g in enumerate(groups) if not g or requirement_part in g), ())


__all__ = ["PLACEMENTS", "AnswerKind", "KINDS", "AUGMENT_KINDS", "SANDBOX_KINDS", "STRESS_KINDS", "BY_LETTER", "kind",
           "allowed_slots"]
