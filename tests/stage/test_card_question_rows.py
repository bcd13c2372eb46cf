"""The card renders the build's record of which tasks carry questions, and refuses one that disagrees with the rows."""

from __future__ import annotations

import dataclasses

import pytest

from builder.release.card import render_card
from tests.support.synthetic import hand_written_tasks, small_release_splits, uniform_target
from builder.release.writer import read_release, write_release
from swe_taskflow.errors import ConfigError
from swe_taskflow.target import load_target


def test_question_rows_are_rendered_and_checked(tmp_path):
    uniform_target(tmp_path / "t.json")
    splits = small_release_splits(hand_written_tasks())
    write_release(tmp_path / "rel", name="qr", version="v1", splits=splits, target_path=tmp_path / "t.json",
                  provenance={})
    manifest, rows, _ = read_release(tmp_path / "rel")
    carried = {s: sum(1 for r in rs if r["questions"]) for s, rs in rows.items()}
    record = {"rule": "[hand-written] a question belongs to the task it is about",
              "tasks_with_candidates": [{"instance_id": "hand-written__task-0", "provenance": "hand-written",
                                         "candidates": 3, "accepted": 1, "rejected_by_reason": {"failed-exit": 2}}],
              "tasks_without_questions": {"no candidate question names the task": 2},
              "rows_with_questions": carried}
    m = dataclasses.replace(manifest, provenance={**manifest.provenance, "question_rows": record})
    text = render_card(m, load_target(tmp_path / "t.json"), rows).decode()
    assert "Which rows carry questions: [hand-written] a question belongs to the task it is about." in text
    assert "- `hand-written__task-0` (hand-written): 1 of 3 candidate questions accepted; rejected: failed-exit 2." in text
    assert "- 2 tasks carry no question: no candidate question names the task." in text
    wrong = dataclasses.replace(m, provenance={**m.provenance, "question_rows": {
        **record, "rows_with_questions": {**carried, "qa_only_sol": carried["qa_only_sol"] + 1}}})
    with pytest.raises(ConfigError, match="question_rows.qa_only_sol"):
        render_card(wrong, load_target(tmp_path / "t.json"), rows)
