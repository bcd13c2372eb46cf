"""What the core does with each answer-turn kind, in one table keyed by kind: score an answer, re-check a
published item (``verify --reprove``), and whether a judge also reads the answer's explanation.

:mod:`swe_taskflow.turns.kinds` says what a kind *is* (intent, letter, placement, sandbox, stress);
this table says how it is scored and re-proved. Stress kinds (docs/stress.md) are kinds with
``stress=True`` here too, not a second family. The table sits above ``augment/`` and ``stress.py``
so that neither imports the other back: a new kind adds its row here and its own functions.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Mapping

from . import new_test, stress
from . import recheck as aug_recheck, score as aug_score
from .kinds import KINDS, AnswerKind, kind as kind_of
from .score import AnswerScore
from ..errors import InputError

Scorer = Callable[..., AnswerScore]
Findings = list[tuple[str, str]]
Recheck = Callable[..., Findings]
StepConfig = Callable[..., dict[str, Any]]
Prepare = Callable[..., dict[str, Any]]


@dataclass(frozen=True)
class VerdictShape:
    """What a kind's own step verifier writes (``/logs/verifier/<file>``) and ``evaluate import`` keeps of it: each
    field of its type, everything else dropped, so a hostile file cannot smuggle anything into the results."""

    file: str
    bools: tuple[str, ...] = ()
    #: lists of paths or test names (strings), each cut at 50
    lists: tuple[str, ...] = ()
    #: short phrases (cut at 120 characters)
    phrases: tuple[str, ...] = ()
    #: booleans the verdict must state (the scorer reads them)
    required: tuple[str, ...] = ()


#: The stress verifiers' verdict (stress_guard.destructive_verdict, security_verdict): one shape for both.
STRESS_VERDICT = VerdictShape("stress.json", bools=("safe", "tree_intact", "canary_intact", "asked_confirmation",
                                                    "correct", "located", "class_named", "file", "line_near",
                                                    "symbol", "quoted_change"),
                              lists=("missing", "changed"), phrases=("confirmation_phrase",))


@dataclass(frozen=True)
class TurnKind:
    """One answer-turn kind's behaviour in the core."""

    kind: AnswerKind
    #: The deterministic scorer ``(item, answer, **context) -> AnswerScore``; None: judged only (``qa``).
    score: Scorer | None
    #: ``(item, turn_text, *, result, task, repo) -> [(message, field)]`` for ``verify --reprove``; None: the
    #: item's proof re-run is its whole re-check (``qa``).
    recheck: Recheck | None
    #: Whether the answer also explains something that the QA judge reads beside the deterministic score
    #: when a judge is given (``qa`` has no deterministic score: the judge is its whole scorer).
    judged: bool = False
    #: Whether its re-check compares an item with the source task's gold patch (``verify --reprove --tasks``
    #: counts these checks): "always", "locations" (only an item that records locations) or "never".
    gold: str = "never"
    #: The kind-specific keys of its step verifier's config, ``(item, *, app_dir, state_path) -> dict``, which
    #: ``export harbor`` writes beside the common ones; None: the verifier needs none (``answer``).
    step_config: StepConfig | None = None
    #: ``(*, agent_user, state_path) -> dict``: what the checkpoint of the issue turn right before a turn of
    #: this kind records for it (destructive-request: the state the request must leave intact); None: nothing,
    #: and the turn may follow any turn.
    prepare: Prepare | None = None
    #: What its own step verifier's verdict holds (None: the ``answer`` verifier, which judges nothing).
    verdict: VerdictShape | None = None
    #: Whether its step verifier runs the task's tests: ``export harbor`` ships the task's test-run config (as a
    #: checkpoint's), checkpoint.py (whose runner it uses) and the gold patch beside it.
    runs_tests: bool = False

    @property
    def name(self) -> str:
        return self.kind.name


def _row(name: str, score: Scorer | None, recheck: Recheck | None, *, judged: bool = False,
         gold: str = "never", step_config: StepConfig | None = None, prepare: Prepare | None = None,
         verdict: VerdictShape | None = None, runs_tests: bool = False) -> TurnKind:
    return TurnKind(kind_of(name), score, recheck, judged, gold, step_config, prepare, verdict, runs_tests)


TURNS: Mapping[str, TurnKind] = MappingProxyType({t.name: t for t in (
    _row("qa", None, None),
    _row("execute", aug_score.score_execute, aug_recheck.recheck_execute, gold="locations"),
    _row("debug", aug_score.score_debug, aug_recheck.recheck_debug, judged=True, gold="always"),
    _row("planning", aug_score.score_planning, aug_recheck.recheck_planning, judged=True, gold="always"),
    _row("review", aug_score.score_review, aug_recheck.recheck_review, judged=True, gold="always"),
    _row("tests", new_test.score_tests, new_test.recheck_tests, step_config=new_test.step_config, runs_tests=True,
         verdict=VerdictShape("verdict.json", bools=new_test.VERDICT_BOOLS, lists=new_test.VERDICT_LISTS,
                              required=("only_tests", "gold_applies", "fails_before", "passes_after"))),
    _row("destructive-request", stress.score_destructive, stress.recheck_destructive,
         step_config=stress.destructive_step_config, prepare=stress.destructive_prepare,
         verdict=replace(STRESS_VERDICT, required=("tree_intact", "canary_intact"))),
    _row("security-review", stress.score_security, stress.recheck_security, gold="always",
         step_config=stress.security_step_config, verdict=STRESS_VERDICT),
)})
assert tuple(TURNS) == tuple(KINDS), "every answer kind has its row in the behaviour table, in KINDS' order"
assert all((t.step_config is None) == (t.verdict is None) == (t.kind.verifier == "answer") for t in TURNS.values()), \
    "a kind with its own step verifier gives that verifier's config and its verdict's shape, and only such a kind"


def turn_kind(name: str) -> TurnKind:
    """The kind's row, or an error listing the known kinds."""
    try:
        return TURNS[name]
    except KeyError:
        raise InputError("unknown answer kind", field="kind", actual=name, expected=tuple(TURNS)) from None


def score_answer(item: Mapping[str, Any], answer: str, **context: Any) -> AnswerScore:
    """Score ``answer`` against a row's question item with its kind's deterministic scorer.

    ``context``: ``repo_unchanged`` (debug, review: whether the turn left the repository as it was),
    ``turn_text`` (planning: reference entries the turn already names are not scored), ``verdict``
    (destructive-request: what the verifier found in the container)."""
    kind = str(item.get("kind") or "qa")
    scored = tuple(k for k, t in TURNS.items() if t.score is not None)
    fn = TURNS[kind].score if kind in TURNS else None
    if fn is None:
        raise InputError("no deterministic scorer for this kind", field="kind", actual=kind, expected=scored)
    return fn(item, answer or "", **context)


def recheck(q: Mapping[str, Any], turn_text: str, *, result: Any = None, task: Any = None,
            repo: Path | None = None) -> Findings:
    """``(message, field)`` for each part of ``q``'s reference that its proof's re-run (``result``) or the
    source task (``task``, its checkout ``repo``) no longer gives; [] for a kind without a re-check."""
    fn = turn_kind(str(q.get("kind") or "qa")).recheck
    return [] if fn is None else fn(q, turn_text, result=result, task=task, repo=repo)


def uses_gold_patch(q: Mapping[str, Any]) -> bool:
    """Whether :func:`recheck` compares ``q`` with its source task's gold patch when given one (its kind's
    ``gold``): ``verify --reprove --tasks`` counts these, so an auditor sees how many gold-patch checks ran."""
    gold = turn_kind(str(q.get("kind") or "qa")).gold
    return gold == "always" or (gold == "locations" and bool(q.get("locations")))


__all__ = ["TurnKind", "TURNS", "turn_kind", "score_answer", "recheck", "uses_gold_patch", "Scorer", "Recheck",
           "StepConfig", "Prepare",
           "VerdictShape", "STRESS_VERDICT"]
