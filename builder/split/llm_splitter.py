"""The LLM splitter of Appendix E: eligibility, units, artifacts, the sequence, then a model-based
completeness check, then the deterministic checks. Any failure keeps the task single-turn with
its reasons recorded; a malformed reply is a recorded failure, never a crash or a silent pass."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from swe_taskflow.schema import SplitResult, Task
from swe_taskflow.split_checks import check_split

from ..llm.prompts import load_prompt, parse_json_object, render

STAGE_WRITE = "split.write"
STAGE_CHECK = "split.check"


@dataclass(frozen=True)
class LLMSplitConfig:
    """Settings of the LLM splitter."""

    write_prompt: str = "split_write"
    """Template under builder/prompts/ that asks for eligibility, units, artifacts and the turns."""
    check_prompt: str = "split_check"
    """Template for the model-based completeness check."""
    completeness_check: bool = True
    """Run the second model pass (the contract requires it; off only for ablations)."""


def _v(kind: str, detail: str) -> dict[str, str]:
    return {"kind": kind, "detail": detail}


class LLMSplitter:
    """Split with a model through any :mod:`builder.llm` backend (replayable via its store)."""

    name = "llm"

    def __init__(self, llm, config: LLMSplitConfig | None = None) -> None:
        self.llm = llm
        self.config = config or LLMSplitConfig()
        self._write, write_sha = load_prompt(self.config.write_prompt)
        self._check, check_sha = load_prompt(self.config.check_prompt)
        self.info = {"name": self.name, "model": llm.info.get("model"), "llm": llm.info,
                     "prompt_sha256": write_sha, "check_prompt_sha256": check_sha,
                     "completeness_check": self.config.completeness_check}

    def _result(self, task: Task, status: str, *, parts=(), violations=(), reason="",
                units: dict[str, Any] | None = None) -> SplitResult:
        info = dict(self.info)
        if units:
            info["units"] = units
        return SplitResult(task.instance_id, status, parts=tuple(parts), violations=tuple(violations),
                           splitter=info, reason=reason, original_prompt=task.original_prompt)

    def write_messages(self, issue: str) -> list[dict[str, str]]:
        """The exact request of the ``split.write`` stage (tools that pre-record replies use it)."""
        return [{"role": "user", "content": render(self._write, issue=issue)}]

    def check_messages(self, issue: str, turns: list[str]) -> list[dict[str, str]]:
        """The exact request of the ``split.check`` (completeness) stage."""
        shown = "\n\n".join(f"<turn>\n{t}\n</turn>" for t in turns)
        return [{"role": "user", "content": render(self._check, issue=issue, turns=shown)}]

    def split(self, task: Task) -> SplitResult:
        if task.status != "ok":
            return self._result(task, "failed", reason=f"malformed task: {task.reason}")
        issue = task.original_prompt
        reply = self.llm.complete(self.write_messages(issue), stage=STAGE_WRITE)
        obj, why = parse_json_object(reply.text)
        if obj is None:
            return self._result(task, "failed", violations=[_v("malformed-response", f"{STAGE_WRITE}: {why}")],
                                reason=f"malformed model reply: {why}")
        eligible = obj.get("eligible")
        if not isinstance(eligible, bool):
            return self._result(task, "failed", violations=[_v("malformed-response", f"{STAGE_WRITE}: field 'eligible' "
                                                               f"must be true or false, got {eligible!r}")],
                                reason="malformed model reply: no eligibility decision")
        if not eligible:
            reason = obj.get("reason") if isinstance(obj.get("reason"), str) and obj.get("reason").strip() else \
                "the model judged the issue atomic (no reason given)"
            return self._result(task, "ineligible", reason=reason)
        bad = [k for k in ("specificity_units", "subtask_units", "artifacts", "turns")
               if not isinstance(obj.get(k), list) or not all(isinstance(x, str) for x in obj.get(k))]
        if bad:
            return self._result(task, "failed", violations=[_v("malformed-response", f"{STAGE_WRITE}: field '{b}' "
                                                               "missing or not a list of strings") for b in bad],
                                reason=f"malformed model reply: {', '.join(bad)}")
        units = {k: obj[k] for k in ("specificity_units", "subtask_units", "artifacts")}
        turns = obj["turns"]
        violations = [v.to_dict() for v in check_split(issue, turns)]
        # the model's own artifact list must be real and kept: verbatim in the issue and in the turns
        joined = "\n".join(turns)
        for a in units["artifacts"]:
            if a and a not in issue:
                violations.append(_v("added-artifact", f"artifact listed by the model is not in the issue: {a[:120]!r}"))
            elif a and a not in joined:
                violations.append(_v("missing-artifact", f"artifact listed by the model is not verbatim in the turns: "
                                                         f"{a[:120]!r}"))
        if self.config.completeness_check and len(turns) == 3:
            violations += self._completeness(issue, turns)
        if violations:
            kinds = sorted({v["kind"] for v in violations})
            return self._result(task, "failed", parts=turns if len(turns) == 3 else (), violations=violations,
                                reason="split rejected: " + ", ".join(kinds), units=units)
        return self._result(task, "ok", parts=turns, units=units)

    def _completeness(self, issue: str, turns: list[str]) -> list[dict[str, str]]:
        reply = self.llm.complete(self.check_messages(issue, turns), stage=STAGE_CHECK)
        obj, why = parse_json_object(reply.text)
        if obj is None:
            return [_v("malformed-response", f"{STAGE_CHECK}: {why}")]
        if not isinstance(obj.get("complete"), bool):
            return [_v("malformed-response", f"{STAGE_CHECK}: field 'complete' must be true or false")]
        if obj["complete"]:
            return []
        items = [str(x) for x in (obj.get("missing") or [])] + [f"added: {x}" for x in (obj.get("added") or [])]
        detail = "; ".join(items) or str(obj.get("notes") or "no details")
        return [_v("incomplete", f"{STAGE_CHECK}: {detail[:300]}")]
