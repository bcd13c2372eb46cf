"""Every Hub call has a deadline: an endpoint that accepts and never answers ends `push` and `verify ORG/NAME`.

A loopback server accepts every connection and sends nothing; HF_ENDPOINT points at it. Before, both commands
waited silently (400 s and more: huggingface_hub passes no timeout and retries). Now each ends within seconds
with one line naming the endpoint and the setting to raise, never the token, never a traceback.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time

import pytest

from swe_taskflow.errors import ConfigError
from tests.support.synthetic import small_release

SECRET = "hf_h32opsNeverPrintThisToken0123456789"


@pytest.fixture
def silent_endpoint():
    """http://127.0.0.1:<port> that accepts connections and never answers."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    srv.settimeout(0.2)
    held, stop = [], threading.Event()

    def accept():
        while not stop.is_set():
            try:
                held.append(srv.accept()[0])
            except OSError:
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.getsockname()[1]}"
    stop.set()
    t.join(2)
    for c in held:
        c.close()
    srv.close()


def _run(argv, endpoint, tmp_path, **env):
    full = {**os.environ, "HF_ENDPOINT": endpoint, "HF_TOKEN": SECRET, "HF_HOME": str(tmp_path / "hf-home"), **env}
    for name in ("HF_HUB_ETAG_TIMEOUT", "HF_HUB_DOWNLOAD_TIMEOUT", "HF_HUB_OFFLINE"):
        full.pop(name, None)
    start = time.monotonic()
    try:
        p = subprocess.run([sys.executable, "-m", "builder.cli", *argv], env=full, capture_output=True, text=True,
                           timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`swe-taskflow {' '.join(argv)}` still waiting on a silent Hub endpoint after 60 s")
    return p, time.monotonic() - start


def _one_line_naming(p, endpoint: str, setting: str) -> None:
    err = p.stderr.strip()
    assert p.returncode == 2, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err and "internal error" not in err, err
    assert endpoint in err and setting in err and "did not answer within" in err, err
    assert SECRET not in p.stderr + p.stdout


@pytest.mark.slow
def test_push_to_a_silent_endpoint_ends_in_bounded_time(tmp_path, silent_endpoint):
    small_release(tmp_path, name="pushed", version="v1.0", target="target.json",
                  provenance={"source": {"benchmark": "hand-written"}}, repo_id="test-org/silent")
    p, took = _run(["push", str(tmp_path / "rel"), "--repo", "test-org/silent", "--hub-timeout", "1"],
                   silent_endpoint, tmp_path)
    _one_line_naming(p, silent_endpoint, "--hub-timeout")
    assert took < 60


@pytest.mark.slow
@pytest.mark.parametrize("how", ["flag", "env"])
def test_verify_a_hub_id_at_a_silent_endpoint_ends_in_bounded_time(tmp_path, silent_endpoint, how):
    argv = ["verify", "test-org/silent"] + (["--hub-timeout", "1"] if how == "flag" else [])
    p, took = _run(argv, silent_endpoint, tmp_path, **({"SWE_TASKFLOW_HUB_TIMEOUT": "1"} if how == "env" else {}))
    _one_line_naming(p, silent_endpoint, "SWE_TASKFLOW_HUB_TIMEOUT")
    assert took < 60


def test_an_endpoint_is_shown_without_credentials_path_or_query():
    from swe_taskflow.hub_net import endpoint_of

    assert endpoint_of("https://user:hf_tok@hub.example:8443/api/x?token=hf_tok") == "https://hub.example:8443"
    assert endpoint_of("http://127.0.0.1:9/") == "http://127.0.0.1:9"


def test_the_deadline_comes_from_the_flag_then_the_environment(monkeypatch):
    from swe_taskflow.hub_net import DEFAULT_HUB_TIMEOUT_S, hub_timeout

    monkeypatch.delenv("SWE_TASKFLOW_HUB_TIMEOUT", raising=False)
    assert hub_timeout() == DEFAULT_HUB_TIMEOUT_S and hub_timeout(5) == 5
    monkeypatch.setenv("SWE_TASKFLOW_HUB_TIMEOUT", "7.5")
    assert hub_timeout() == 7.5 and hub_timeout(3) == 3
    for bad in ("0", "nan", "-1", "soon", "1e9"):
        monkeypatch.setenv("SWE_TASKFLOW_HUB_TIMEOUT", bad)
        with pytest.raises(ConfigError, match="SWE_TASKFLOW_HUB_TIMEOUT"):
            hub_timeout()


def test_the_users_own_settings_and_client_are_kept(monkeypatch):
    from huggingface_hub import constants
    from huggingface_hub.utils import _http

    from swe_taskflow.hub_net import hub_deadlines

    monkeypatch.setenv("HF_HUB_ETAG_TIMEOUT", "123")
    monkeypatch.delenv("HF_HUB_DOWNLOAD_TIMEOUT", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_ETAG_TIMEOUT", 123)
    monkeypatch.setattr(constants, "HF_HUB_DOWNLOAD_TIMEOUT", 10)
    theirs = lambda: None  # noqa: E731 - a client factory someone installed (a test's in-memory Hub)
    monkeypatch.setattr(_http, "_GLOBAL_CLIENT_FACTORY", theirs)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", False)
    monkeypatch.setenv("HF_HUB_DISABLE_XET", "0")
    assert hub_deadlines(7) == 7
    assert constants.HF_HUB_ETAG_TIMEOUT == 123 and constants.HF_HUB_DOWNLOAD_TIMEOUT == 7
    assert _http._GLOBAL_CLIENT_FACTORY is theirs and constants.HF_HUB_DISABLE_XET is False
    monkeypatch.delenv("HF_HUB_DISABLE_XET")
    hub_deadlines(7)
    assert constants.HF_HUB_DISABLE_XET is True   # hf_xet's own network stack has no deadline of ours
