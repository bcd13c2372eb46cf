"""Scorers of augmentation turns for ``evaluate import`` (registered in builder.evaluation.scorers).

The deterministic part is :func:`swe_taskflow.augment.score.score_answer` (facts for execute, the
location for debug, recall of files and symbols for planning, the seeded defect's place for review).
Debug, planning and review also explain something; with a judge backend (``evaluate import --judge``)
the project's QA judge compares the answer with the reference answer too, and the turn is correct
only when both agree. Without a judge the deterministic part decides, and the verdict says so.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from swe_taskflow.augment.score import score_answer

from builder.evaluation.scoring import Verdict, qa_judge

#: Kinds whose answers also explain something (the judge scores that part when a judge is given).
JUDGED = ("debug", "planning", "review")


def augmentation_scorer(kind: str) -> Callable[[Mapping[str, Any]], Callable]:
    """The registry factory for ``kind``: context (e.g. ``{"llm": backend}``) -> scorer(AnswerCase) -> Verdict."""
    def factory(context: Mapping[str, Any]):
        judge = qa_judge(context) if kind in JUDGED and context.get("llm") is not None else None

        def score(case) -> Verdict:
            name = f"augment-{kind}:deterministic"
            if not (case.answer or "").strip():
                return Verdict("unanswered", judge=name, reason="no answer file was written")
            q = case.question
            det = score_answer(q, case.answer, turn_text=str(q.get("question") or ""))
            detail = {"deterministic": det.to_dict()}
            if judge is None:
                why = "deterministic score" + (" (explanation not judged: no --judge)" if kind in JUDGED else "")
                return Verdict("correct" if det.correct else "incorrect", judge=name, reason=why, detail=detail)
            judged = judge(case)
            detail["judge"] = judged.to_dict()
            if judged.verdict == "judge-error":
                return Verdict("judge-error", judge=f"{name}+{judged.judge}", reason=judged.reason, detail=detail)
            ok = det.correct and judged.verdict == "correct"
            why = ("location/facts and explanation both right" if ok else
                   "deterministic part wrong" if not det.correct else "explanation judged wrong")
            return Verdict("correct" if ok else "incorrect", judge=f"{name}+{judged.judge}", reason=why, detail=detail)
        return score
    return factory


__all__ = ["augmentation_scorer", "JUDGED"]
