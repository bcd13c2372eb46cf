"""The hand-written augmentation fixture task (tests/fixtures/augment/cart: a cart whose subtotal ignores quantities)."""

from __future__ import annotations

import json
from pathlib import Path

from swe_taskflow.schema import Task

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "augment" / "cart"


def cart_task() -> Task:
    d = json.loads((FIX / "task.json").read_text())
    assert d.pop("provenance") == "hand-written"
    d.pop("note")
    return Task.from_dict({**d, "patch": (FIX / "gold.patch").read_text(), "test_patch": (FIX / "test.patch").read_text()})
