"""Repository-QA mining on a real mini-swe-agent trajectory (SWE-bench Verified, MIT; committed, trimmed:
tests/fixtures/mini-swe-agent/) with hand-written replayed replies (tests/fixtures/llm/qa_*.json, labelled
hand-written)."""

from __future__ import annotations

import dataclasses

import json

import pytest

from builder.cli import main
from builder.llm import ResponseStore, get_backend
from builder.sources import load_tasks
from builder.qa import (STAGE_GENERATE, STAGE_REVIEW, generate_questions, generation_messages, leaks, patch_facts,
                        read_trajectory, review_messages)
from tests.support.llm_fixtures import MODEL, fixture_text
from swe_taskflow.errors import ConfigError, InputError
from swe_taskflow.schema import QAItem, Task

IID = "astropy__astropy-12907"


@pytest.fixture(scope="module")
def traj_path(trajectory_file):
    return trajectory_file


@pytest.fixture(scope="module")
def traj(traj_path):
    return read_trajectory(traj_path)


@pytest.fixture
def task(traj):
    return Task(instance_id=IID, source="swe-bench-verified", source_revision="", repo="astropy/astropy",
                base_commit="", original_prompt=traj.issue, problem_statement=traj.issue, patch=traj.submission)


@pytest.fixture
def repo(tmp_path):
    """A stand-in checkout holding only the cited files and symbols (test scaffolding, not astropy's code)."""
    root = tmp_path / "repo"
    (root / "astropy/modeling").mkdir(parents=True)
    (root / "astropy/modeling/separable.py").write_text(
        "# stand-in\ndef separability_matrix(transform): ...\n_operators = {}\ndef _cstack(left, right): ...\n")
    (root / "astropy/modeling/core.py").write_text("# stand-in\nclass CompoundModel: ...\n")
    return root


@pytest.fixture
def store(tmp_path):
    return ResponseStore(tmp_path / "store")


@pytest.fixture
def llm(store):
    return get_backend("replay", store=store, model=MODEL)


def put(llm, store, messages, name, stage):
    store.put_text(llm.request(messages), fixture_text(name), stage=stage, provenance="hand-written")


def test_reads_the_real_trajectory(traj):
    assert traj.instance_id == IID and traj.trajectory_format == "mini-swe-agent-1"
    assert "separability_matrix" in traj.issue and not traj.issue.startswith("Consider")
    assert "astropy/modeling/separable.py" in traj.files_read
    assert traj.submission.startswith("diff --git") and len(traj.commands) == 20


def test_patch_facts_skip_tests_and_find_the_added_line(traj):
    facts = patch_facts(traj.submission)
    assert facts.added_lines == ("        cright[-right.shape[0]:, -right.shape[1]:] = right",)
    assert "test_separable_nested_compound_models" not in facts.new_identifiers


def test_leaks_on_a_handmade_patch():
    patch = ("diff --git a/pkg/mod.py b/pkg/mod.py\n--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -1,2 +1,3 @@\n"
             " def load(path):\n-    return read(path)\n+    return read_cached(path, max_age=CACHE_TTL)\n"
             "+def read_cached(path, max_age): ...\n"
             "diff --git a/pkg/new.py b/pkg/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/pkg/new.py\n"
             "@@ -0,0 +1 @@\n+CACHE_TTL = 60\n")
    facts = patch_facts(patch)
    assert {"read_cached", "CACHE_TTL", "max_age"} <= facts.new_identifiers
    assert "read" not in facts.new_identifiers and "load" not in facts.new_identifiers
    assert facts.new_files == {"pkg/new.py"} and "read_cached" in facts.defined
    assert leaks("How does `load` in pkg/mod.py read a file?", facts) == []
    assert any("read_cached" in x for x in leaks("Why does load call read_cached?", facts))
    assert leaks("It does return read_cached(path, max_age=CACHE_TTL) now", facts)


def test_patch_facts_read_hunks_not_header_look_alikes_and_see_files_without_hunks():
    # a removed SQL comment "-- ..." is the diff line "--- ...": it is code, not a file header
    patch = ("diff --git a/q.sql b/q.sql\n--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1 @@\n"
             "--- uses legacy_total\n-SELECT 1;\n+SELECT legacy_total FROM t;\n"
             "diff --git a/pkg/__init__.py b/pkg/__init__.py\nnew file mode 100644\nindex 0000000..e69de29\n"
             "diff --git a/data.bin b/data.bin\nnew file mode 100644\nindex 0000000..1b2c3d4\n"
             "Binary files /dev/null and b/data.bin differ\n")
    facts = patch_facts(patch)
    assert "legacy_total" not in facts.new_identifiers       # the base already named it
    assert facts.added_lines == ("SELECT legacy_total FROM t;",)
    assert facts.new_files == {"pkg/__init__.py", "data.bin"}  # empty and binary new files exist only after
    with pytest.raises(InputError, match=r"gold\.diff:8: field 'patch': hunk ends early"):
        patch_facts(patch.replace("@@ -1,2 +1 @@", "@@ -1,2 +1,2 @@"), where="gold.diff")


def test_generate_check_review(task, traj_path, traj, repo, llm, store):
    put(llm, store, generation_messages(task, traj, repo, 3), "qa_generate_astropy_12907.json", STAGE_GENERATE)
    good = json.loads(fixture_text("qa_generate_astropy_12907.json"))["questions"][0]
    put(llm, store, review_messages(good["question"], good["reference_answer"], good["evidence"]),
        "qa_review_accept.json", STAGE_REVIEW)
    items = generate_questions(task, traj_path, repo, llm, max_questions=3)
    assert [type(i) for i in items] == [QAItem] * 3
    first, leak, broken = items
    assert first.status == "candidate" and first.reason == "" and first.intent == "explain"
    assert first.question == good["question"] and first.reference_answer == good["reference_answer"]
    assert [e["path"] for e in first.evidence] == [e["path"] for e in good["evidence"]]
    assert first.proof_script.startswith("#!/usr/bin/env python3") and first.proof_report is None
    assert first.reviewer["verdict"] == "accept" and first.reviewer["clarity"] == 5
    assert first.generator["model"] == MODEL and first.generator["repo_checked"] is True
    assert first.generator["leakage_reference"] == "gold patch"
    assert leak.status == "rejected" and "leak (answer)" in leak.reason and "cright" in leak.reason
    assert leak.reviewer == {}                           # rejected before the reviewer is asked
    assert broken.status == "rejected" and "reference_answer" in broken.reason and "proof_script" in broken.reason
    assert len({i.question_id for i in items}) == 3
    use = llm.ledger.to_dict()
    assert use[STAGE_GENERATE]["replayed"] == 1 and use[STAGE_REVIEW]["replayed"] == 1
    assert [i.to_dict() for i in generate_questions(task, traj_path, repo, llm)] == [i.to_dict() for i in items]


def test_evidence_missing_from_the_repository_is_rejected(task, traj_path, traj, repo, llm, store):
    (repo / "astropy/modeling/core.py").unlink()
    put(llm, store, generation_messages(task, traj, repo, 3), "qa_generate_astropy_12907.json", STAGE_GENERATE)
    first = generate_questions(task, traj_path, repo, llm)[0]
    assert first.status == "rejected" and "core.py" in first.reason and "not in the repository" in first.reason


def test_reviewer_can_reject(task, traj_path, traj, llm, store):
    put(llm, store, generation_messages(task, traj, None, 1), "qa_generate_astropy_12907.json", STAGE_GENERATE)
    good = json.loads(fixture_text("qa_generate_astropy_12907.json"))["questions"][0]
    put(llm, store, review_messages(good["question"], good["reference_answer"], good["evidence"]),
        "qa_review_reject.json", STAGE_REVIEW)
    items = generate_questions(task, traj_path, None, llm, max_questions=1)
    assert items[0].status == "rejected" and "reviewer rejected" in items[0].reason
    assert items[0].generator["repo_checked"] is False
    assert all(i.status == "rejected" for i in items[1:]) and "over the limit" in items[1].reason


def test_malformed_generation_is_a_recorded_failure(task, traj_path, traj, llm, store):
    put(llm, store, generation_messages(task, traj, None, 3), "qa_generate_not_json.json", STAGE_GENERATE)
    items = generate_questions(task, traj_path, None, llm)
    assert len(items) == 1 and items[0].status == "rejected" and "not JSON" in items[0].reason


def test_unreadable_gold_patch_is_a_recorded_rejection_before_any_llm_call(task, traj_path, llm):
    bad = dataclasses.replace(task, patch="diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-a\n")
    items = generate_questions(bad, traj_path, None, llm)    # the replay store is empty: a call would raise
    assert [(i.status, i.question_id) for i in items] == [("rejected", f"{IID}::reference-patch-unreadable")]
    assert f"{IID}: gold patch:4: field 'patch': hunk line counts do not match" in items[0].reason


def test_bad_inputs(task, traj_path, llm, tmp_path):
    with pytest.raises(ConfigError):
        generate_questions(task, traj_path, None, llm, max_questions=4)
    bad = tmp_path / "x.traj.json"
    bad.write_text('{"messages": "nope"}')
    with pytest.raises(InputError, match="messages"):
        read_trajectory(bad)


def test_cli_qa_generate(task, traj_path, traj, repo, llm, store, tmp_path, capsys):
    repos = tmp_path / "repos"
    repos.mkdir()
    repo.rename(repos / IID)
    tasks = tmp_path / "tasks.jsonl"
    other = Task(instance_id="no-such-task", source="x", source_revision="", repo="r", base_commit="",
                 original_prompt="p", problem_statement="p")
    tasks.write_text(json.dumps(task.to_dict()) + "\n" + json.dumps(other.to_dict()) + "\n")
    loaded = load_tasks(tasks).tasks[0]          # the prompt as the CLI will see it
    put(llm, store, generation_messages(loaded, traj, repos / IID, 3), "qa_generate_astropy_12907.json",
        STAGE_GENERATE)
    good = json.loads(fixture_text("qa_generate_astropy_12907.json"))["questions"][0]
    put(llm, store, review_messages(good["question"], good["reference_answer"], good["evidence"]),
        "qa_review_accept.json", STAGE_REVIEW)
    out = tmp_path / "pool.jsonl"
    rc = main(["qa", "generate", "--tasks", str(tasks), "--trajectories", str(traj_path.parent), "--repos",
               str(repos), "--out", str(out), "--llm", "replay", "--model", MODEL, "--store", str(store.root)])
    assert rc == 0
    rows = [QAItem.from_dict(json.loads(line)) for line in out.read_text().splitlines()]
    assert [r.status for r in rows] == ["candidate", "rejected", "rejected", "rejected"]
    assert rows[-1].instance_id == "no-such-task" and "no solving trajectory" in rows[-1].reason


def _traj_file(path, *, exit_status="Submitted", submission="diff --git a/x.py b/x.py\n", iid="demo__demo-1"):
    """A minimal hand-written trajectory in mini-swe-agent's layout (not a real run)."""
    data = {"instance_id": iid, "trajectory_format": "mini-swe-agent-1",
            "info": {"exit_status": exit_status, "submission": submission},
            "messages": [{"role": "user", "content": "<pr_description>Fix x.</pr_description>"},
                         {"role": "assistant", "content": "```bash\ncat x.py\n```"}]}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize("kw, resolved, words", [
    ({}, None, ""),
    ({}, True, ""),
    ({"exit_status": "LimitsExceeded"}, None, "did not submit"),
    ({"exit_status": ""}, None, "did not submit"),
    ({"submission": "  \n"}, None, "empty patch"),
    ({}, False, "did not resolve"),
])
def test_only_a_solving_run_counts(tmp_path, kw, resolved, words):
    from builder.qa import solving_problem

    why = solving_problem(read_trajectory(_traj_file(tmp_path / "t.traj.json", **kw)), resolved)
    assert (why == "") if not words else (words in why)


def test_a_non_solving_trajectory_is_skipped_without_an_llm_call(tmp_path, llm):
    """The replay store is empty: any generator call would raise a replay miss."""
    path = _traj_file(tmp_path / "demo__demo-1.traj.json", exit_status="LimitsExceeded")
    task = Task(instance_id="demo__demo-1", source="x", source_revision="", repo="demo/demo", base_commit="",
                original_prompt="Fix x.", problem_statement="Fix x.")
    items = generate_questions(task, path, None, llm)
    assert [(i.status, i.question_id) for i in items] == [("rejected", "demo__demo-1::trajectory-not-solving")]
    assert "LimitsExceeded" in items[0].reason
    assert generate_questions(task, _traj_file(path, submission=""), None, llm)[0].reason.startswith(
        "trajectory-not-solving: the run submitted an empty patch")


def test_results_files_load_in_both_layouts(tmp_path):
    from builder.qa import load_resolved

    a = tmp_path / "a.json"
    a.write_text(json.dumps({"total": 2, "instances": [{"instance_id": "x", "resolved": True},
                                                       {"instance_id": "y", "resolved": False}]}))
    b = tmp_path / "b.json"
    b.write_text(json.dumps({"x": True, "y": False}))
    assert load_resolved(a) == load_resolved(b) == {"x": True, "y": False}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"instances": [{"instance_id": "x", "resolved": "yes"}]}))
    with pytest.raises(InputError, match="bad.json"):
        load_resolved(bad)
    with pytest.raises(InputError, match="not a results file"):
        load_resolved(_traj_file(tmp_path / "t.json"))


def test_the_committed_trajectory_is_a_solving_run(traj):
    """astropy__astropy-12907 is resolved in the run's results file (tests/fixtures/mini-swe-agent/SOURCE.md)."""
    from builder.qa import solving_problem

    assert solving_problem(traj, True) == ""
    assert solving_problem(traj, False) != ""


@pytest.mark.data
def test_every_shared_trajectory_is_a_solving_run(shared_dir):
    """The 371 shared mini-swe-agent runs are the resolved ones of their results file."""
    from builder.qa import load_resolved, solving_problem

    root = shared_dir / "data/mini-swe-agent-trajs-verified"
    resolved = load_resolved(root / "results_summary.json")
    paths = sorted((root / "trajs").glob("*.traj.json.gz"))
    assert len(paths) == 371 and sum(resolved.values()) == 371
    sample = paths[::37]
    assert all(solving_problem(read_trajectory(p), resolved[read_trajectory(p).instance_id]) == "" for p in sample)
