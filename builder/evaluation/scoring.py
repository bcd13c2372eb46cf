"""Scoring answer turns: a registry of scorers keyed by turn kind.

Every non-issue turn is an answer turn: the agent writes an answer to a file and the turn's hidden
reference lives in the row's ``questions`` item. ``qa`` answers are judged by an LLM against the
reference answer and its evidence (Appendix E, "QA validation") through the project's LLM backends,
so a judged run re-judges offline from the response store, byte for byte. Other kinds register their
own (deterministic) scorers with :func:`builder.evaluation.scorers.register_scorer`; a kind without a scorer is reported as
``unscored``, never dropped.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping


#: Verdicts: ``correct`` / ``incorrect`` are scored; the others say why a turn was not.
VERDICTS = ("correct", "incorrect", "unanswered", "unjudged", "judge-error", "unscored")
JUDGE_STAGE = "evaluate.qa_judge"
#: The judge's sampling parameters (part of every judged request's key in the response store).
JUDGE_PARAMS = {"temperature": 0.0, "max_tokens": 512}


@dataclass(frozen=True)
class AnswerCase:
    """One answer turn of one trial: what was asked (visible), its hidden record, and the answer given."""

    instance_id: str
    turn_index: int
    kind: str
    question: Mapping[str, Any]     # the row's questions[] item (hidden reference fields included)
    answer: str | None
    #: what the step's verifier found in the container (stress turns: its stress.json), None when nothing
    verifier: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Verdict:
    verdict: str
    judge: str = ""                 # who decided: "qa-judge:<backend>:<model>", a scorer's name, or ""
    reason: str = ""
    detail: Mapping[str, Any] = field(default_factory=dict)

    @property
    def correct(self) -> bool | None:
        return {"correct": True, "incorrect": False, "unanswered": False}.get(self.verdict)

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "judge": self.judge, "reason": self.reason, "detail": dict(self.detail)}


Scorer = Callable[[AnswerCase], Verdict]
ScorerFactory = Callable[[Mapping[str, Any]], Scorer]   # context (e.g. {"llm": backend}) -> scorer


def judge_messages(case: AnswerCase) -> list[dict[str, str]]:
    from builder.llm.prompts import load_prompt, render
    tpl, _ = load_prompt("qa_judge")
    q = case.question
    evidence = "\n".join(f"- {e.get('path') or ''} {e.get('symbol') or ''}: {e.get('note') or ''}".rstrip()
                         for e in q.get("evidence") or [])
    return [{"role": "user", "content": render(tpl, question=str(q.get("question") or ""),
                                              reference=str(q.get("reference_answer") or ""),
                                              evidence=evidence or "(none)", answer=case.answer or "")}]


def judge_prompt_sha256() -> str:
    from builder.llm.prompts import load_prompt
    return load_prompt("qa_judge")[1]


def _parse(text: str) -> tuple[str, str]:
    m = re.search(r"\{.*\}", text, re.DOTALL)
    if not m:
        raise ValueError("the judge's reply holds no JSON object")
    doc = json.loads(m.group(0))
    verdict = str(doc.get("verdict", "")).strip().lower()
    if verdict not in ("correct", "incorrect"):
        raise ValueError(f"verdict must be correct or incorrect, got {verdict!r}")
    return verdict, str(doc.get("reason", ""))


def qa_judge(context: Mapping[str, Any]) -> Scorer:
    """The LLM judge for ``qa`` turns; without a judge backend every answered question is ``unjudged``."""
    llm = context.get("llm")
    name = f"qa-judge:{llm.info['backend']}:{llm.info['model']}" if llm is not None else ""

    def score(case: AnswerCase) -> Verdict:
        if not (case.answer or "").strip():
            return Verdict("unanswered", judge=name, reason="no answer file was written")
        if llm is None:
            return Verdict("unjudged", reason="no judge given (evaluate import --judge ...)")
        reply = llm.complete(judge_messages(case), stage=JUDGE_STAGE)
        detail = {"response_key": reply.key, "replayed": reply.replayed, "provenance": reply.provenance,
                  "prompt_sha256": judge_prompt_sha256()}
        try:
            verdict, reason = _parse(reply.text)
        except (ValueError, json.JSONDecodeError) as exc:
            return Verdict("judge-error", judge=name, reason=str(exc)[:200], detail=detail)
        return Verdict(verdict, judge=name, reason=reason, detail=detail)
    return score


__all__ = ["AnswerCase", "Verdict", "VERDICTS", "Scorer", "ScorerFactory", "judge_messages",
           "judge_prompt_sha256", "qa_judge", "JUDGE_STAGE", "JUDGE_PARAMS"]
