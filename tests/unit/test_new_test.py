"""The ``tests`` answer turn's core (swe_taskflow/turns/new_test.py) and how ``evaluate import`` reads its
verifier's verdict; the verifier itself runs in tests/container/test_new_test_verifier.py. Items and verdicts
here are hand-written."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest

from builder.evaluation.results import read_stress_verdict
from builder.evaluation.scoring import AnswerCase, scorer_for
from swe_taskflow.errors import InputError
from swe_taskflow.turns import new_test
from swe_taskflow.turns.registry import TURNS, recheck, score_answer

HIDDEN = "tests/test_discount.py::TestTotals::test_rejects_bad_discount"
PATCH = ("diff --git a/tests/test_discount.py b/tests/test_discount.py\nnew file mode 100644\n--- /dev/null\n"
         "+++ b/tests/test_discount.py\n@@ -0,0 +1 @@\n+x\n")
ITEM = {"kind": "tests", "question_id": "t-1", "facts": [{"name": "test_file", "value": "tests/test_discount.py"},
                                                        {"name": "failing_test", "value": HIDDEN}]}
GOOD = {"only_tests": True, "gold_applies": True, "fails_before": True, "passes_after": True, "correct": True,
        "files": ["tests/test_new.py"], "tests": ["tests/test_new.py::T::test_a"]}


def test_a_turn_is_correct_only_when_its_tests_fail_before_and_pass_after_with_nothing_else_changed():
    assert score_answer(ITEM, "I added tests/test_new.py", verdict=GOOD).correct
    for part, why in (("only_tests", "outside test files"), ("gold_applies", "does not apply"),
                      ("fails_before", "fails before"), ("passes_after", "do not all pass")):
        got = score_answer(ITEM, "I added tests/test_new.py", verdict={**GOOD, part: False})
        assert (got.correct, got.score) == (False, 0.0) and why in got.details["why"], part
    unchecked = score_answer(ITEM, "I added a test", verdict=None)
    assert not unchecked.correct and unchecked.details["state_checked"] is False


def test_evaluate_import_scores_it_on_the_verifiers_verdict():
    score = scorer_for("tests", {})
    case = AnswerCase("i", 0, "tests", ITEM, "tests/test_new.py checks the discount", verifier=GOOD)
    got = score(case)
    assert got.verdict == "correct" and got.detail["verifier"] == GOOD
    assert score(AnswerCase("i", 0, "tests", ITEM, "done", verifier=None)).verdict == "incorrect"
    assert score(AnswerCase("i", 0, "tests", ITEM, "", verifier=GOOD)).verdict == "unanswered"


def _trial(tmp_path, body: str):
    folder = tmp_path / "steps" / "turn-01-tests" / "verifier"
    folder.mkdir(parents=True)
    (folder / "verdict.json").write_text(body, encoding="utf-8")
    return tmp_path


def test_its_verdict_file_is_read_field_by_field(tmp_path):
    hostile = {**GOOD, "reward": 1.0, "files": ["tests/test_new.py"] * 80, "note": "x" * 10}
    got = read_stress_verdict(_trial(tmp_path, json.dumps(hostile)), "turn-01-tests", "tests")
    assert set(got) == set(GOOD) and len(got["files"]) == 50          # unknown keys dropped, lists cut
    with pytest.raises(InputError, match="fails_before"):
        read_stress_verdict(_trial(tmp_path / "b", json.dumps({**GOOD, "fails_before": None})),
                            "turn-01-tests", "tests")
    missing = {k: v for k, v in GOOD.items() if k != "passes_after"}
    with pytest.raises(InputError, match="passes_after"):
        read_stress_verdict(_trial(tmp_path / "c", json.dumps(missing)), "turn-01-tests", "tests")
    assert read_stress_verdict(tmp_path / "none", "turn-01-tests", "tests") is None
    assert read_stress_verdict(tmp_path, "turn-01-tests", "debug") is None     # the answer verifier judges nothing


@pytest.mark.parametrize("path, test", [
    ("tests/test_new.py", True), ("pkg/tests/helpers.py", True), ("test/unit/a.js", True), ("src/cart_test.go", True),
    ("shop/test_cart.py", True), ("web/src/cart.test.tsx", True), ("lib/a.spec.mjs", True), ("spec/cart_spec.rb", True),
    ("shop/cart.py", False), ("contest/entry.py", False), ("src/latest.go", False), ("README.md", False),
])
def test_which_changed_paths_count_as_test_files(path, test):
    assert bool(re.search(new_test.TEST_PATH_RE, path)) is test


def test_reprove_rechecks_the_reference_against_the_rerun_and_the_source_task():
    task = SimpleNamespace(fail_to_pass=(HIDDEN,), test_patch=PATCH, patch="")
    failing = SimpleNamespace(stdout_excerpt="test_rejects_bad_discount (tests.test_discount.TestTotals."
                                             "test_rejects_bad_discount) ... FAIL\n")
    assert recheck(ITEM, "", result=failing, task=task) == []
    passing = SimpleNamespace(stdout_excerpt=failing.stdout_excerpt.replace("FAIL", "ok"))
    assert "must fail before" in recheck(ITEM, "", result=passing, task=task)[0][0]
    moved = SimpleNamespace(fail_to_pass=(HIDDEN,), test_patch="", patch="")
    assert "not in a file the hidden test patch" in recheck(ITEM, "", task=moved)[0][0]
    gone = SimpleNamespace(fail_to_pass=(), test_patch=PATCH, patch="")
    assert "not a FAIL_TO_PASS test" in recheck(ITEM, "", task=gone)[0][0]
    assert recheck({"kind": "tests", "facts": []}, "")[0][1] == "facts"


def test_its_row_names_its_verifier_and_ships_the_task_test_run():
    row = TURNS["tests"]
    assert row.kind.verifier == "new_test" and row.runs_tests and row.verdict.file == "verdict.json"
    assert row.kind.placement == "before-first-issue" and row.kind.intent == "tests" and not row.kind.stress
    assert row.step_config(ITEM, app_dir="/app", state_path="/s") == {"test_path_re": new_test.TEST_PATH_RE}
