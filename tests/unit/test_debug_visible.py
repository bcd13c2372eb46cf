"""A debug turn asks about a test; the agent can see it fail only when the hidden test patch leaves the test's
file alone (issue 36): ``swe_taskflow.turns.visible`` says which, the build proposes debug turns only for such
tests, and ``export harbor`` warns per turn of an older release."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from builder.evaluation.export import unanswerable_debug_turns
from swe_taskflow.turns.visible import hidden_test_file, patch_files
from swe_taskflow.turns.visible import test_file as file_of_test

PATCH = """diff --git a/tests/test_persistence.py b/tests/test_persistence.py
new file mode 100644
--- /dev/null
+++ b/tests/test_persistence.py
@@ -0,0 +1,3 @@
+class CliTests:
+    def test_tickets_survive_between_runs(self):
+        assert False
diff --git a/internal/config/config_test.go b/internal/config/config_test.go
--- a/internal/config/config_test.go
+++ b/internal/config/config_test.go
@@ -10,6 +10,7 @@ func TestLoad(t *testing.T) {
         want: 1,
+        other: 2,
diff --git a/tests/auth_tests/test_validators.py b/tests/auth_tests/test_validators.py
--- a/tests/auth_tests/test_validators.py
+++ b/tests/auth_tests/test_validators.py
@@ -1 +1 @@
-x = 1
+x = 2
"""


def test_the_files_a_patch_touches():
    assert patch_files(PATCH) == {"tests/test_persistence.py", "internal/config/config_test.go",
                                  "tests/auth_tests/test_validators.py"}
    assert file_of_test("tests/x.py::T::t") == "tests/x.py"
    assert file_of_test("test/user.js | User should x") == "test/user.js"
    assert file_of_test("TestLoad/sub") is None


@pytest.mark.parametrize("test, hidden", [
    ("tests/test_persistence.py::CliTests::test_tickets_survive_between_runs", "tests/test_persistence.py"),
    ("tests/test_cli.py::CliTests::test_list", None),                       # a file the patch leaves alone
    ("TestLoad/empty_config", "internal/config/config_test.go"),           # Go: named in a hunk header
    ("TestOther", None),
    ("test_ascii (auth_tests.test_validators.UsernameValidatorsTests)", "tests/auth_tests/test_validators.py"),
    ("test_ascii (admin_tests.test_x.T)", None),
])
def test_which_debug_tests_the_hidden_test_patch_hides(test, hidden):
    assert hidden_test_file(test, PATCH) == hidden


def test_export_warns_once_per_unanswerable_debug_turn():
    row = {"instance_id": "t-1", "turns": [
        {"turn_index": 0, "kind": "debug", "question_id": "d0"}, {"turn_index": 1, "kind": "issue"},
        {"turn_index": 2, "kind": "debug", "question_id": "d1"}, {"turn_index": 3, "kind": "qa", "question_id": "q"}],
        "questions": [{"question_id": "d0", "facts": [{"name": "test", "value": "tests/test_persistence.py::C::t"}]},
                      {"question_id": "d1", "facts": [{"name": "test", "value": "tests/test_cli.py::C::t"}]},
                      {"question_id": "q", "facts": []}]}
    (line,) = unanswerable_debug_turns(row, SimpleNamespace(test_patch=PATCH))
    assert line.startswith("t-1 turn 1: ") and "tests/test_persistence.py" in line and "cannot see" in line
    assert unanswerable_debug_turns(row, SimpleNamespace(test_patch="")) == []


def test_the_count_tool(tmp_path):
    import json
    from tools.debug_visibility import count
    rows = [{"fail_to_pass": json.dumps(["tests/test_persistence.py::C::t", "tests/test_cli.py::C::t"]),
             "test_patch": PATCH}, {"FAIL_TO_PASS": ["TestLoad"], "test_patch": ""}]
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert count(str(path)) == (1, 2, 2, 1, 1)


def _task(fail_to_pass):
    from swe_taskflow.schema import Task
    return Task(instance_id="t-1", source="hand-written", source_revision="", repo="o/r", base_commit="",
                original_prompt="x", fail_to_pass=tuple(fail_to_pass), test_patch=PATCH, test_command="python3 -m unittest")


def test_debug_is_proposed_only_for_tests_the_agent_can_see_fail(tmp_path):
    from builder.turns.checks import TaskContext
    from builder.turns.propose import ProposeConfig, propose
    from builder.turns.registry import PROPOSERS
    hidden, seen = "tests/test_persistence.py::CliTests::test_tickets_survive_between_runs", "tests/test_cli.py::C::t"
    config = ProposeConfig(kinds=("debug",))
    specs, why = propose(TaskContext(_task([hidden, seen]), repo=tmp_path, sandbox=object()), config, PROPOSERS)
    assert [s.test for s in specs] == [seen] and why == {}
    specs, why = propose(TaskContext(_task([hidden]), repo=tmp_path, sandbox=object()), config, PROPOSERS)
    assert specs == [] and "the agent could not see it fail" in why["debug"]


def test_a_hand_written_debug_spec_about_a_hidden_test_is_rejected_before_any_run(tmp_path):
    from builder.turns.checks import AugmentSpec, CheckLog, Rejected, TaskContext, check_debug
    hidden = "tests/test_persistence.py::CliTests::test_tickets_survive_between_runs"
    rec = CheckLog()
    with pytest.raises(Rejected) as err:     # no sandbox is needed: the check stops first
        check_debug(AugmentSpec("h", "t-1", "debug", test=hidden), TaskContext(_task([hidden])), None, rec)
    assert err.value.check == "visible-in-checkout" and "tests/test_persistence.py" in err.value.detail
