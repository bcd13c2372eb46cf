"""The per-task candidate family of the paper's Appendix F, and the material it is built from.

For one verified task the family holds every combination of
- an issue-turn *backbone*: the original single prompt, or one to three issue turns formed by
  merging adjacent split parts (``split_3``, ``merge_01_2``, ``merge_0_12``, ``concat_012``);
- zero to three of the task's questions (subsets in pool order);
- every placement of those questions before, between or after the issue turns (issue turns and
  questions each keep their own order);
- with ``max_augments > 0``, zero to ``max_augments`` augmentation turns (at most one per kind:
  execute, debug, planning, review; docs/augmentations.md) at every position their kind's placement
  rule allows (:func:`swe_taskflow.turns.kinds.allowed_slots`).

A candidate is a small description (backbone, layout string, question ids, intents per turn);
:func:`build_session` turns it into a :class:`~swe_taskflow.schema.Session`. Intents of issue
texts come from the caller (a mapping or a batch callable), so this module stays pure.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from .errors import InputError
from .schema import QAItem, Session, SplitResult, Turn
from .taxonomy import check_intent

#: Issue-turn backbones, in enumeration order, and the split parts each issue turn holds.
#: ``original`` has one turn with the source's own issue text (no split part).
BACKBONES: Mapping[str, tuple[tuple[int, ...], ...]] = {
    "split_3": ((0,), (1,), (2,)),
    "merge_01_2": ((0, 1), (2,)),
    "merge_0_12": ((0,), (1, 2)),
    "concat_012": ((0, 1, 2),),
    "original": ((),),
}
#: How merged split parts are joined into one message.
PART_JOINER = "\n\n"
#: The most questions one session may carry (Appendix F: zero to three).
MAX_QUESTIONS = 3

#: Intents of issue-turn texts: a mapping text -> intent, or a callable classifying a batch of texts.
IntentSource = Mapping[str, str] | Callable[[Sequence[str]], Sequence[str]]


@dataclass(frozen=True)
class TaskMaterial:
    """What sessions of one task are assembled from: its split result and its usable questions."""

    instance_id: str
    original_prompt: str
    split_status: str
    split_reason: str = ""
    parts: tuple[str, ...] = ()
    questions: tuple[QAItem, ...] = ()
    #: Accepted augmentation items (kinds other than ``qa``); only the selection uses them.
    augments: tuple[QAItem, ...] = ()

    @property
    def split_ok(self) -> bool:
        return self.split_status == "ok"

    @property
    def question_pool(self) -> str | None:
        pools = sorted({q.pool for q in self.questions if q.pool})
        return ",".join(pools) if pools else None

    def backbones(self, *, include_original: bool = True) -> dict[str, tuple[tuple[str, tuple[int, ...]], ...]]:
        """Backbone name -> its issue turns as (text, split_parts). Without an ok split only ``original``."""
        out: dict[str, tuple[tuple[str, tuple[int, ...]], ...]] = {}
        if self.split_ok:
            for name, groups in BACKBONES.items():
                if name == "original":
                    continue
                out[name] = tuple((PART_JOINER.join(self.parts[i] for i in g), g) for g in groups)
        if include_original or not self.split_ok:
            out["original"] = ((self.original_prompt, ()),)
        return out

    def issue_texts(self) -> list[str]:
        """Every distinct issue text the family of this task uses (each needs an intent)."""
        return list(dict.fromkeys(text for turns in self.backbones().values() for text, _ in turns))


@dataclass(frozen=True)
class PoolSummary:
    """How the question pool was used: nothing is dropped without a count and the ids."""

    used: int
    by_status: Mapping[str, int]
    unknown_task_ids: tuple[str, ...]
    excluded_ids: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"used": self.used, "by_status": dict(sorted(self.by_status.items())),
                "unknown_task_question_ids": list(self.unknown_task_ids),
                "excluded_question_ids": list(self.excluded_ids)}


def build_materials(splits: Sequence[SplitResult], pool: Iterable[QAItem] = (), *,
                    statuses: Sequence[str] = ("accepted",)) -> tuple[list[TaskMaterial], PoolSummary]:
    """Pair each split result with its task's questions whose status is in ``statuses`` (pool order).

    Items of augmentation kinds go to ``TaskMaterial.augments`` (the fixed conditions never use them)."""
    by_task: dict[str, list[QAItem]] = {}
    aug_by_task: dict[str, list[QAItem]] = {}
    seen_tasks: set[str] = set()
    for i, s in enumerate(splits, start=1):
        if s.instance_id in seen_tasks:
            raise InputError("duplicate task in split results", row=i, field="instance_id", actual=s.instance_id)
        seen_tasks.add(s.instance_id)
        if not s.original_prompt.strip():
            raise InputError("split result has no original prompt", row=i, field="original_prompt",
                             actual=s.instance_id)
    counts: dict[str, int] = {}
    unknown: list[str] = []
    excluded: list[str] = []
    qids: set[str] = set()
    used = 0
    for q in pool:
        if q.question_id in qids:
            raise InputError("duplicate question id in pool", field="question_id", actual=q.question_id)
        qids.add(q.question_id)
        counts[q.status] = counts.get(q.status, 0) + 1
        if q.status not in statuses:
            excluded.append(q.question_id)
        elif q.instance_id not in seen_tasks:
            unknown.append(q.question_id)
        else:
            (by_task if q.kind == "qa" else aug_by_task).setdefault(q.instance_id, []).append(q)
            used += 1
    materials = [TaskMaterial(instance_id=s.instance_id, original_prompt=s.original_prompt,
                              split_status=s.status, split_reason=s.reason,
                              parts=tuple(s.parts) if s.status == "ok" else (),
                              questions=tuple(by_task.get(s.instance_id, ())),
                              augments=tuple(aug_by_task.get(s.instance_id, ())))
                 for s in splits]
    return materials, PoolSummary(used, counts, tuple(unknown), tuple(excluded))


def resolve_intents(texts: Iterable[str], source: IntentSource) -> dict[str, str]:
    """Intent of each distinct text: looked up in a mapping, or classified once per distinct text."""
    distinct = list(dict.fromkeys(texts))
    if callable(source) and not isinstance(source, Mapping):
        labels = list(source(distinct))
        if len(labels) != len(distinct):
            raise InputError("intent classifier returned a wrong number of labels",
                             expected=len(distinct), actual=len(labels))
        return {t: check_intent(lab) for t, lab in zip(distinct, labels)}
    out = {}
    for t in distinct:
        if t not in source:
            raise InputError("no intent for an issue text", field="intent", actual=t[:80],
                             hint="classify every issue text (originals, parts and merged parts)")
        out[t] = check_intent(source[t])
    return out


@dataclass(frozen=True)
class Candidate:
    """One session shape for a task: which issue turns, which questions, in which order.

    ``layout`` has one letter per turn: ``I`` the next issue turn of the backbone, ``Q`` the next
    selected question, another kind's letter (``X`` execute, ``D`` debug, ``P`` planning, ``R``
    review) the next augmentation turn. ``question_ids`` name every answer turn in delivery order;
    ``intents`` are the intents of all turns in delivery order.
    """

    backbone: str
    layout: str
    question_ids: tuple[str, ...]
    intents: tuple[str, ...]

    @property
    def n_turns(self) -> int:
        return len(self.layout)

    @property
    def n_questions(self) -> int:
        """QA turns (the paper's questions); augmentation turns are counted by :attr:`n_augments`."""
        return self.layout.count("Q")

    @property
    def n_augments(self) -> int:
        return len(self.layout) - self.layout.count("I") - self.layout.count("Q")

    def augment_kinds(self) -> tuple[str, ...]:
        """Kinds of the augmentation turns, in delivery order."""
        from .turns.kinds import BY_LETTER
        return tuple(BY_LETTER[c].name for c in self.layout if c not in "IQ")

    @property
    def full_split(self) -> bool:
        """Whether the task keeps its three issue turns."""
        return self.backbone == "split_3"

    def slots(self) -> dict[str, int]:
        """Questions before the first issue turn, between issue turns, after the last one."""
        first, last = self.layout.find("I"), self.layout.rfind("I")
        out = {"before": 0, "between": 0, "after": 0}
        for i, c in enumerate(self.layout):
            if c == "Q":
                out["before" if first < 0 or i < first else "after" if i > last else "between"] += 1
        return out

    def placement(self) -> str:
        """``none``, ``only_before``, ``only_after`` or ``interleaved`` (the paper's three patterns)."""
        s = self.slots()
        if not self.n_questions:
            return "none"
        if s["before"] == self.n_questions:
            return "only_before"
        if s["after"] == self.n_questions:
            return "only_after"
        return "interleaved"

    def to_dict(self) -> dict[str, Any]:
        return {"backbone": self.backbone, "layout": self.layout, "question_ids": list(self.question_ids),
                "intents": list(self.intents), "n_turns": self.n_turns, "n_questions": self.n_questions,
                "n_augments": self.n_augments, "augment_kinds": list(self.augment_kinds()),
                "slots": self.slots(), "placement": self.placement()}


def layouts(n_issue: int, n_questions: int) -> list[str]:
    """Every order of ``n_issue`` issue turns and ``n_questions`` questions, each keeping its own order."""
    n = n_issue + n_questions
    return ["".join("Q" if i in qpos else "I" for i in range(n))
            for qpos in itertools.combinations(range(n), n_questions)]


def augment_choices(material: TaskMaterial, max_augments: int) -> list[tuple[QAItem, ...]]:
    """Sets of augmentation items a session may carry: at most one per kind, at most ``max_augments``,
    in kind order (execute, debug, planning, review), the empty set first."""
    from .turns.kinds import AUGMENT_KINDS
    by_kind = [[a for a in material.augments if a.kind == k] for k in AUGMENT_KINDS]
    out: list[tuple[QAItem, ...]] = [()]
    for items in by_kind:
        out += [c + (a,) for c in out if len(c) < max_augments for a in items]
    return sorted(out, key=len)


def insert_augments(layout: str, ids: tuple[str, ...], items: Sequence[QAItem],
                    groups: Sequence[Sequence[int]]) -> list[tuple[str, tuple[str, ...]]]:
    """Every way to add ``items`` to a layout at positions their kinds allow (order kept per slot region)."""
    from .turns.kinds import KINDS, allowed_slots
    done = [(layout, ids)]
    for item in items:
        letter = KINDS[item.kind].letter
        slots = allowed_slots(item.kind, groups, item.requirement_part)
        nxt: dict[tuple[str, tuple[str, ...]], None] = {}
        for lay, qids in done:
            issue_at = [i for i, c in enumerate(lay) if c == "I"]
            for slot in slots:
                lo = issue_at[slot - 1] + 1 if slot > 0 else 0
                hi = issue_at[slot] if slot < len(issue_at) else len(lay)
                for p in range(lo, hi + 1):
                    k = sum(1 for c in lay[:p] if c != "I")
                    nxt[(lay[:p] + letter + lay[p:], qids[:k] + (item.question_id,) + qids[k:])] = None
        done = list(nxt)
    return done


def enumerate_candidates(material: TaskMaterial, intents: Mapping[str, str], *,
                         max_questions: int = MAX_QUESTIONS, include_original: bool = True,
                         min_turns: int = 1, max_augments: int = 0) -> list[Candidate]:
    """The task's candidate family (Appendix F), keeping candidates with at least ``min_turns`` turns.

    Order: backbone (``BACKBONES`` order), then number of questions, then question subset (pool
    order), then layout; with ``max_augments``, then each set of augmentation items
    (:func:`augment_choices`) at each allowed position. A task without an ok split has only the
    ``original`` backbone.
    """
    return enumerate_distinct(material, intents, max_questions=max_questions, include_original=include_original,
                              min_turns=min_turns, max_augments=max_augments, distinct=False)[0]


def enumerate_distinct(material: TaskMaterial, intents: Mapping[str, str], *,
                       max_questions: int = MAX_QUESTIONS, include_original: bool = True,
                       min_turns: int = 1, max_augments: int = 0, distinct: bool = True) -> tuple[list[Candidate], int]:
    """The family as the selection needs it, and the full family's size.

    A question subset whose intents repeat an earlier subset's of the same size, or a set of
    augmentation items that repeats an earlier set's kinds, intents and allowed slots, yields only
    candidates an earlier one already stands for (same intents, same layout of questions); they are
    counted, not built. The first candidate of every (intents, layout shape) comes out in the order
    :func:`enumerate_candidates` gives it (``distinct=False``: every candidate, as that function)."""
    if not 0 <= max_questions <= MAX_QUESTIONS:
        raise InputError("max_questions out of range", field="max_questions", expected=f"0..{MAX_QUESTIONS}",
                         actual=max_questions)
    from .turns.kinds import allowed_slots
    qs = material.questions
    choices = augment_choices(material, max_augments) if max_augments > 0 else [()]
    by_id = {q.question_id: q for q in (*qs, *material.augments)}
    out: list[Candidate] = []
    total = 0
    for name, turns in material.backbones(include_original=include_original).items():
        issue_intents = [intents[text] for text, _ in turns]
        m = len(turns)
        groups = tuple(g for _, g in turns)
        signed = [(aug, tuple((a.kind, a.intent, allowed_slots(a.kind, groups, a.requirement_part)) for a in aug))
                  for aug in choices]
        for k in range(0, min(max_questions, len(qs)) + 1):
            subset_count: dict[tuple, int] = {}
            for subset in itertools.combinations(qs, k):
                qsig = tuple(q.intent for q in subset)
                if distinct and qsig in subset_count:       # an earlier subset stands for this one
                    total += subset_count[qsig]
                    continue
                before = total
                base = tuple(q.question_id for q in subset)
                for lay in layouts(m, k):
                    seen: set[tuple] = set()
                    for aug, sig in signed:
                        if m + k + len(aug) < min_turns:
                            continue
                        placed = insert_augments(lay, base, aug, groups) if aug else [(lay, base)]
                        total += len(placed)
                        if distinct and sig in seen:        # an earlier set of the same kinds stands for it
                            continue
                        seen.add(sig)
                        for full, qids in placed:
                            ii, qi, seq = iter(issue_intents), iter(qids), []
                            for c in full:
                                seq.append(next(ii) if c == "I" else by_id[next(qi)].intent)
                            out.append(Candidate(name, full, qids, tuple(seq)))
                subset_count[qsig] = total - before
    return out, total


def build_session(material: TaskMaterial, candidate: Candidate, intents: Mapping[str, str], *,
                  condition: str) -> Session:
    """The session a candidate describes, with stable links to split parts and question ids."""
    turns_spec = material.backbones().get(candidate.backbone, ())  # "none": questions only
    by_id = {q.question_id: q for q in (*material.questions, *material.augments)}
    ii, qi = iter(turns_spec), iter(candidate.question_ids)
    turns = []
    for idx, c in enumerate(candidate.layout):
        if c == "I":
            text, parts = next(ii)
            turns.append(Turn(idx, "issue", text, intents[text], split_parts=parts))
        else:
            q = by_id[next(qi)]
            turns.append(Turn(idx, q.kind, q.question, q.intent, question_id=q.question_id))
    pool = material.question_pool if candidate.n_questions else None
    return Session(material.instance_id, condition, tuple(turns), question_pool=pool)


__all__ = ["BACKBONES", "PART_JOINER", "MAX_QUESTIONS", "IntentSource", "TaskMaterial", "PoolSummary",
           "build_materials", "resolve_intents", "Candidate", "layouts", "augment_choices", "insert_augments",
           "enumerate_candidates", "enumerate_distinct", "build_session"]
