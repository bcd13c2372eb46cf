"""Assemble the sessions of every experimental condition of the released dataset (Appendix E, H).

Pure: takes task materials (split results + questions, see :mod:`swe_taskflow.candidates`) and the
intents of issue texts, returns one :class:`ConditionRow` per task and condition. Nothing is
dropped: a task whose split is not ok keeps its single original prompt in the split conditions
(``split_status`` says why), a task without questions is marked ``no-questions``.

Conditions: ``single_prompt``; ``split_prompt`` (3 turns); ``split_prompt_concat`` (the same 3
parts in one message); ``qa_first`` / ``qa_last`` (all the task's questions before / after the
issue turns); ``qa_random`` (a seeded random interleaving); ``qa_only`` (questions only);
``tfas_optimized`` comes from :mod:`swe_taskflow.select`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .candidates import Candidate, IntentSource, TaskMaterial, build_session, layouts, resolve_intents
from .errors import ConfigError
from .schema import CONDITIONS, Session

#: Conditions this module assembles directly (``tfas_optimized`` needs a selection).
FIXED_CONDITIONS = ("single_prompt", "split_prompt", "split_prompt_concat", "qa_first", "qa_last",
                    "qa_random", "qa_only")
#: Conditions built from one question pool (one split per pool when a release has several).
QA_CONDITIONS = ("qa_first", "qa_last", "qa_random", "qa_only", "tfas_optimized")


@dataclass(frozen=True)
class SplitSpec:
    """One split of a release: its name, the condition that builds it and the question pool it uses."""

    split: str
    condition: str
    pool: str | None


def split_plan(conditions: Sequence[str], *, qa_pools: Sequence[str] = (), pool: str | None = None) -> list[SplitSpec]:
    """The release's splits in order. With ``qa_pools`` each QA condition but ``tfas_optimized`` gets one
    split per pool, named ``<condition>_<pool>`` (the paper's release: 3 prompt-only + 4 x 2 pools + 1 = 12
    splits); without, it uses ``pool`` under its plain name. ``tfas_optimized`` always uses ``pool``."""
    out: list[SplitSpec] = []
    for cond in conditions:
        if cond not in QA_CONDITIONS:
            out.append(SplitSpec(cond, cond, None))
        elif cond == "tfas_optimized" or not qa_pools:
            out.append(SplitSpec(cond, cond, pool))
        else:
            out += [SplitSpec(f"{cond}_{p}", cond, p) for p in qa_pools]
    names = [s.split for s in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ConfigError("two splits would have the same name", field="conditions", actual=dup)
    return out


@dataclass(frozen=True)
class ConditionRow:
    """One task under one condition: its session (None only when it has no turn) and why.

    ``status``: ``ok``; ``split-not-ok`` (a split condition fell back to the original prompt);
    ``no-questions`` (a QA condition for a task without usable questions: issue turns only, or no
    session for ``qa_only``).
    """

    instance_id: str
    condition: str
    status: str
    reason: str
    split_status: str
    session: Session | None
    candidate: Candidate | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"instance_id": self.instance_id, "condition": self.condition, "status": self.status,
                "reason": self.reason, "split_status": self.split_status,
                "candidate": None if self.candidate is None else self.candidate.to_dict(),
                "session": None if self.session is None else self.session.to_dict()}


def task_rng(seed: int, instance_id: str) -> np.random.Generator:
    """A generator for one task that depends only on the seed and the task id (not on task order)."""
    h = int.from_bytes(hashlib.sha256(instance_id.encode("utf-8")).digest()[:8], "big")
    return np.random.default_rng([int(seed), h])


def _candidate(material: TaskMaterial, intents: Mapping[str, str], backbone: str, layout: str,
               qids: Sequence[str]) -> Candidate:
    turns = material.backbones().get(backbone, ())
    by_id = {q.question_id: q for q in material.questions}
    ii, qi, seq = iter(turns), iter(qids), []
    for c in layout:
        seq.append(intents[next(ii)[0]] if c == "I" else by_id[next(qi)].intent)
    return Candidate(backbone, layout, tuple(qids), tuple(seq))


def condition_candidate(material: TaskMaterial, intents: Mapping[str, str], condition: str, *,
                        seed: int = 0) -> tuple[Candidate | None, str, str]:
    """The candidate a fixed condition gives a task, with (status, reason)."""
    if condition not in FIXED_CONDITIONS:
        raise ConfigError("unknown condition", field="condition", actual=condition,
                          expected=FIXED_CONDITIONS)
    split_backbone = {"split_prompt": "split_3", "split_prompt_concat": "concat_012"}.get(condition, "split_3")
    status, reason = "ok", ""
    if condition == "single_prompt":
        return _candidate(material, intents, "original", "I", ()), status, reason
    if not material.split_ok and condition != "qa_only":
        split_backbone = "original"
        status = "split-not-ok"
        reason = f"split status {material.split_status}: original prompt kept" + (
            f" ({material.split_reason})" if material.split_reason else "")
    m = len(material.backbones().get(split_backbone, ()))
    qids = [q.question_id for q in material.questions]
    k = len(qids)
    if condition in ("split_prompt", "split_prompt_concat"):
        return _candidate(material, intents, split_backbone, "I" * m, ()), status, reason
    if k == 0:
        why = "task has no usable question"
        if condition == "qa_only":
            return None, "no-questions", why
        return (_candidate(material, intents, split_backbone, "I" * m, ()), "no-questions",
                why + ": issue turns only" + (f"; {reason}" if reason else ""))
    if condition == "qa_only":
        return _candidate(material, intents, "none", "Q" * k, qids), "ok", ""
    if condition == "qa_first":
        layout = "Q" * k + "I" * m
    elif condition == "qa_last":
        layout = "I" * m + "Q" * k
    else:  # qa_random: one of all interleavings, uniformly, from the task's own generator
        options = layouts(m, k)
        layout = options[int(task_rng(seed, material.instance_id).integers(len(options)))]
    return _candidate(material, intents, split_backbone, layout, qids), status, reason


def assemble(materials: Sequence[TaskMaterial], intents: IntentSource, *,
             conditions: Iterable[str] = FIXED_CONDITIONS, seed: int = 0) -> dict[str, list[ConditionRow]]:
    """Rows of every requested fixed condition, one per task in input order.

    ``intents``: a mapping issue text -> intent, or a callable classifying a list of texts (called
    once with the distinct texts)."""
    intents = resolve_intents([t for m in materials for t in m.issue_texts()], intents)
    out: dict[str, list[ConditionRow]] = {}
    for cond in conditions:
        if cond not in CONDITIONS:
            raise ConfigError("unknown condition", field="condition", actual=cond, expected=CONDITIONS)
        if cond == "tfas_optimized":
            raise ConfigError("tfas_optimized needs a selection", field="condition",
                              hint="use swe_taskflow.select.select(...).rows()")
        rows = []
        for mat in materials:
            cand, status, reason = condition_candidate(mat, intents, cond, seed=seed)
            sess = None if cand is None else build_session(mat, cand, intents, condition=cond)
            rows.append(ConditionRow(mat.instance_id, cond, status, reason, mat.split_status, sess, cand))
        out[cond] = rows
    return out


__all__ = ["FIXED_CONDITIONS", "QA_CONDITIONS", "SplitSpec", "split_plan", "ConditionRow", "task_rng",
           "condition_candidate", "assemble"]
