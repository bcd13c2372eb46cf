"""SWE-bench Verified rows through builder.sources: the committed five-row sample (tests/fixtures/swe-bench-verified)."""

from __future__ import annotations

import json
from pathlib import Path

from builder.sources import load_tasks
from swe_taskflow.hashing import task_sha256

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "swe-bench-verified" / "verified_sample.jsonl"


def test_verified_rows_normalize_with_their_text_fields_as_written():
    raw = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    load = load_tasks(str(FIXTURE))      # the source is guessed from the columns and the file name
    assert [t.status for t in load.tasks] == ["ok"] * 5
    for row, task in zip(raw, load.tasks):
        assert task.source == "swe-bench-verified" and task.original_prompt == row["problem_statement"]
        assert list(task.fail_to_pass) == json.loads(row["FAIL_TO_PASS"])
        assert list(task.pass_to_pass) == json.loads(row["PASS_TO_PASS"])
        # Arrow's JSON reader makes created_at a datetime: it comes back as the source's own text (JSON-able)
        for key in ("created_at", "version", "environment_setup_commit", "difficulty", "hints_text"):
            assert task.extra[key] == row[key], (task.instance_id, key)
        task_sha256(task)                # hashable: every extra value is JSON
        assert task.image_name == ("swebench/sweb.eval.x86_64." + row["instance_id"].replace("__", "_1776_")
                                   + ":latest")
