"""The project's Harbor agent sends every turn as its user wrote it (only the first issue turn in
mini-swe-agent's issue framing), fails a turn at once on a refused endpoint, and stops calling the model and
running commands once Harbor cancels it (issue 36). Run in Harbor's venv on a loopback endpoint, no Docker:
tests/support/harbor_agent_probe.py."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from builder.evaluation.export import answer_instruction

pytestmark = [pytest.mark.harbor]
ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-probe-key-0123456789"
EXECUTE = answer_instruction("Please run the test suite and tell me how many tests pass. I only need the numbers.",
                             "turn-01-execute")
ISSUE_1 = "The `ticketdesk list` command crashes on an empty store; make it print nothing instead. {{ not jinja }}"
ISSUE_2 = "Also add a `--json` flag to `ticketdesk list`."
QA = answer_instruction("Where are tickets persisted, and in which format?", "turn-04-qa")


def _probe(harbor_venv: Path, tmp_path: Path, spec: dict, timeout: int = 120) -> dict:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    env = {**{k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}, "PYTHONPATH": str(ROOT),
           "LITELLM_LOCAL_MODEL_COST_MAP": "True", "OPENAI_API_KEY": KEY, "HARBOR_TELEMETRY": "0"}
    proc = subprocess.run([str(harbor_venv / "bin" / "python"), str(ROOT / "tests/support/harbor_agent_probe.py"),
                           str(path)], capture_output=True, text=True, env=env, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _users(messages: list[dict]) -> list[str]:
    return [m["content"] for m in messages if m["role"] == "user"]


def test_every_turn_reaches_the_model_as_its_user_wrote_it(harbor_venv, tmp_path):
    out = _probe(harbor_venv, tmp_path, {"turns": [EXECUTE, ISSUE_1, ISSUE_2, QA]})
    assert out["raised"] is None
    last = out["requests"][-1]
    users = _users(last)
    assert users[0] == EXECUTE and users[2] == ISSUE_2 and users[3] == QA       # as written, nothing added
    assert users[1].startswith(f"Please solve this issue: {ISSUE_1}\n")          # the one issue framing
    assert sum("Please solve this issue" in u for u in users) == 1
    system = last[0]["content"]
    assert last[0]["role"] == "system" and "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in system
    for req in out["requests"]:                                                  # one conversation, kept verbatim
        assert last[:len(req)] == req


def test_frame_issue_false_sends_the_issue_turn_as_written_too(harbor_venv, tmp_path):
    out = _probe(harbor_venv, tmp_path, {"turns": [ISSUE_1, QA], "agent_kwargs": {"frame_issue": "false"}})
    assert _users(out["requests"][-1]) == [ISSUE_1, QA]


@pytest.mark.parametrize("from_env", [False, True], ids=["api_base", "OPENAI_BASE_URL"])
def test_a_refused_endpoint_fails_the_turn_at_once_in_one_line(harbor_venv, tmp_path, from_env):
    out = _probe(harbor_venv, tmp_path, {"turns": [ISSUE_1], "mode": "refused", "base_from_env": from_env})
    raised = out["raised"]
    assert raised["exception_type"] == "ModelEndpointError"            # what Harbor writes into result.json
    msg = raised["exception_message"]
    assert "\n" not in msg and out["base"] in msg and "Connection refused" in msg and "not retried" in msg
    assert ("(from OPENAI_BASE_URL)" if from_env else "(from model_kwargs)") in msg
    assert KEY not in msg
    assert out["seconds"] < 10, out["seconds"]                           # not minutes of retries
    assert out["commands"] == []


def test_after_cancel_no_further_model_call(harbor_venv, tmp_path):
    """The endpoint answers 500; mini-swe-agent would retry after 4 s, 8 s, ...: once cancelled, it must not."""
    out = _probe(harbor_venv, tmp_path, {"turns": [ISSUE_1], "mode": "cancel", "server": "failing",
                                         "cancel_after": 1, "model_kwargs": {"max_retries": 0}}, timeout=90)
    assert len(out["requests"]) == out["requests_at_cancel"] == 1
    assert out["commands"] == []


def test_after_cancel_no_further_command(harbor_venv, tmp_path):
    out = _probe(harbor_venv, tmp_path, {"turns": [ISSUE_1], "mode": "cancel", "server": "busy", "cancel_after": 3})
    assert len(out["requests"]) == out["requests_at_cancel"]
    assert len(out["commands"]) == out["commands_at_cancel"]
