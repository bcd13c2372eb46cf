"""The LLM writer of augmentation turns, replayed offline from hand-written replies
(tests/fixtures/llm/augment_write_*.json, labelled hand-written): whatever it writes goes through
the same contract checks as the templates."""

from __future__ import annotations

import json

import pytest

from builder.turns import AugmentSpec, LLMWriter, TaskContext
from builder.turns.registry import realize
from builder.llm import ResponseStore, get_backend
from builder.split.structural import StructuralSplitter
from tests.support.llm_fixtures import MODEL, fixture_text
from swe_taskflow.errors import ReplayMissError

from tests.support.augment_cart import cart_task

REQ = "- A `discount` outside [0, 1] should raise `ValueError`."


@pytest.fixture
def setup(tmp_path):
    store = ResponseStore(tmp_path / "store")
    llm = get_backend("replay", store=store, model=MODEL)
    task = cart_task()
    ctx = TaskContext(task, StructuralSplitter().split(task).parts)
    return store, llm, LLMWriter(llm), ctx


def record(store, llm, writer, kind, material, name):
    store.put_text(llm.request(writer.messages(kind, material)), fixture_text(name), stage="augment.write",
                   provenance="hand-written")


PLAN = AugmentSpec("c::planning-2", "fixture__cart-1", "planning", requirement_part=2, requirement=REQ)


def test_llm_worded_planning_turn_is_checked_and_accepted(setup):
    store, llm, writer, ctx = setup
    record(store, llm, writer, "planning", {"requirement": REQ}, "augment_write_planning_ok.json")
    item = realize(PLAN, ctx, writer)
    assert item.status == "accepted", item.reason
    assert item.question.startswith("Before touching any code") and REQ in item.question
    assert item.generator["writer"]["name"] == "llm" and len(item.generator["writer"]["prompt_sha256"]) == 64
    assert item.generator["writer"]["llm"]["model"] == MODEL
    assert writer.last_reply.replayed and writer.last_reply.provenance == "hand-written"
    # the prompt carries the kind's contract and the material verbatim
    content = writer.messages("planning", {"requirement": REQ})[0]["content"]
    assert "**planning**" in content and REQ in content and "Do not ask for the implementation" in content


@pytest.mark.parametrize("name,reason", [
    ("augment_write_planning_implements.json", "text-contract: asks-for-implementation"),
    ("augment_write_not_json.json", "writer: malformed writer reply"),
])
def test_bad_llm_wording_is_rejected_with_its_reason(setup, name, reason):
    store, llm, writer, ctx = setup
    record(store, llm, writer, "planning", {"requirement": REQ}, name)
    item = realize(PLAN, ctx, writer)
    assert item.status == "rejected" and item.reason.startswith(reason), item.reason


def test_review_reply_needs_the_diff_placeholder(setup):
    _, llm, writer, _ = setup
    store = llm.store
    record(store, llm, writer, "review", {"diff": "diff --git a/x b/x"}, "augment_write_review_no_placeholder.json")
    from builder.turns import WriterError
    with pytest.raises(WriterError, match="placeholder"):
        writer.write("review", {"diff": "diff --git a/x b/x"}, item_id="r")
    # the diff itself never goes to the model: the request shows the placeholder
    assert "diff --git" not in writer.messages("review", {"diff": "diff --git a/x b/x"})[0]["content"]


def test_replay_miss_names_the_stage(setup):
    _, _, writer, ctx = setup
    with pytest.raises(ReplayMissError, match="augment.write"):
        realize(PLAN, ctx, writer)


def test_cli_words_turns_through_a_replayed_backend(tmp_path, capsys):
    """`augment run --llm replay --store DIR`: the same request the writer builds is answered from the store."""
    from builder.cli import main

    store_dir = tmp_path / "store"
    llm = get_backend("replay", store=ResponseStore(store_dir), model=MODEL)
    writer = LLMWriter(llm)
    task = cart_task()
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({**task.to_dict(), "interface": ""}) + "\n")
    split = StructuralSplitter().split(task)
    from builder.turns.propose import planning_requirements
    for part, req in planning_requirements(TaskContext(task, split.parts), 2):
        text = json.dumps({"text": f"Before any edit, how would you plan this?\n\n{req}\n\nName files and functions."})
        llm.store.put_text(llm.request(writer.messages("planning", {"requirement": req})), text,
                           stage="augment.write", provenance="hand-written")
    out = tmp_path / "items.jsonl"
    assert main(["augment", "run", "--tasks", str(tasks), "--out", str(out), "--kinds", "planning",
                 "--llm", "replay", "--model", MODEL, "--store", str(store_dir)]) == 0
    items = [json.loads(line) for line in out.read_text().splitlines()]
    assert [i["status"] for i in items] == ["accepted", "accepted"], [i["reason"] for i in items]
    assert all(i["question"].startswith("Before any edit") and i["generator"]["writer"]["name"] == "llm"
               for i in items)
    assert json.loads(capsys.readouterr().out)["by_kind_status"] == {"planning": {"accepted": 2}}
