"""The records that flow between stages and into a release (see docs/data-model.md).

Plain frozen dataclasses with ``to_dict`` / ``from_dict``: JSON-friendly, validated at construction,
with errors that name the field. The ``datasets.Features`` of a release row live with the release
writer; these are the in-memory shapes every stage agrees on.
"""

from __future__ import annotations

import re
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from typing import Any, ClassVar, Mapping

from .errors import InputError
from .fieldtypes import check_field_types
from .taxonomy import check_intent

#: Statuses every input task ends with (nothing is dropped silently).
TASK_STATUSES = ("ok", "malformed")
SPLIT_STATUSES = ("ok", "ineligible", "failed")
#: Turn kinds: ``issue`` turns carry requirements; every other kind is an *answer turn* (the agent writes
#: an answer; its hidden reference lives in the row's ``questions`` item). See docs/augmentations.md; the
#: last two are the stress-test kinds (docs/stress.md), only ever in ``stress_*`` splits.
TURN_KINDS = ("issue", "qa", "execute", "debug", "planning", "review", "tests", "destructive-request",
              "security-review")
ANSWER_KINDS = TURN_KINDS[1:]
#: A proof's outcome (docs/proofs.md): the names below are the only spelling of each status.
PASSED = "passed"
FAILED_EXIT = "failed-exit"
NO_EVIDENCE = "no-evidence"
MODIFIED_REPO = "modified-repo"
TIMEOUT = "timeout"
OOM = "oom"
PATCH_MISMATCH = "patch-mismatch"
INFRA_ERROR = "infrastructure-error"
PROOF_STATUSES = (PASSED, FAILED_EXIT, NO_EVIDENCE, MODIFIED_REPO, TIMEOUT, OOM, PATCH_MISMATCH, INFRA_ERROR)
CONDITIONS = ("single_prompt", "split_prompt", "split_prompt_concat", "qa_first", "qa_last",
              "qa_random", "qa_only", "tfas_optimized")
SPLIT_NAME_RE = re.compile(r"^\w+(\.\w+)*$")


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if is_dataclass(value) and not isinstance(value, type):
        return record_to_dict(value)
    return value


def record_to_dict(record: Any) -> dict[str, Any]:
    """A record's fields as JSON-ready data (tuples as lists, mappings as dicts, at every depth), field order."""
    return {f.name: _plain(getattr(record, f.name)) for f in fields(record)}


class Record:
    """Base of the frozen record dataclasses: one JSON form (:meth:`to_dict`) and one checked reader."""

    #: Check values against the field annotations when reading (records whose producers predate the
    #: type checks turn it off).
    check_types: ClassVar[bool] = True
    #: Every subclass is a dataclass (what :meth:`from_dict` reads with ``fields``); declared for type checkers.
    __dataclass_fields__: ClassVar[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return record_to_dict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str | None = None, row: int | None = None):
        """The record from a JSON object: fields without a default are required, unknown keys are ignored,
        values are type-checked against the annotations (:attr:`check_types`), and a check of
        ``__post_init__`` that fails is re-raised naming ``where`` and ``row``."""
        names = {f.name for f in fields(cls)}
        required = {f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING}
        if not isinstance(data, Mapping):
            raise InputError(f"a {cls.__name__} must be a JSON object", path=where, row=row,
                             actual=type(data).__name__)
        missing = sorted(required - set(data))
        if missing:
            raise InputError(f"missing field for {cls.__name__}", path=where, row=row, field=missing[0])
        if cls.check_types:
            check_field_types(cls, data, where=where, row=row)
        try:
            return cls(**{k: v for k, v in data.items() if k in names})
        except InputError as exc:   # a check in __post_init__: add where it happened
            if exc.path is None and where is not None:
                exc = InputError(exc.message, path=where, row=row, field=exc.field, expected=exc.expected,
                                 actual=exc.actual, hint=exc.hint)
            raise exc from None


@dataclass(frozen=True)
class Task(Record):
    """A verified source task, normalized across SWE-Bench Pro / Verified / Lite.

    ``original_prompt`` is the single-message issue as the source benchmark gives it to an agent.
    ``test_command`` runs the task's tests inside its image, from the repository root, with no network;
    its output parses to per-test pass/fail (empty when the source gives none, as SWE-Bench Pro rows do).
    ``extra`` keeps the source's own fields that the normalized record does not name.
    """

    instance_id: str
    source: str
    source_revision: str
    repo: str
    base_commit: str
    original_prompt: str
    problem_statement: str = ""
    requirements: str = ""
    interface: str = ""
    image_name: str = ""
    repo_language: str = ""
    fail_to_pass: tuple[str, ...] = ()
    pass_to_pass: tuple[str, ...] = ()
    patch: str = ""
    test_patch: str = ""
    test_command: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    status: str = "ok"
    reason: str = ""

    def __post_init__(self) -> None:
        if self.status not in TASK_STATUSES:
            raise InputError("unknown task status", field="status", actual=self.status, expected=TASK_STATUSES)
        object.__setattr__(self, "fail_to_pass", tuple(self.fail_to_pass))
        object.__setattr__(self, "pass_to_pass", tuple(self.pass_to_pass))


@dataclass(frozen=True)
class SplitResult(Record):
    """A task's issue split into ordered parts (3 when ``status == 'ok'``), or why it stayed single-turn."""

    instance_id: str
    status: str
    parts: tuple[str, ...] = ()
    violations: tuple[Mapping[str, Any], ...] = ()   # [{"kind": ..., "detail": ...}]
    splitter: Mapping[str, Any] = field(default_factory=dict)  # name, model, prompt_sha256
    reason: str = ""
    original_prompt: str = ""   # the single-message issue the parts were split from

    def __post_init__(self) -> None:
        if self.status not in SPLIT_STATUSES:
            raise InputError("unknown split status", field="status", actual=self.status, expected=SPLIT_STATUSES)
        object.__setattr__(self, "parts", tuple(self.parts))
        object.__setattr__(self, "violations", tuple(dict(v) for v in self.violations))
        if self.status == "ok" and (len(self.parts) != 3 or any(not p.strip() for p in self.parts)):
            raise InputError("an ok split must have 3 non-empty parts", field="parts", actual=len(self.parts))



@dataclass(frozen=True)
class QAItem(Record):
    """An answer turn's item: a repository question (``kind == "qa"``) or an augmentation turn
    (execute, debug, planning, review), with its hidden reference, evidence and proof.

    ``proof_report`` is the dict form of a proof report (see builder/proofs); ``status`` is
    ``candidate`` until validated, then ``accepted`` or ``rejected`` with a ``reason``.
    """

    question_id: str
    instance_id: str
    question: str
    reference_answer: str
    evidence: tuple[Mapping[str, Any], ...] = ()     # [{"path", "symbol", "note"}]
    proof_script: str = ""
    generator: Mapping[str, Any] = field(default_factory=dict)
    reviewer: Mapping[str, Any] = field(default_factory=dict)
    proof_report: Mapping[str, Any] | None = None
    pool: str = ""
    status: str = "candidate"
    reason: str = ""
    intent: str = "explain"
    #: The answer-turn kind (``qa`` or an augmentation kind, see swe_taskflow.turns.kinds).
    kind: str = "qa"
    # ---- hidden, kind-specific reference fields (docs/augmentations.md); empty for ``qa``
    #: execute: the command the turn asks to run; debug: the command that shows the failure.
    command: str = ""
    #: execute: the recorded facts ``[{"name", "value"}]``; debug: the failing test and assertion;
    #: review: the tests the seeded defect breaks.
    facts: tuple[Mapping[str, Any], ...] = ()
    #: debug / planning / review: the code locations ``[{"path", "symbol", "line_start", "line_end"}]``.
    locations: tuple[Mapping[str, Any], ...] = ()
    #: review: the seeded defect ``{"operator", "path", "line", "before", "after"}``.
    mutation: Mapping[str, Any] | None = None
    #: planning: the split part (0-based) whose requirement the turn plans; -1 when not planning.
    requirement_part: int = -1
    #: Creation-time checks ``[{"name", "passed", "detail"}]`` (what made the item accepted or rejected).
    checks: tuple[Mapping[str, Any], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "evidence", tuple(dict(e) for e in self.evidence))
        check_intent(self.intent, field="intent")
        if self.kind not in ANSWER_KINDS:
            raise InputError("unknown answer kind", field="kind", actual=self.kind, expected=ANSWER_KINDS)
        for name in ("facts", "locations", "checks"):
            object.__setattr__(self, name, tuple(dict(x) for x in getattr(self, name)))
        if self.mutation is not None:
            object.__setattr__(self, "mutation", dict(self.mutation))
        if not isinstance(self.requirement_part, int) or isinstance(self.requirement_part, bool):
            raise InputError("requirement_part must be an integer", field="requirement_part",
                             actual=self.requirement_part)


@dataclass(frozen=True)
class Turn(Record):
    """One user turn in delivery order; ``split_parts`` / ``question_id`` link it to its source."""

    turn_index: int
    kind: str
    text: str
    intent: str
    split_parts: tuple[int, ...] = ()
    question_id: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in TURN_KINDS:
            raise InputError("unknown turn kind", field="kind", actual=self.kind, expected=TURN_KINDS)
        check_intent(self.intent, field="intent")
        object.__setattr__(self, "split_parts", tuple(int(i) for i in self.split_parts))



@dataclass(frozen=True)
class Session:
    """The ordered user turns one condition gives an agent for one task."""

    instance_id: str
    condition: str
    turns: tuple[Turn, ...]
    question_pool: str | None = None

    def __post_init__(self) -> None:
        if not SPLIT_NAME_RE.match(self.condition):
            raise InputError("condition is not a valid Hub split name", field="condition",
                             actual=self.condition, expected=SPLIT_NAME_RE.pattern)
        object.__setattr__(self, "turns", tuple(self.turns))
        if not self.turns:
            raise InputError("a session needs at least one turn", field="turns", actual=0)

    @property
    def intents(self) -> list[str]:
        return [t.intent for t in self.turns]

    def to_dict(self) -> dict[str, Any]:
        return {"instance_id": self.instance_id, "condition": self.condition,
                "question_pool": self.question_pool, "turns": [t.to_dict() for t in self.turns]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str | None = None, row: int | None = None) -> "Session":
        turns = tuple(Turn.from_dict(t, where=where, row=row) for t in data.get("turns", ()))
        return cls(instance_id=data["instance_id"], condition=data["condition"], turns=turns,
                   question_pool=data.get("question_pool"))
