"""Trajectory messages as typed records: exact round trips, and odd shapes kept whole in ``extra``."""

from __future__ import annotations

import json

from builder.release.messages import source_messages, typed_messages
from swe_taskflow.features import conform, message_feature

# Hand-written fixtures in the two formats (not real agent output).
ATIF_STEPS = [
    {"step_id": 1, "source": "system", "message": "[hand-written] You are a coding agent."},
    {"step_id": 2, "source": "user", "message": [{"type": "text", "text": "[hand-written] fix it"}]},
    {"step_id": 3, "source": "agent", "model_name": "example-model", "reasoning_content": "look first",
     "message": "", "timestamp": "2026-01-01T00:00:00Z",
     "tool_calls": [{"tool_call_id": "c1", "function_name": "bash", "arguments": {"command": "ls -1"}}],
     "observation": {"results": [{"source_call_id": "c1", "content": "README.md\nsrc\n"}]},
     "metrics": {"prompt_tokens": 120, "completion_tokens": 30, "cost_usd": 0.002}},
    {"step_id": 4, "source": "agent", "message": "[hand-written] done",
     "tool_calls": [{"tool_call_id": "c2", "function_name": "x", "arguments": {}, "extra": {"k": 1}}]},
]
MSA_MESSAGES = [
    {"role": "system", "content": "[hand-written] system"},
    {"role": "assistant", "content": "[hand-written] running a tool",
     "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "bash", "arguments": "{\"cmd\":\"ls\"}"}}],
     "extra": {"response": {"model": "m", "usage": {"prompt_tokens": 5, "completion_tokens": 2}}, "cost": 0.5}},
    {"role": "tool", "content": [{"type": "text", "text": "out"}], "tool_call_id": "t1"},
    "a bare string message",
]


def _feature_ok(records):
    for n, r in enumerate(records):
        conform(r, message_feature(), where="test", row=n)


def test_atif_round_trip_and_typed_fields():
    typed = typed_messages("ATIF-v1.4", ATIF_STEPS)
    _feature_ok(typed)
    assert source_messages("ATIF-v1.4", typed) == ATIF_STEPS
    assert [t["role"] for t in typed] == ["system", "user", "assistant", "assistant"]
    assert typed[1]["content"] is None and "fix it" in typed[1]["extra"]    # content parts stay whole
    call = typed[2]["tool_calls"][0]
    assert (call["id"], call["name"], json.loads(call["arguments"])) == ("c1", "bash", {"command": "ls -1"})
    assert typed[2]["observations"] == [{"call_id": "c1", "content": "README.md\nsrc\n"}]
    assert (typed[2]["prompt_tokens"], typed[2]["completion_tokens"], typed[2]["cost_usd"]) == (120, 30, 0.002)
    assert typed[2]["reasoning"] == "look first" and typed[2]["model"] == "example-model"
    assert typed[3]["tool_calls"] == [] and "function_name" in typed[3]["extra"]   # a call with extras stays


def test_mini_swe_agent_round_trip_and_typed_fields():
    typed = typed_messages("mini-swe-agent-1", MSA_MESSAGES)
    _feature_ok(typed)
    assert source_messages("mini-swe-agent-1", typed) == MSA_MESSAGES
    assert typed[1]["tool_calls"] == [{"id": "t1", "name": "bash", "arguments": "{\"cmd\":\"ls\"}"}]
    assert (typed[1]["model"], typed[1]["prompt_tokens"], typed[1]["cost_usd"]) == ("m", 5, 0.5)
    assert typed[2]["content"] is None and typed[2]["role"] == "tool"
    assert typed[3]["role"] is None and [t["index"] for t in typed] == [0, 1, 2, 3]
