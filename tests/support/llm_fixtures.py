"""Recorded LLM replies written by hand (tests/fixtures/llm): each file says so in its provenance."""

from __future__ import annotations

import json
from pathlib import Path

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "llm"
#: The model name hand-written replies are stored under (never presented as a real model's output).
MODEL = "hand-written-fixture"


def fixture_text(name: str) -> str:
    data = json.loads((FIX / name).read_text(encoding="utf-8"))
    assert data["provenance"] == "hand-written"
    return data["text"]
