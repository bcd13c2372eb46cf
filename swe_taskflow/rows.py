"""Build one release row (config ``default``) from a task, one condition's session, its split and questions.

The row is the unit of a release: what an agent needs to set the task up, the ordered user turns,
the questions with their hidden reference answers and proof reports, and two hashes: the source
task's (same value in every condition => provably the same task) and the row's own.
"""

from __future__ import annotations

import functools
from typing import Any, Iterable, Mapping

from .turns.record import question_values
from .errors import InputError
from .features import conform, session_features, split_proof_report
from .flow import length_bin_label
from .hashing import ROW_HASH_FIELD, canonical_sha256, row_sha256, task_sha256
from .schema import QAItem, Session, SplitResult, Task
from .typed_records import GENERATOR, REVIEWER, split_record

_features = functools.cache(session_features)   # built once: every row is conformed to it


def split_status(split: SplitResult | None) -> str:
    """``ok``, or why the task stayed single-turn (``ineligible: <reason>``); ``unsplit`` without a split."""
    if split is None:
        return "unsplit"
    if split.status == "ok":
        return "ok"
    return f"{split.status}: {split.reason}" if split.reason else split.status


def question_record(item: QAItem, turn_index: int) -> dict[str, Any]:
    """A question as stored in a row; ``proof_report_sha256`` hashes the stored report (typed keys + extra)."""
    stored = split_proof_report(item.proof_report)
    return {
        "question_id": item.question_id, "turn_index": turn_index, "intent": item.intent,
        "question": item.question, "reference_answer": item.reference_answer,
        "evidence": [{"path": e.get("path"), "symbol": e.get("symbol"), "note": e.get("note")}
                     for e in item.evidence],
        "proof_script": item.proof_script, "proof_report": stored,
        "proof_report_sha256": None if stored is None else canonical_sha256(stored),
        "generator": split_record(dict(item.generator), GENERATOR),
        "reviewer": split_record(dict(item.reviewer), REVIEWER),
        **question_values(item),
    }


def build_row(task: Task, session: Session, split: SplitResult | None = None,
              questions: Mapping[str, QAItem] | Iterable[QAItem] = (), *,
              where: str = "release row", row: int | None = None) -> dict[str, Any]:
    """The release row of ``task`` under ``session.condition``; hashes filled in.

    Every answer turn's (any kind but ``issue``) ``question_id`` must be among ``questions``; the
    row's questions follow turn order.
    """
    if session.instance_id != task.instance_id:
        raise InputError("session and task are for different instances", path=where, row=row,
                         field="instance_id", expected=task.instance_id, actual=session.instance_id)
    if split is not None and split.instance_id != task.instance_id:
        raise InputError("split result is for a different instance", path=where, row=row,
                         field="instance_id", expected=task.instance_id, actual=split.instance_id)
    by_id = dict(questions) if isinstance(questions, Mapping) else {q.question_id: q for q in questions}
    qrecords = []
    for t in session.turns:
        if t.kind != "issue":
            if not t.question_id or t.question_id not in by_id:
                raise InputError("an answer turn names a question that was not given", path=where, row=row,
                                 field=f"turns[{t.turn_index}].question_id", actual=t.question_id)
            if by_id[t.question_id].kind != t.kind:
                raise InputError("an answer turn's kind differs from its item's", path=where, row=row,
                                 field=f"turns[{t.turn_index}].kind", expected=by_id[t.question_id].kind,
                                 actual=t.kind)
            qrecords.append(question_record(by_id[t.question_id], t.turn_index))
    out = {
        "instance_id": task.instance_id, "source": task.source, "source_revision": task.source_revision,
        "repo": task.repo, "base_commit": task.base_commit, "image_name": task.image_name,
        "repo_language": task.repo_language, "condition": session.condition,
        "question_pool": session.question_pool,
        "turns": [t.to_dict() for t in session.turns],
        "n_turns": len(session.turns), "length_bin": length_bin_label(len(session.turns)),
        "questions": qrecords, "original_prompt": task.original_prompt,
        "split_status": split_status(split), "source_task_sha256": task_sha256(task),
        ROW_HASH_FIELD: None,
    }
    out = conform(out, _features(), where=where, row=row)
    out[ROW_HASH_FIELD] = row_sha256(out)
    return out


__all__ = ["build_row", "question_record", "split_status"]
