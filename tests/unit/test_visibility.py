"""The agent/grader split of a release row: an allowlist, a partition, and nothing hidden leaks."""

from __future__ import annotations

import json

import pytest

from tests.support.synthetic import hand_written_tasks, small_release_splits, synthetic_splits
from swe_taskflow.errors import InputError
from swe_taskflow.features import session_features
from swe_taskflow.visibility import (HIDDEN_REASONS, VISIBLE_ROW_FIELDS, AgentView, agent_view, grader_view,
                                     hidden_fields, merge_views, visible_fields)


@pytest.fixture(scope="module")
def rows():
    splits = {**small_release_splits(hand_written_tasks()), **synthetic_splits(4, seed=3)}
    return [r for rs in splits.values() for r in rs]


def test_the_two_views_partition_every_row(rows):
    for r in rows:
        a, g = agent_view(r), grader_view(r)
        assert merge_views(a, g) == r
        assert not set(a.to_dict()) - {"turns", *VISIBLE_ROW_FIELDS}
        assert not set(g) & set(VISIBLE_ROW_FIELDS)


def test_the_agent_sees_the_turns_in_order_and_nothing_hidden(rows):
    n_checked = 0
    for r in rows:
        a = agent_view(r)
        assert isinstance(a, AgentView)
        assert [t.text for t in a.turns] == [t["text"] for t in r["turns"]]
        assert [t.turn_index for t in a.turns] == list(range(len(r["turns"])))
        seen = json.dumps(a.to_dict())
        for q in r["questions"]:
            for secret in (q["reference_answer"], q["proof_script"], json.dumps(q["proof_report"])):
                assert json.dumps(secret)[1:-1] not in seen
                n_checked += 1
        if len(r["turns"]) > 1 and r["condition"] != "split_prompt_concat":
            assert json.dumps(r["original_prompt"])[1:-1] not in seen or r["split_status"] != "ok"
    assert n_checked > 20


def test_a_new_field_is_hidden_by_default(rows):
    row = {**rows[0], "augmentation_reference": "the answer is 42"}
    row["turns"] = [{**t, "reference_patch": "diff --git"} for t in row["turns"]]
    a, g = agent_view(row), grader_view(row)
    assert "42" not in json.dumps(a.to_dict()) and "diff --git" not in json.dumps(a.to_dict())
    assert g["augmentation_reference"] == "the answer is 42"
    assert all(t["reference_patch"] == "diff --git" for t in g["turns"])
    assert merge_views(a, g) == row


def test_hidden_fields_come_from_the_features():
    feats = session_features()
    hidden = hidden_fields(feats)
    assert {"questions[].reference_answer", "questions[].proof_script", "original_prompt", "turns[].intent", "turns[].question_id", "row_sha256"} <= set(hidden)
    assert not {"turns[].text", "turns[].kind", "instance_id", "image_name"} & set(hidden)
    assert set(visible_fields(feats)) == {*VISIBLE_ROW_FIELDS, "turns[].turn_index", "turns[].kind", "turns[].text"}
    # every hidden column of today's schema has a stated reason (the card prints it)
    assert set(hidden) <= set(HIDDEN_REASONS)


def test_malformed_rows_name_the_field(rows):
    bad = {k: v for k, v in rows[0].items() if k != "image_name"}
    with pytest.raises(InputError, match="image_name"):
        agent_view(bad)
    with pytest.raises(InputError, match="turns"):
        agent_view({**rows[0], "turns": None})
    with pytest.raises(InputError, match=r"turns\[0\].text"):
        agent_view({**rows[0], "turns": [{"turn_index": 0, "kind": "issue"}]})
