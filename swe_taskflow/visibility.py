"""What an evaluated agent may see of a release row, and what stays with the grader.

An **allowlist**: the agent sees the task's environment identifiers and the ordered user turns
(index, kind, text); every other field, present or future (reference answers, evidence, proof
scripts and reports, augmentation references, bookkeeping), is hidden by default. The dataset
card, the Harbor export and the tests all split rows through :func:`agent_view` and
:func:`grader_view`, so the two views are a partition of the row: together they give it back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from .errors import InputError

#: Row fields the agent may see: what it needs to set the environment up.
VISIBLE_ROW_FIELDS = ("instance_id", "repo", "base_commit", "image_name", "repo_language")
#: Fields of each turn the agent may see, in delivery order.
VISIBLE_TURN_FIELDS = ("turn_index", "kind", "text")
#: Why a hidden field is hidden (the card prints these; a field missing here is hidden all the same).
HIDDEN_REASONS = {
    "questions[].question_id": "links the reference to its answer turn",
    "questions[].turn_index": "the answer turn the reference belongs to",
    "questions[].intent": "the question's declared intent",
    "questions[].question": "the question text (the agent sees it as its turn's text, nothing more)",
    "questions[].reference_answer": "the reference answer the judge compares the agent's answer with",
    "questions[].evidence": "paths and symbols that support the reference answer",
    "questions[].proof_script": "the proof script run in a sandbox when the question was accepted",
    "questions[].proof_report": "the proof's execution report (status, exit codes, output and tree hashes)",
    "questions[].proof_report_sha256": "hash of the proof report",
    "questions[].generator": "who wrote the question (a model with its prompt hash, or hand-written)",
    "questions[].reviewer": "the reviewing pass and its verdict",
    "questions[].kind": "the answer turn's kind (qa, execute, debug, planning, review)",
    "questions[].command": "augmentation reference: the command an execute turn ran (debug, review: the test command)",
    "questions[].facts": "augmentation reference: the facts recorded at creation (counts, failing tests, the failure)",
    "questions[].locations": "augmentation reference: the code locations a debug, planning or review answer is scored on",
    "questions[].mutation": "augmentation reference: a review turn's seeded defect",
    "questions[].requirement_part": "augmentation reference: the split part a planning turn plans",
    "questions[].checks": "augmentation reference: the creation-time checks the turn passed",
    "original_prompt": "the single-message issue: in split conditions it reveals the later turns",
    "turns[].intent": "the intent label the classifier gave the turn (what TFAS measures)",
    "turns[].split_parts": "which parts of the split issue a turn carries",
    "turns[].question_id": "links an answer turn to its hidden reference in `questions`",
    "source": "bookkeeping: the source benchmark",
    "source_revision": "bookkeeping: the source benchmark's revision",
    "condition": "bookkeeping: the split (experimental condition) of the row",
    "question_pool": "bookkeeping: the question pool the condition draws from",
    "n_turns": "derived from `turns`",
    "length_bin": "derived from `turns` (the TFAS length bins)",
    "split_status": "bookkeeping: whether the issue was split, or why not",
    "source_task_sha256": "bookkeeping: hash of the source task (equal across splits = same task)",
    "row_sha256": "bookkeeping: hash of the row's content",
}


@dataclass(frozen=True)
class VisibleTurn:
    """One user turn as the agent receives it."""

    turn_index: int
    kind: str
    text: str


@dataclass(frozen=True)
class AgentView:
    """Everything an evaluated agent may be shown of one row."""

    instance_id: str
    repo: str
    base_commit: str
    image_name: str
    repo_language: str
    turns: tuple[VisibleTurn, ...]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: getattr(self, k) for k in VISIBLE_ROW_FIELDS}
        out["turns"] = [{k: getattr(t, k) for k in VISIBLE_TURN_FIELDS} for t in self.turns]
        return out


def _turns(row: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    turns = row.get("turns")
    if not isinstance(turns, (list, tuple)):
        raise InputError("a release row needs a list of turns", field="turns",
                         actual=type(turns).__name__, path=str(row.get("instance_id", "<row>")))
    return list(turns)


def agent_view(row: Mapping[str, Any]) -> AgentView:
    """The allowlisted part of a release row (a dict from ``build_row``, parquet or ``load_dataset``)."""
    missing = [k for k in VISIBLE_ROW_FIELDS if k not in row]
    if missing:
        raise InputError("release row lacks a visible field", field=missing[0],
                         path=str(row.get("instance_id", "<row>")))
    turns = []
    for n, t in enumerate(_turns(row)):
        absent = [k for k in VISIBLE_TURN_FIELDS if k not in t]
        if absent:
            raise InputError("turn lacks a visible field", field=f"turns[{n}].{absent[0]}",
                             path=str(row["instance_id"]))
        turns.append(VisibleTurn(int(t["turn_index"]), str(t["kind"]), str(t["text"])))
    return AgentView(**{k: row[k] for k in VISIBLE_ROW_FIELDS}, turns=tuple(turns))


def grader_view(row: Mapping[str, Any]) -> dict[str, Any]:
    """Every field of ``row`` that :func:`agent_view` leaves out (hidden from the agent).

    ``turns`` keeps, per turn, its ``turn_index`` (to join with the agent's view) and every hidden
    turn field; the other keys are the row's own. ``merge_views(agent_view(r), grader_view(r)) == r``.
    """
    out = {k: v for k, v in row.items() if k not in VISIBLE_ROW_FIELDS and k != "turns"}
    out["turns"] = [{"turn_index": t["turn_index"],
                     **{k: v for k, v in t.items() if k not in VISIBLE_TURN_FIELDS}} for t in _turns(row)]
    return out


def merge_views(agent: AgentView, grader: Mapping[str, Any]) -> dict[str, Any]:
    """The row back from its two views (the partition check the tests make)."""
    seen = agent.to_dict()
    hidden_turns = {t["turn_index"]: t for t in grader.get("turns", [])}
    turns = [{**t, **{k: v for k, v in hidden_turns.get(t["turn_index"], {}).items() if k != "turn_index"}}
             for t in seen.pop("turns")]
    return {**seen, **{k: v for k, v in grader.items() if k != "turns"}, "turns": turns}


def _paths(feature: Any, prefix: str) -> Iterator[str]:
    """Dotted leaf-or-column paths of a ``datasets`` feature (one level into lists of structs)."""
    inner = getattr(feature, "feature", None)
    if isinstance(feature, Mapping):
        for k, f in feature.items():
            yield f"{prefix}.{k}" if prefix else k
    elif isinstance(inner, Mapping):
        for k in inner:
            yield f"{prefix}[].{k}"


def hidden_fields(features: Mapping[str, Any]) -> list[str]:
    """Every field of a session row's features that the agent does not see, in schema order.

    Top-level columns other than the allowlisted ones (a list of structs, such as ``questions``,
    field by field); and the non-visible fields of ``turns[]``. Used by the dataset card, so a new column shows up there as hidden without an edit.
    """
    out = []
    for name, feat in features.items():
        if name in VISIBLE_ROW_FIELDS:
            continue
        if name == "turns":
            out += [p for p in _paths(feat, "turns") if p.split(".")[-1] not in VISIBLE_TURN_FIELDS]
        else:
            out += list(_paths(feat, name)) or [name]   # a list of structs: one line per field
    return out


def visible_fields(features: Mapping[str, Any]) -> list[str]:
    """The allowlisted fields present in ``features`` (``turns[].text`` style for turn fields)."""
    out = [k for k in features if k in VISIBLE_ROW_FIELDS]
    if "turns" in features:
        out += [p for p in _paths(features["turns"], "turns") if p.split(".")[-1] in VISIBLE_TURN_FIELDS]
    return out


__all__ = ["AgentView", "VisibleTurn", "agent_view", "grader_view", "merge_views", "hidden_fields",
           "visible_fields", "VISIBLE_ROW_FIELDS", "VISIBLE_TURN_FIELDS", "HIDDEN_REASONS"]
