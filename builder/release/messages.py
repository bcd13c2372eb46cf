"""Agent-trajectory messages as typed records, and back (mini-swe-agent messages, Harbor ATIF steps).

A source message's keys that map exactly onto a typed field (role, text content, reasoning, tool
calls, tool observations) move there; the rest of the message stays, unchanged, in ``extra``
(canonical JSON). Token counts, cost and model are *copies* read from nested provider fields for
convenience (their originals stay in ``extra``). :func:`source_messages` rebuilds the source
messages exactly, which the tests check on real mini-swe-agent files.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from swe_taskflow.hashing import compact_json_text as json_text
from swe_taskflow.typed_records import MESSAGE

ATIF_ROLES = {"agent": "assistant", "user": "user", "system": "system"}
ATIF_SOURCES = {v: k for k, v in ATIF_ROLES.items()}


def _num(x: Any, kind: type) -> Any:
    return kind(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def _empty() -> dict[str, Any]:
    return {k: None for k in MESSAGE}


def _openai_calls(calls: Any) -> list[dict[str, Any]] | None:
    """OpenAI-style tool calls as typed calls, or None when any call has another shape (kept in extra)."""
    if not isinstance(calls, list):
        return None
    out = []
    for c in calls:
        fn = c.get("function") if isinstance(c, Mapping) else None
        if not (isinstance(fn, Mapping) and set(c) == {"id", "type", "function"} and c["type"] == "function"
                and set(fn) == {"name", "arguments"} and isinstance(fn["arguments"], str)
                and isinstance(c["id"], str) and isinstance(fn["name"], str)):
            return None
        out.append({"id": c["id"], "name": fn["name"], "arguments": fn["arguments"]})
    return out


def _atif_calls(calls: Any) -> list[dict[str, Any]] | None:
    if not isinstance(calls, list):
        return None
    out = []
    for c in calls:
        if not (isinstance(c, Mapping) and set(c) == {"tool_call_id", "function_name", "arguments"}
                and isinstance(c["tool_call_id"], str) and isinstance(c["function_name"], str)
                and isinstance(c["arguments"], Mapping)):
            return None
        out.append({"id": c["tool_call_id"], "name": c["function_name"], "arguments": json_text(c["arguments"])})
    return out


def _atif_observations(obs: Any) -> list[dict[str, Any]] | None:
    results = obs.get("results") if isinstance(obs, Mapping) and set(obs) == {"results"} else None
    if not isinstance(results, list):
        return None
    out = []
    for r in results:
        if not (isinstance(r, Mapping) and set(r) == {"source_call_id", "content"}
                and isinstance(r.get("content"), str) and isinstance(r.get("source_call_id"), (str, type(None)))):
            return None
        out.append({"call_id": r.get("source_call_id"), "content": r["content"]})
    return out


def typed_mini_swe_agent(index: int, m: Mapping[str, Any]) -> dict[str, Any]:
    rest = dict(m)
    out = _empty()
    if isinstance(rest.get("role"), str):
        out["role"] = rest.pop("role")
    if isinstance(rest.get("content"), str):
        out["content"] = rest.pop("content")
    calls = _openai_calls(rest.get("tool_calls"))
    if calls is not None:
        rest.pop("tool_calls")
    extra = rest.get("extra") if isinstance(rest.get("extra"), Mapping) else {}
    resp = extra.get("response") if isinstance(extra.get("response"), Mapping) else {}
    usage = resp.get("usage") if isinstance(resp.get("usage"), Mapping) else {}
    out.update(model=resp.get("model") if isinstance(resp.get("model"), str) else None,
               prompt_tokens=_num(usage.get("prompt_tokens"), int),
               completion_tokens=_num(usage.get("completion_tokens"), int), cost_usd=_num(extra.get("cost"), float))
    return {"index": index, **out, "tool_calls": calls or [], "observations": [], "extra": json_text(rest),
            "_calls_typed": calls is not None}


def typed_atif(index: int, step: Mapping[str, Any]) -> dict[str, Any]:
    rest = dict(step)
    out = _empty()
    if rest.get("source") in ATIF_ROLES:
        out["role"] = ATIF_ROLES[rest.pop("source")]
    if isinstance(rest.get("message"), str):
        out["content"] = rest.pop("message")
    for src, dst in (("reasoning_content", "reasoning"), ("model_name", "model"), ("timestamp", "timestamp")):
        if isinstance(rest.get(src), str):
            out[dst] = rest.pop(src)
    calls = _atif_calls(rest.get("tool_calls"))
    if calls is not None:
        rest.pop("tool_calls")
    obs = _atif_observations(rest.get("observation"))
    if obs is not None:
        rest.pop("observation")
    metrics = rest.get("metrics") if isinstance(rest.get("metrics"), Mapping) else {}
    out.update(prompt_tokens=_num(metrics.get("prompt_tokens"), int),
               completion_tokens=_num(metrics.get("completion_tokens"), int),
               cost_usd=_num(metrics.get("cost_usd"), float))
    return {"index": index, **out, "tool_calls": calls or [], "observations": obs or [], "extra": json_text(rest),
            "_calls_typed": calls is not None, "_obs_typed": obs is not None}


def typed_messages(fmt: str, messages: Sequence[Any]) -> list[dict[str, Any]]:
    """Typed message records of a trajectory (``fmt``: ``mini-swe-agent`` or an ``ATIF-v1.x`` version).

    Whether tool calls / observations were typed is kept in ``extra`` under ``_typed`` only when
    a message had such a key, so :func:`source_messages` can restore it exactly.
    """
    atif = fmt.startswith("ATIF")
    out = []
    for n, m in enumerate(messages):
        if not isinstance(m, Mapping):
            m = {"_value": m}
        rec = typed_atif(n, m) if atif else typed_mini_swe_agent(n, m)
        marks = [k for k in ("_calls_typed", "_obs_typed") if rec.pop(k, False)]
        if marks:
            rest = json.loads(rec["extra"])
            rest["_typed"] = marks
            rec["extra"] = json_text(rest)
        out.append(rec)
    return out


def source_messages(fmt: str, typed: Sequence[Mapping[str, Any]]) -> list[Any]:
    """The source messages back from their typed records (inverse of :func:`typed_messages`)."""
    atif = fmt.startswith("ATIF")
    out: list[Any] = []
    for rec in typed:
        rest = json.loads(rec["extra"] or "{}")
        marks = rest.pop("_typed", [])
        if "_value" in rest and len(rest) == 1:
            out.append(rest["_value"])
            continue
        m: dict[str, Any] = {}
        if atif:
            if rec["role"] is not None:
                m["source"] = ATIF_SOURCES[rec["role"]]
            if rec["content"] is not None:
                m["message"] = rec["content"]
            for src, dst in (("reasoning_content", "reasoning"), ("model_name", "model"), ("timestamp", "timestamp")):
                if rec[dst] is not None:
                    m[src] = rec[dst]
            if "_calls_typed" in marks:
                m["tool_calls"] = [{"tool_call_id": c["id"], "function_name": c["name"],
                                    "arguments": json.loads(c["arguments"])} for c in rec["tool_calls"]]
            if "_obs_typed" in marks:
                m["observation"] = {"results": [{"source_call_id": o["call_id"], "content": o["content"]}
                                                for o in rec["observations"]]}
        else:
            if rec["role"] is not None:
                m["role"] = rec["role"]
            if rec["content"] is not None:
                m["content"] = rec["content"]
            if "_calls_typed" in marks:
                m["tool_calls"] = [{"id": c["id"], "type": "function",
                                    "function": {"name": c["name"], "arguments": c["arguments"]}}
                                   for c in rec["tool_calls"]]
        m.update(rest)
        out.append(m)
    return out


__all__ = ["typed_messages", "source_messages", "ATIF_ROLES"]
