"""The LLM splitter through the response store with hand-written replies (tests/fixtures/llm/).

Every reply is labelled ``"provenance": "hand-written"``; the task is a real SWE-Bench Pro issue.
Malformed replies must end as a recorded failure: never a crash, never a silent pass.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from builder.cli import main
from builder.llm import ResponseStore, get_backend
from builder.split import get_splitter
from builder.split.llm_splitter import STAGE_CHECK, STAGE_WRITE
from builder.sources import load_tasks
from swe_taskflow.errors import ConfigError, ReplayMissError

FIX = Path(__file__).parents[1] / "fixtures" / "llm"
PROMPTS = Path(__file__).resolve().parents[2] / "builder" / "prompts"
QUTE = "instance_qutebrowser__qutebrowser-5e0d6dc1483cb3336ea0e3dcbd4fe4aa00fc1742"
MODEL = "hand-written-fixture"


def fixture_text(name: str) -> str:
    data = json.loads((FIX / name).read_text(encoding="utf-8"))
    assert data["provenance"] == "hand-written"
    return data["text"]


@pytest.fixture(scope="module")
def task(pro_sample):
    tasks = load_tasks(pro_sample).tasks
    return next(t for t in tasks if t.instance_id.startswith(QUTE))


@pytest.fixture
def store(tmp_path):
    return ResponseStore(tmp_path / "store")


@pytest.fixture
def splitter(store):
    return get_splitter("llm", llm=get_backend("replay", store=store, model=MODEL))


def record(store, splitter, messages, name, stage):
    req = splitter.llm.request(messages)
    store.put_text(req, fixture_text(name), stage=stage, provenance="hand-written")


def record_write(store, splitter, task, name):
    record(store, splitter, splitter.write_messages(task.original_prompt), name, STAGE_WRITE)
    obj = None
    try:
        obj = json.loads(fixture_text(name))
    except json.JSONDecodeError:
        pass
    return obj


def record_check(store, splitter, task, turns, name):
    record(store, splitter, splitter.check_messages(task.original_prompt, turns), name, STAGE_CHECK)


def test_good_split_passes_and_is_accounted(store, splitter, task):
    obj = record_write(store, splitter, task, "split_write_ok_qutebrowser.json")
    record_check(store, splitter, task, obj["turns"], "split_check_complete.json")
    res = splitter.split(task)
    assert res.status == "ok", res.violations
    assert list(res.parts) == obj["turns"]
    assert res.original_prompt == task.original_prompt
    sha = hashlib.sha256((PROMPTS / "split_write.md").read_bytes()).hexdigest()
    assert res.splitter["prompt_sha256"] == sha and res.splitter["model"] == MODEL
    usage = splitter.llm.ledger.to_dict()
    assert usage[STAGE_WRITE]["replayed"] == 1 and usage[STAGE_CHECK]["replayed"] == 1
    assert usage[STAGE_WRITE]["calls"] == 0 and usage[STAGE_WRITE]["cost_usd"] == 0
    assert splitter.split(task).to_dict() == res.to_dict()   # exact replay


def test_fenced_json_reply_is_parsed(store, splitter, task):
    obj = record_write(store, splitter, task, "split_write_ok_fenced.json")
    assert obj is None          # the reply itself is prose around a fence
    turns = json.loads(fixture_text("split_write_ok_qutebrowser.json"))["turns"]
    record_check(store, splitter, task, turns, "split_check_complete.json")
    assert splitter.split(task).status == "ok"


def _kinds(res):
    return {v["kind"] for v in res.violations}


def test_not_json_is_a_recorded_failure(store, splitter, task):
    record_write(store, splitter, task, "split_write_not_json.json")
    res = splitter.split(task)
    assert res.status == "failed" and _kinds(res) == {"malformed-response"}
    assert "not JSON" in res.reason and res.parts == ()


def test_two_turns_fail_without_calling_the_check(store, splitter, task):
    record_write(store, splitter, task, "split_write_two_turns.json")
    res = splitter.split(task)           # no split.check record exists: a call would raise ReplayMissError
    assert res.status == "failed" and "wrong-turn-count" in _kinds(res)
    assert res.parts == ()


def test_missing_fields_fail(store, splitter, task):
    record_write(store, splitter, task, "split_write_missing_fields.json")
    res = splitter.split(task)
    assert res.status == "failed" and _kinds(res) == {"malformed-response"}
    details = " ".join(v["detail"] for v in res.violations)
    assert "'artifacts'" in details and "'turns'" in details


def test_missing_eligibility_decision_fails(store, splitter, task):
    record_write(store, splitter, task, "split_write_no_decision.json")
    res = splitter.split(task)
    assert res.status == "failed" and "eligible" in res.violations[0]["detail"]


def test_ineligible_keeps_the_reason(store, splitter, task):
    record_write(store, splitter, task, "split_write_ineligible.json")
    res = splitter.split(task)
    assert res.status == "ineligible" and res.reason.startswith("atomic") and res.parts == ()


def test_process_reference_fails_the_deterministic_checks(store, splitter, task):
    obj = record_write(store, splitter, task, "split_write_process_reference.json")
    record_check(store, splitter, task, obj["turns"], "split_check_complete.json")
    res = splitter.split(task)
    assert res.status == "failed" and "process-reference" in _kinds(res)
    assert "process-reference" in res.reason


def test_completeness_check_can_reject(store, splitter, task):
    obj = record_write(store, splitter, task, "split_write_ok_qutebrowser.json")
    record_check(store, splitter, task, obj["turns"], "split_check_incomplete.json")
    res = splitter.split(task)
    assert res.status == "failed" and _kinds(res) == {"incomplete"}
    assert "injected" in res.violations[0]["detail"]


def test_malformed_completeness_reply_fails(store, splitter, task):
    obj = record_write(store, splitter, task, "split_write_ok_qutebrowser.json")
    record_check(store, splitter, task, obj["turns"], "split_check_not_json.json")
    res = splitter.split(task)
    assert res.status == "failed" and _kinds(res) == {"malformed-response"}
    assert STAGE_CHECK in res.violations[0]["detail"]


def test_replay_miss_names_key_and_stage(store, splitter, task):
    with pytest.raises(ReplayMissError) as ei:
        splitter.split(task)
    key = splitter.llm.request(splitter.write_messages(task.original_prompt)).key
    assert key in str(ei.value) and STAGE_WRITE in str(ei.value)


def test_unknown_names_list_the_known_ones(store):
    with pytest.raises(ConfigError, match="structural"):
        get_splitter("magic")
    with pytest.raises(ConfigError, match="openai"):
        get_backend("magic", model="m")
    with pytest.raises(ConfigError):
        get_backend("replay", model="m")          # replay without a store
    with pytest.raises(ConfigError):
        get_splitter("llm")                        # llm splitter without a backend


def test_cli_split_run_replays_and_reports_a_miss(tmp_path, store, splitter, task, capsys):
    obj = record_write(store, splitter, task, "split_write_ok_qutebrowser.json")
    record_check(store, splitter, task, obj["turns"], "split_check_complete.json")
    tasks_file = tmp_path / "tasks.jsonl"
    tasks_file.write_text(json.dumps(task.to_dict()) + "\n", encoding="utf-8")
    out = tmp_path / "splits.jsonl"
    usage = tmp_path / "usage.json"
    rc = main(["split", "run", "--tasks", str(tasks_file), "--out", str(out), "--llm", "replay",
               "--model", MODEL, "--store", str(store.root), "--usage-out", str(usage)])
    assert rc == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 1 and rows[0]["status"] == "ok" and rows[0]["parts"] == obj["turns"]
    assert json.loads(usage.read_text())["stages"][STAGE_WRITE]["replayed"] == 1
    rc = main(["split", "run", "--tasks", str(tasks_file), "--out", str(out), "--llm", "replay",
               "--model", "another-model", "--store", str(store.root)])
    err = capsys.readouterr().err
    assert rc == 2 and STAGE_WRITE in err and "request key" in err
