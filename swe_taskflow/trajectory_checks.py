"""Checks that bind a trajectory row to the release row it ran on, beyond the split and row hashes."""

from __future__ import annotations

from typing import Any, Mapping

from .errors import VerifyError


def check_trajectory_turns(traj: Mapping[str, Any], row: Mapping[str, Any] | None, where: str,
                           n: int) -> list[VerifyError]:
    """A trajectory's checkpoints must sit on issue turns of its row, its answers on the row's questions."""
    if row is None:
        return []
    errors = []
    issue_turns = {t["turn_index"] for t in row["turns"] if t["kind"] == "issue"}
    for c in traj.get("checkpoints") or []:
        if c["turn_index"] not in issue_turns:
            errors.append(VerifyError("trajectory checkpoint is not on an issue turn of its row", kind="mismatch",
                                      path=where, row=n, field="checkpoints.turn_index",
                                      expected=sorted(issue_turns), actual=c["turn_index"]))
    qids = {q["question_id"] for q in row.get("questions") or []}
    for a in traj.get("qa_answers") or []:
        if a["question_id"] not in qids:
            errors.append(VerifyError("trajectory answers a question its row does not hold", kind="mismatch",
                                      path=where, row=n, field="qa_answers.question_id", expected=sorted(qids),
                                      actual=a["question_id"]))
    return errors


__all__ = ["check_trajectory_turns"]
