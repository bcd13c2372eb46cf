"""The openai backend against a loopback HTTP server (stdlib, 127.0.0.1) serving a hand-written reply:
the SDK's retries, token/cost accounting, store + replay, and the API key never written anywhere."""

from __future__ import annotations

import json
import logging
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from builder.llm import ResponseStore, get_backend
from swe_taskflow.errors import ModelError

FIX = Path(__file__).parents[1] / "fixtures" / "llm" / "openai_chat_completion.json"
SECRET = "sk-loopback-SECRET-7f3a9c"
MESSAGES = [{"role": "user", "content": "Is this split complete?"}]


class Server:
    """Serves the fixture after ``fail_first`` 503 answers; ``delay`` seconds before each answer."""

    def __init__(self, fail_first=0, status=503, delay=0.0):
        self.fail_first, self.status, self.delay = fail_first, status, delay
        self.requests: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                time.sleep(outer.delay)
                if len(outer.requests) <= outer.fail_first:
                    payload, code = b'{"error": {"message": "busy"}}', outer.status
                else:
                    payload, code = FIX.read_bytes(), 200
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *a):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def key_env(monkeypatch):
    monkeypatch.setenv("TASKFLOW_TEST_KEY", SECRET)
    return "TASKFLOW_TEST_KEY"


def _backend(url, key_env, store, **kw):
    return get_backend("openai", store=store, model="loopback-model", base_url=url, api_key_env=key_env,
                       input_cost_per_mtok=3.0, output_cost_per_mtok=15.0, **kw)


def test_retries_accounting_store_and_no_key_leak(tmp_path, key_env, caplog):
    caplog.set_level(logging.DEBUG)
    store = ResponseStore(tmp_path / "store")
    with Server(fail_first=2) as srv:
        llm = _backend(srv.url, key_env, store, max_retries=3, timeout_s=5)
        reply = llm.complete(MESSAGES, stage="split.check")
        assert len(srv.requests) == 3                      # two 503s, then the answer
        assert srv.requests[-1]["path"] == "/v1/chat/completions"
        assert srv.requests[-1]["auth"] == f"Bearer {SECRET}"   # the key did reach the endpoint
        assert srv.requests[-1]["body"]["messages"] == MESSAGES
        assert srv.requests[-1]["body"]["temperature"] == 0.0
        fixture = json.loads(FIX.read_text())
        assert reply.text == fixture["choices"][0]["message"]["content"] and not reply.replayed
        use = llm.ledger.to_dict()["split.check"]
        assert (use["calls"], use["retries"], use["replayed"]) == (1, 2, 0)
        assert (use["prompt_tokens"], use["completion_tokens"]) == (1234, 56)
        assert use["cost_usd"] == pytest.approx((1234 * 3.0 + 56 * 15.0) / 1e6)
        again = llm.complete(MESSAGES, stage="split.check")   # served by the store: no new request
        assert len(srv.requests) == 3 and again.replayed and again.text == reply.text
    files = list((tmp_path / "store").rglob("*"))
    assert any(f.is_file() for f in files)
    for f in files:
        if f.is_file():
            assert SECRET not in f.read_text(encoding="utf-8")
    assert SECRET not in caplog.text
    assert SECRET not in json.dumps(llm.info) and SECRET not in json.dumps(llm.ledger.to_dict())
    # offline replay of the recorded request: same text, no server at all
    replay = get_backend("replay", store=store, model="loopback-model")
    assert replay.complete(MESSAGES, stage="split.check").text == reply.text


def test_gives_up_after_max_retries(tmp_path, key_env, caplog):
    with Server(fail_first=99, status=429) as srv:
        llm = _backend(srv.url, key_env, None, max_retries=2, timeout_s=5)
        with pytest.raises(ModelError, match="after 2 retries") as ei:
            llm.complete(MESSAGES, stage="qa.generate")
        assert len(srv.requests) == 3 and SECRET not in str(ei.value)
    assert SECRET not in caplog.text


def test_timeout_is_retried_then_reported(key_env):
    with Server(delay=0.5) as srv:
        llm = _backend(srv.url, key_env, None, max_retries=1, timeout_s=0.2)
        with pytest.raises(ModelError, match="APITimeoutError"):
            llm.complete(MESSAGES, stage="split.write")
        assert len(srv.requests) == 2


def test_client_error_is_not_retried(key_env):
    with Server(fail_first=99, status=400) as srv:
        llm = _backend(srv.url, key_env, None, max_retries=3, timeout_s=5)
        with pytest.raises(ModelError, match="HTTP 400"):
            llm.complete(MESSAGES, stage="split.write")
        assert len(srv.requests) == 1


def test_missing_key_for_the_default_endpoint(monkeypatch):
    monkeypatch.delenv("TASKFLOW_ABSENT_KEY", raising=False)
    from swe_taskflow.errors import ConfigError
    with pytest.raises(ConfigError, match="TASKFLOW_ABSENT_KEY"):
        get_backend("openai", model="m", api_key_env="TASKFLOW_ABSENT_KEY")


def test_the_error_names_the_endpoint_from_openai_base_url(key_env, monkeypatch):
    """Issue 36: with OPENAI_BASE_URL set and no base_url in the config, the error said "endpoint default"."""
    with Server(fail_first=99, status=503) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        llm = _backend(None, key_env, None, max_retries=0, timeout_s=5)
        with pytest.raises(ModelError) as ei:
            llm.complete(MESSAGES, stage="split.write")
    assert f"endpoint {srv.url}" in str(ei.value) and "default" not in str(ei.value)
