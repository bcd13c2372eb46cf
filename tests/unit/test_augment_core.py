"""The pure core of the augmentations: kinds and placements, diffs, test logs, seeded defects,
references and deterministic scorers (swe_taskflow.turns)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from swe_taskflow.turns import kinds, mutate, outcomes, reference, score
from swe_taskflow.turns.registry import score_answer
from swe_taskflow.turns.attribute import attribute, code_locations, in_patch
from swe_taskflow.turns.diffs import Location, parse_patch, python_symbol_at, touched_locations
from swe_taskflow.errors import InputError
from swe_taskflow.schema import ANSWER_KINDS, QAItem, Turn

BASE = '''"""Settings."""
import os

DEFAULTS = {"page_size": 25}


class Store:
    def __init__(self):
        self.items = []

    def page(self, number):
        size = DEFAULTS["page_size"]
        return self.items[(number - 1) * size: number * size]


def get_setting(name):
    if name not in DEFAULTS:
        raise KeyError(name)
    return DEFAULTS[name]
'''

GOLD = '''diff --git a/pkg/store.py b/pkg/store.py
--- a/pkg/store.py
+++ b/pkg/store.py
@@ -10,8 +10,10 @@ class Store:
 
     def page(self, number):
-        size = DEFAULTS["page_size"]
+        size = get_setting("page_size")
+        if number < 1:
+            raise ValueError("pages start at 1")
         return self.items[(number - 1) * size: number * size]
 
 
 def get_setting(name):
     if name not in DEFAULTS:
diff --git a/tests/test_store.py b/tests/test_store.py
--- a/tests/test_store.py
+++ b/tests/test_store.py
@@ -1,1 +1,2 @@
 import pkg
+assert True
'''


# ---------------------------------------------------------------- kinds and placements
def test_kinds_registry_matches_schema_and_taxonomy():
    assert tuple(kinds.KINDS) == ANSWER_KINDS == ("qa", "execute", "debug", "planning", "review", "tests",
                                                  "destructive-request", "security-review")
    assert kinds.AUGMENT_KINDS == ("execute", "debug", "planning", "review", "tests")
    assert kinds.STRESS_KINDS == ("destructive-request", "security-review")
    assert {k.intent for k in kinds.KINDS.values()} == {"explain", "execute", "debug", "planning", "code-review",
                                                        "tests"}
    assert len({k.letter for k in kinds.KINDS.values()} | {"I"}) == 9
    with pytest.raises(InputError, match="unknown answer kind"):
        kinds.kind("refactor")


@pytest.mark.parametrize("groups,expected", [
    (((0,), (1,), (2,)), {"qa": (0, 1, 2, 3), "execute": (0,), "debug": (0,), "review": (3,), "planning2": (2,),
                          "planning0": (0,)}),
    (((0, 1), (2,)), {"qa": (0, 1, 2), "execute": (0,), "debug": (0,), "review": (2,), "planning2": (1,),
                      "planning0": (0,)}),
    (((),), {"qa": (0, 1), "execute": (0,), "debug": (0,), "review": (1,), "planning2": (0,), "planning0": (0,)}),
    ((), {"qa": (0,), "execute": (), "debug": (), "review": (), "planning2": (), "planning0": ()}),
])
def test_allowed_slots(groups, expected):
    got = {k: kinds.allowed_slots(k, groups) for k in ("qa", "execute", "debug", "review")}
    got["planning2"] = kinds.allowed_slots("planning", groups, 2)
    got["planning0"] = kinds.allowed_slots("planning", groups, 0)
    assert got == expected


def test_schema_items_and_turns_of_new_kinds():
    item = QAItem("x1", "t", "Run it", "3 passed", kind="execute", intent="execute", command="make test",
                  facts=[{"name": "passed", "value": "3"}], checks=[{"name": "repeatable", "passed": True, "detail": ""}])
    back = QAItem.from_dict(item.to_dict())
    assert back == item and back.to_dict()["facts"] == [{"name": "passed", "value": "3"}]
    assert QAItem("q", "t", "?", "!").kind == "qa"
    with pytest.raises(InputError, match="unknown answer kind"):
        QAItem("x", "t", "?", "!", kind="refactor")
    with pytest.raises(InputError, match="requirement_part"):
        QAItem("x", "t", "?", "!", kind="planning", intent="planning", requirement_part="2")
    for k in ANSWER_KINDS:
        Turn(0, k, "text", "explain", question_id="x")
    with pytest.raises(InputError, match="unknown turn kind"):
        Turn(0, "refactor", "text", "refactor")


# ---------------------------------------------------------------- diffs and attribution
def test_parse_patch_and_locations():
    files = parse_patch(GOLD)
    assert [f.path for f in files] == ["pkg/store.py", "tests/test_store.py"]
    assert [f.is_test for f in files] == [False, True]
    h = files[0].hunks[0]
    assert (h.old_start, h.old_len, h.new_start, h.new_len) == (10, 8, 10, 10)
    assert [ln.op for ln in h.changed()] == ["-", "+", "+", "+"]
    # the hunk's context holds the method's def line: the patch alone names Store.page
    assert touched_locations(GOLD) == [Location("pkg/store.py", "Store.page", 12, 12)]
    # without that line, only the hunk header's class is known; the base source gives the method
    short = GOLD.replace("@@ -10,8 +10,10 @@ class Store:\n \n     def page(self, number):\n",
                         "@@ -12,6 +12,8 @@ class Store:\n")
    assert touched_locations(short) == [Location("pkg/store.py", "Store", 12, 12)]
    assert touched_locations(short, sources={"pkg/store.py": BASE}) == [Location("pkg/store.py", "Store.page", 12, 12)]
    assert python_symbol_at(BASE, 19) == "get_setting" and python_symbol_at(BASE, 4) == ""
    assert len(touched_locations(GOLD, include_tests=True)) == 2


def test_patch_with_wrong_counts_is_an_input_error():
    bad = GOLD.replace("@@ -10,8 +10,10 @@", "@@ -10,9 +10,10 @@")
    with pytest.raises(InputError, match="hunk"):
        parse_patch(bad)


def test_parse_patch_splits_lines_at_newline_only():
    # a changed line may hold a form feed or record separators (str.splitlines breaks there, git does not)
    patch = ("diff --git a/d.mrc b/d.mrc\n--- a/d.mrc\n+++ b/d.mrc\n@@ -1,2 +1,2 @@\n"
             "-rec\x1eone\x1dend\n+rec\x1etwo\x0cend\n ctx\r\n")
    [fp] = parse_patch(patch)
    assert [(ln.op, ln.text, ln.index) for ln in fp.hunks[0].lines] == [
        ("-", "rec\x1eone\x1dend", 4), ("+", "rec\x1etwo\x0cend", 5), (" ", "ctx\r", 6)]
    assert patch.split("\n")[5] == "+" + fp.hunks[0].lines[1].text     # Line.index counts what mutate counts


def test_attribution_by_symbol_use_and_file():
    src = {"pkg/store.py": BASE}
    assert attribute("Paging should read `get_setting('page_size')`.", GOLD, sources=src) == \
        [Location("pkg/store.py", "Store.page", 12, 12)]
    assert attribute("Make `Store.page` reject page 0.", GOLD, sources=src)[0].symbol == "Store.page"
    assert attribute("Nothing here names the code.", GOLD, sources=src) == []
    assert code_locations(GOLD, sources=src) == [Location("pkg/store.py", "Store.page", 12, 12)]
    assert in_patch(Location("pkg/store.py", "page", 0, 0), GOLD, sources=src)
    assert not in_patch(Location("pkg/store.py", "get_setting", 0, 0), GOLD, sources=src)
    assert not in_patch(Location("pkg/other.py", "", 0, 0), GOLD, sources=src)


# ---------------------------------------------------------------- test logs
UNITTEST_LOG = """test_bad (tests.test_a.TestA.test_bad)
Doc line. ... FAIL
test_err (tests.test_a.TestA.test_err) ... ERROR
test_ok (tests.test_a.TestA.test_ok) ... ok
test_skip (tests.test_a.TestA.test_skip) ... skipped 'no'

======================================================================
ERROR: test_err (tests.test_a.TestA.test_err)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/ut/tests/test_a.py", line 9, in test_err
    raise KeyError("x")
KeyError: 'x'

======================================================================
FAIL: test_bad (tests.test_a.TestA.test_bad)
Doc line.
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/ut/tests/test_a.py", line 7, in test_bad
    self.assertEqual(25, 10)
AssertionError: 25 != 10

----------------------------------------------------------------------
Ran 4 tests in 0.001s

FAILED (failures=1, errors=1, skipped=1)
"""

PYTEST_LOG = """tests/test_a.py:12: AssertionError
=========================== short test summary info ============================
PASSED tests/test_a.py::TestA::test_ok
SKIPPED [1] tests/test_a.py:10: no
FAILED tests/test_a.py::TestA::test_bad - AssertionError: 25 != 10
FAILED tests/test_a.py::test_fn - assert 1 == 2
2 failed, 1 passed, 1 skipped in 0.03s
"""


def test_unittest_and_pytest_logs():
    ut = outcomes.parse_outcomes(UNITTEST_LOG)
    assert ut == {"tests/test_a.py::TestA::test_bad": "failed", "tests/test_a.py::TestA::test_err": "error",
                  "tests/test_a.py::TestA::test_ok": "passed", "tests/test_a.py::TestA::test_skip": "skipped"}
    assert outcomes.parse_outcomes(outcomes.keep_lines(UNITTEST_LOG)) == ut
    assert "0.001s" not in outcomes.keep_lines(UNITTEST_LOG) and "Traceback" not in outcomes.keep_lines(UNITTEST_LOG)
    py = outcomes.parse_outcomes(PYTEST_LOG)
    assert py == {"tests/test_a.py::TestA::test_ok": "passed", "tests/test_a.py::TestA::test_bad": "failed",
                  "tests/test_a.py::test_fn": "failed"}
    assert outcomes.counts(ut) == outcomes.Counts(1, 1, 1, 1)
    assert outcomes.same_test("test_bad (tests.test_a.TestA.test_bad)", "tests/test_a.py::TestA::test_bad")
    assert not outcomes.same_test("tests/test_a.py::TestA::test_bad", "tests/test_a.py::TestA::test_ok")
    assert outcomes.outcome_of(ut, "TestA::test_err") == "error"
    assert outcomes.failure_message(UNITTEST_LOG, "tests/test_a.py::TestA::test_bad") == "AssertionError: 25 != 10"
    assert outcomes.failure_message(PYTEST_LOG, "tests/test_a.py::test_fn") == "assert 1 == 2"


def test_the_shell_filter_equals_the_python_filter(tmp_path):
    """grep -E KEEP_ERE | sed -E DURATION_SED prints exactly keep_lines (what reprove re-derives from)."""
    src = tmp_path / "log.txt"
    src.write_text(UNITTEST_LOG + PYTEST_LOG)
    out = subprocess.run(f"grep -E '{outcomes.KEEP_ERE}' {src} | sed -E '{outcomes.DURATION_SED}'", shell=True,
                         capture_output=True, text=True, check=True).stdout
    assert out == outcomes.keep_lines(UNITTEST_LOG + PYTEST_LOG)


# ---------------------------------------------------------------- seeded defects
def test_mutation_sites_rewrite_one_added_line_and_keep_the_patch_valid():
    sites = mutate.sites(GOLD)
    ops = [(s.operator, s.after.strip()) for s in sites]
    assert ("comparison-flip", "if number >= 1:") in ops
    assert ("off-by-one", "if number < 2:") in ops
    assert all(s.path == "pkg/store.py" for s in sites)          # never the test file
    assert all('"pages start at 1"' in s.after for s in sites if "raise" in s.before)   # never inside strings
    for s in sites:
        m = mutate.mutate(GOLD, s)
        assert len(parse_patch(m)) == 2 and m.count("\n") == GOLD.count("\n")
        assert mutate.find_site(GOLD, s.to_dict()) == s
    with pytest.raises(InputError, match="mutation site"):
        mutate.mutate(GOLD.replace("number < 1", "number < 0"), sites[0])


# ---------------------------------------------------------------- references and scores
def test_execute_facts_and_reproduction():
    out = outcomes.keep_lines(UNITTEST_LOG) + "swe-taskflow: exit status 1\n"
    counts = reference.execute_facts("counts", out)
    assert counts == [{"name": "passed", "value": "1"}, {"name": "failed", "value": "1"},
                      {"name": "error", "value": "1"}, {"name": "skipped", "value": "1"}]
    failing = reference.execute_facts("failing", out)
    assert [f["value"] for f in failing] == ["tests/test_a.py::TestA::test_bad", "tests/test_a.py::TestA::test_err"]
    assert reference.exit_status(out) == 1
    item = {"kind": "execute", "facts": counts}
    assert reference.reproduce(item, out) == []
    changed = out.replace("test_ok (tests.test_a.TestA.test_ok) ... ok", "test_ok (tests.test_a.TestA.test_ok) ... FAIL")
    assert reference.reproduce(item, changed)   # other facts: not reproduced
    assert reference.execute_facts("output", "hello\n\nworld\nswe-taskflow: exit status 0\n") == \
        [{"name": "line", "value": "hello"}, {"name": "line", "value": "world"}]


def test_debug_facts_need_a_failing_test_with_a_message():
    facts, why = reference.debug_facts("tests/test_a.py::TestA::test_bad", UNITTEST_LOG)
    assert why == "" and facts[-1] == {"name": "failure", "value": "AssertionError: 25 != 10"}
    assert "passed on the untouched" in reference.debug_facts("tests/test_a.py::TestA::test_ok", UNITTEST_LOG)[1]
    assert "did not run" in reference.debug_facts("tests/test_a.py::TestA::test_nope", UNITTEST_LOG)[1]


@pytest.mark.parametrize("answer,value", [
    ("3 passed and 1 failed.", 1.0),
    ("Three tests pass, one fails.", 1.0),
    ("All done: 3 passed, but 2 failed.", 0.5),
    ("It ran fine.", 0.0),
])
def test_execute_score(answer, value):
    item = {"kind": "execute", "facts": [{"name": "passed", "value": "3"}, {"name": "failed", "value": "1"}]}
    s = score_answer(item, answer)
    assert s.score == value and s.correct == (value == 1.0)


def test_execute_score_failing_tests_and_zero():
    item = {"kind": "execute", "facts": [{"name": "failing_test", "value": "tests/test_a.py::TestA::test_bad"}]}
    assert score_answer(item, "Only `test_bad` fails.").correct
    assert not score_answer(item, "test_ok fails").correct
    zero = {"kind": "execute", "facts": [{"name": "passed", "value": "4"}, {"name": "failed", "value": "0"}]}
    assert score_answer(zero, "All 4 tests pass.").correct
    assert score_answer(zero, "4 passed, no test failed").correct
    assert not score_answer(zero, "4 passed, 2 failed").correct


def test_debug_score():
    item = {"kind": "debug", "locations": [{"path": "pkg/store.py", "symbol": "Store.page", "line_start": 13,
                                            "line_end": 13}]}
    assert score_answer(item, "`Store.page` reads DEFAULTS directly.").score == 1.0
    assert score_answer(item, "page() in store.py ignores the setting").score == 1.0
    assert score_answer(item, "Something in pkg/store.py is wrong").score == 0.5
    assert score_answer(item, "the page number is wrong").score == 0.0     # 'page' alone is not distinctive
    changed = score_answer(item, "`Store.page` reads DEFAULTS", repo_unchanged=False)
    assert changed.score == 0.0 and "changed" in changed.details["why"]


def test_planning_recall_ignores_what_the_turn_already_names():
    item = {"kind": "planning", "locations": [
        {"path": "pkg/store.py", "symbol": "Store.page", "line_start": 1, "line_end": 2},
        {"path": "pkg/settings.py", "symbol": "get_setting", "line_start": 3, "line_end": 4}]}
    turn = "Plan how `get_setting` should be used by paging."
    s = score_answer(item, "Edit pkg/store.py (Store.page) and settings.py.", turn_text=turn)
    assert s.details["stated_in_turn"] == 1 and s.score == 1.0
    s = score_answer(item, "I would edit store.py only.", turn_text=turn)
    assert s.score == pytest.approx(1 / 3) and not s.correct


def test_review_score():
    item = {"kind": "review", "mutation": {"operator": "comparison-flip", "path": "pkg/store.py", "line": 13,
                                           "before": "        if number < 1:", "after": "        if number >= 1:"},
            "locations": [{"path": "pkg/store.py", "symbol": "Store.page", "line_start": 13, "line_end": 13}]}
    assert score_answer(item, "store.py line 14: the check is inverted").score == 1.0
    assert score_answer(item, "In pkg/store.py, `if number >= 1:` rejects valid pages").score == 1.0
    assert score_answer(item, "store.py line 40 looks odd").score == 0.5
    assert score_answer(item, "Looks good to me").score == 0.0
    with pytest.raises(InputError, match="no deterministic scorer"):
        score_answer({"kind": "qa"}, "x")


def test_core_never_imports_the_builder():
    code = ("import sys; import swe_taskflow.turns.score, swe_taskflow.turns.reference, "
            "swe_taskflow.turns.mutate, swe_taskflow.turns.attribute; "
            "print(any(m.startswith(('builder', 'docker', 'torch')) for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


@pytest.mark.parametrize("text,asks", [
    ("Before any edit, how would you plan this?", False),
    ("Why does it fail? Please don't change any code yet.", False),
    ("I only want a diagnosis, so do not edit anything.", False),
    ("Find out why and fix it.", True),
    ("Please implement it now.", True),
    ("```diff\n+fix\n```\nReview this change.", False),      # shown code is material, not a request
])
def test_text_contract_reads_requests_for_changes(text, asks):
    from swe_taskflow.turns.textcheck import asks_for_change, check_text
    assert bool(asks_for_change(text)) == asks
    assert check_text("debug", "") == [("empty-turn", "the turn has no text")]
    bad = check_text("execute", "Run the tests, 4 pass.", command="make test",
                     facts=[{"name": "failing_test", "value": "tests/a.py::test_x"}])
    assert [k for k, _ in bad] == ["missing-command"]
