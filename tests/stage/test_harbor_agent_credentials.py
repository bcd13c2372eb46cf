"""The project's Harbor agent fails at once, in one line, when a LiteLLM model's API key is missing (LiteLLM
reports it as a server error that mini-swe-agent would retry for minutes on every turn); run in Harbor's venv."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

pytestmark = [pytest.mark.harbor]
ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import sys
from swe_taskflow_harbor.agent import check_credentials
try:
    check_credentials(sys.argv[1], {"model_class": sys.argv[2]} if sys.argv[2] else {})
except ValueError as exc:
    print("refused:", exc)
else:
    print("accepted")
"""


def _probe(harbor_venv: Path, model: str, model_class: str = "", **env: str) -> str:
    base = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    proc = subprocess.run([str(harbor_venv / "bin" / "python"), "-c", PROBE, model, model_class],
                          env={**base, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True", **env},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.strip()


def test_a_missing_key_is_named_before_anything_is_sent(harbor_venv):
    out = _probe(harbor_venv, "openai/gpt-5-mini")
    assert out.startswith("refused:") and "OPENAI_API_KEY" in out and "nothing was sent" in out
    assert _probe(harbor_venv, "openai/gpt-5-mini", OPENAI_API_KEY="sk-test-not-a-real-key") == "accepted"
    assert _probe(harbor_venv, "deterministic", "deterministic") == "accepted"     # no key needed
