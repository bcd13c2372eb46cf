"""Free-form records (a generator's provenance, a proof report, an agent message) as typed columns.

A record's known keys become typed struct fields when their value has the declared type; every
other key, and a known key whose value has another type, goes into ``extra`` (canonical JSON
text), so nothing is lost and nothing is cast. :func:`join_record` gives the record back (a typed
key whose value was ``None`` comes back absent). The specs live here, the ``datasets`` features
are built from them in :mod:`swe_taskflow.features`: one place to add a field.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from .hashing import compact_json_text

#: dtype -> the Python types a value must have to be stored in a typed field of that dtype.
_PY = {"string": (str,), "int64": (int,), "float64": (int, float), "bool": (bool,)}

#: Keys shared by every model record (who produced or checked an item, with which prompt).
MODEL_RECORD = {"name": "string", "provenance": "string", "backend": "string", "model": "string",
                "base_url": "string", "prompt_sha256": "string", "response_key": "string"}
#: ``questions[].generator``: the question's author (a model, or ``hand-written``).
GENERATOR = {**MODEL_RECORD, "trajectory": "string", "trajectory_format": "string", "repo_checked": "bool",
             "leakage_reference": "string"}
#: ``questions[].reviewer``: the reviewing pass.
REVIEWER = {**MODEL_RECORD, "verdict": "string", "review_reason": "string"}
#: ``questions[].proof_report``: a proof run's report.
PROOF_REPORT = {"status": "string", "sandbox": "string", "image": "string", "exit_codes": "list<int64>",
                "stdout_sha256": "string", "tree_sha_before": "string", "tree_sha_after": "string",
                "duration_s": "float64"}
#: One agent-trajectory message (mini-swe-agent message or Harbor ATIF step), normalized.
MESSAGE = {"role": "string", "content": "string", "reasoning": "string", "model": "string",
           "timestamp": "string", "prompt_tokens": "int64", "completion_tokens": "int64", "cost_usd": "float64"}

#: Fields that stay JSON text, and exactly why (the dataset card prints this table).
JSON_TEXT_FIELDS = {
    "questions[].generator.extra": "keys outside the typed ones (e.g. the backend's sampling `params`, whose "
                                   "names and types differ per backend and model server)",
    "questions[].reviewer.extra": "keys outside the typed ones: the backend's sampling `params` and the "
                                  "reviewer's free-form scores (`clarity`, `repository_support`), whose type "
                                  "the reviewing model chooses",
    "questions[].proof_report.extra": "keys a sandbox adds beyond the typed report (they differ per sandbox "
                                      "and version)",
    "messages[].extra": "every key of the source message that has no typed field (mini-swe-agent keeps the "
                        "provider's raw response there; ATIF steps keep metrics and extensions); with the "
                        "typed fields it gives the source message back",
    "messages[].tool_calls[].arguments": "a tool call's arguments follow that tool's own JSON schema, which "
                                         "differs per tool",
}


def _fits(value: Any, dtype: str) -> bool:
    if dtype.startswith("list<"):
        inner = dtype[5:-1]
        return isinstance(value, list) and all(v is None or _fits(v, inner) for v in value)
    ok = _PY[dtype]
    return isinstance(value, ok) and (dtype == "bool" or not isinstance(value, bool))


def split_record(record: Mapping[str, Any] | None, spec: Mapping[str, str]) -> dict[str, Any] | None:
    """``record`` as its typed fields (``None`` where absent) plus ``extra`` (JSON of the rest)."""
    if record is None:
        return None
    out: dict[str, Any] = {}
    rest: dict[str, Any] = {}
    for k, v in record.items():
        if k in spec and (v is None or _fits(v, spec[k])):
            out[k] = float(v) if spec[k] == "float64" and v is not None else v
        else:
            rest[k] = v
    typed = {k: out.get(k) for k in spec}
    typed["extra"] = compact_json_text(rest)
    return typed


def join_record(stored: Mapping[str, Any] | None, spec: Mapping[str, str]) -> dict[str, Any] | None:
    """Inverse of :func:`split_record` (typed keys holding ``None`` come back absent)."""
    if stored is None:
        return None
    out = {k: stored[k] for k in spec if stored.get(k) is not None}
    out.update(json.loads(stored.get("extra") or "{}"))
    return out


__all__ = ["split_record", "join_record", "MODEL_RECORD", "GENERATOR", "REVIEWER", "PROOF_REPORT",
           "MESSAGE", "JSON_TEXT_FIELDS"]
