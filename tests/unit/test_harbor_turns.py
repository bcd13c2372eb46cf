"""The Harbor agent's two light helpers, held to the project's own writers (issue 36): which turns are issue
turns (read from the exported instruction alone) and the one line a refused endpoint fails with."""

from __future__ import annotations

import pytest

from builder.evaluation.export import answer_instruction, step_name
from swe_taskflow.turns.kinds import KINDS
from swe_taskflow_harbor.endpoint import describe_endpoint, endpoint_line, is_endpoint_error
from swe_taskflow_harbor.turns import ANSWER, ISSUE, turn_kind


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_exported_answer_turn_reads_as_an_answer(kind):
    text = "Please run `pytest -q` and tell me how many tests pass.\n"
    assert turn_kind(answer_instruction(text, step_name(3, kind))) == ANSWER


@pytest.mark.parametrize("text", [
    "Fix the crash in `ticketdesk list`.",
    "Write your answer to the file `/tmp/answers/x.md` (create its folder if needed).",   # no blank line before
    "Explain it.\n\nWrite your answer to the file `/tmp/answers/x.md` (create its folder if needed).\n\nThanks",
    ""])
def test_issue_texts_read_as_issues(text):
    assert turn_kind(text) == ISSUE


def test_the_endpoint_is_named_without_credentials():
    assert describe_endpoint("openai/m", {"api_base": "http://user:pw@127.0.0.1:9/v1?key=s"}) == \
        "model 'openai/m' at http://127.0.0.1:9/v1 (from model_kwargs)"
    assert describe_endpoint("openai/m", {}, env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}) == \
        "model 'openai/m' at http://127.0.0.1:9/v1 (from OPENAI_BASE_URL)"
    assert describe_endpoint("anthropic/c", {}, env={}) == "model 'anthropic/c' at anthropic's default endpoint"


def _connection_error() -> Exception:
    try:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except ConnectionRefusedError as inner:
            raise RuntimeError("Connection error.") from inner
    except RuntimeError as exc:
        return exc


def test_a_refused_connection_is_an_endpoint_error_and_a_timeout_is_not():
    assert is_endpoint_error(_connection_error())
    assert not is_endpoint_error(TimeoutError("slow"))
    assert not is_endpoint_error(RuntimeError("500 overloaded"))


def test_the_line_is_one_line_and_holds_no_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-abcdef123456")
    exc = RuntimeError("Incorrect API key provided: sk-secret-abcdef123456\nmore lines")
    line = endpoint_line("model 'openai/m' at http://127.0.0.1:9/v1", exc, secrets=("pw-123456",))
    assert "\n" not in line and "sk-secret" not in line and "127.0.0.1:9" in line and "not retried" in line
    line = endpoint_line("E", _connection_error())
    assert "ConnectionRefusedError" in line and "connection failed" in line
