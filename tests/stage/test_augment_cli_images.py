"""`augment run --repos` checks each item in its task's own image when it is present, as the build's augment stage
does (the CLI used to pass no images, so every check ran in the project's test image)."""

from __future__ import annotations

import json

import builder.turns
import builder.turns.sandbox
from builder.cli import main
from tests.conftest import PRO_SAMPLE


def test_augment_run_hands_each_task_its_own_image(tmp_path, monkeypatch):
    task = json.loads(PRO_SAMPLE.read_text().splitlines()[0])
    (tmp_path / "repos" / task["instance_id"]).mkdir(parents=True)
    seen: dict = {}

    class FakeSandbox:
        def __init__(self, kind, image=None):
            self.kind = kind

        def image_for(self, task_image):
            return f"local/{task_image}" if task_image else None

    def fake_augment_tasks(tasks, splits, *, images=None, **kw):
        seen["images"] = dict(images or {})
        return [], {}

    monkeypatch.setattr(builder.turns.sandbox, "CheckSandbox", FakeSandbox)
    monkeypatch.setattr(builder.turns, "augment_tasks", fake_augment_tasks)
    rc = main(["augment", "run", "--tasks", str(PRO_SAMPLE), "--out", str(tmp_path / "items.jsonl"),
               "--repos", str(tmp_path / "repos"), "--kinds", "execute"])
    assert rc == 0
    assert seen["images"] == {task["instance_id"]: f"local/{task['image_name']}"}
