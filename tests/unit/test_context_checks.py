"""Evaluation-context checks on real SWE-Bench Pro rows (the example's committed tasks, MIT) and their
structural splits, and on corrupted copies of those splits."""

from __future__ import annotations

from pathlib import Path

import pytest

from builder.split import get_splitter
from builder.sources import load_tasks
from swe_taskflow.context_checks import check_context, words_of_test, words
from swe_taskflow.errors import ConfigError
from swe_taskflow.split_checks import sentences

TASKS = Path(__file__).resolve().parents[2] / "builder" / "data" / "example" / "tasks.jsonl"
BACKGROUND = ("Some background: the project is maintained by a small team, and this area of the code base was "
              "last touched two releases ago.")


@pytest.fixture(scope="module")
def splits():
    sp = get_splitter("structural")
    out = [(t, sp.split(t)) for t in load_tasks(TASKS).tasks]
    return [(t, r) for t, r in out if r.status == "ok"]


def test_verbatim_structural_splits_pass_and_every_test_gets_one_checkpoint(splits):
    assert len(splits) == len(load_tasks(TASKS).tasks) == 17   # every example task splits
    for task, res in splits:
        rep = check_context(task.original_prompt, res.parts, task.fail_to_pass)
        assert rep.ok, (task.instance_id, rep.violations)
        placed = [t for turn in rep.tests_by_turn for t in turn]
        assert sorted(placed + list(rep.unattributed)) == sorted(set(task.fail_to_pass))


def test_test_identifiers_lose_their_test_vocabulary():
    assert words_of_test("test/units/plugins/filter/test_mathstuff.py::TestMax::test_max") == {
        "plugin", "filter", "mathstuff", "max"}
    assert words_of_test("test/user.js | User hideEmail/hideFullname should hide email and fullname") >= {
        "user", "hide", "email", "fullname"}
    assert words_of_test("tests/unit/misc/test_elf.py::test_find_versions[\\x00QtWebEngine/6.4.0]") == {
        "misc", "elf", "find", "version"}
    assert "core" in words_of_test("TestCore") and words("getConfirmObjs") == {"get", "confirm", "objs"}


def test_a_turn_with_nothing_to_do_is_not_actionable(splits):
    task, res = splits[2]
    bad = check_context(task.original_prompt, [res.parts[0], res.parts[1], BACKGROUND], task.fail_to_pass)
    assert [v.kind for v in bad.violations if v.kind == "no-request-turn"] == ["no-request-turn"]
    assert "turn 3" in bad.violations[0].detail
    short = check_context(task.original_prompt, ["Hi there.", res.parts[1], res.parts[2]], task.fail_to_pass)
    assert any(v.kind == "no-request-turn" and "turn 1" in v.detail for v in short.violations)
    # a requirement restated as a plain sentence (no modal, no imperative) still counts as a request
    req = next(s for s in sentences(res.parts[2]) if len(s.split()) > 6)
    plain = req.replace("must", "will").replace("should", "will")
    ok = check_context(task.original_prompt, [res.parts[0], res.parts[1], plain], task.fail_to_pass, mode="off")
    assert ok.ok


def test_a_split_that_drops_what_a_test_checks_loses_that_test(splits):
    hits = 0
    for task, res in splits:
        for test in task.fail_to_pass:
            tw = words_of_test(test)
            cut = [" ".join(s for s in sentences(p) if not (words(s) & tw)) or BACKGROUND for p in res.parts]
            rep = check_context(task.original_prompt, cut, [test])
            if tw & words(task.original_prompt):
                assert any(v.kind == "lost-test" for v in rep.violations), (task.instance_id, test)
                hits += 1
            else:
                assert not any(v.kind == "lost-test" for v in rep.violations)
            break
    assert hits >= 12       # the check is exercised on most of the 16 real tasks


def test_strict_mode_fails_tests_no_turn_names(splits):
    navidrome = next((t, r) for t, r in splits if t.fail_to_pass == ("TestPersistence",))
    task, res = navidrome
    on = check_context(task.original_prompt, res.parts, task.fail_to_pass)
    strict = check_context(task.original_prompt, res.parts, task.fail_to_pass, mode="strict")
    assert on.ok and on.unattributed == ("TestPersistence",) and on.untraceable_in_issue == ("TestPersistence",)
    assert [v.kind for v in strict.violations] == ["unattributed-test"]
    assert check_context(task.original_prompt, [BACKGROUND] * 3, task.fail_to_pass, mode="off").ok
    with pytest.raises(ConfigError, match="context-check mode"):
        check_context(task.original_prompt, res.parts, task.fail_to_pass, mode="lenient")


def test_checkpoint_is_the_turn_that_names_the_test_best():
    issue = "The parser crashes.\n\nRequirements:\n- Add `parse_header` to the reader.\n- Add `emit_footer` to the writer."
    turns = ["The parser crashes on empty files.", "Add `parse_header` to the reader.", "Add `emit_footer` to the writer."]
    rep = check_context(issue, turns, ["tests/test_io.py::test_emit_footer", "tests/test_io.py::test_parse_header"])
    assert rep.tests_by_turn == ((), ("tests/test_io.py::test_parse_header",), ("tests/test_io.py::test_emit_footer",))


def test_attribution_does_not_depend_on_the_hash_seed():
    """Ties between turns are broken by turn order, never by set iteration order (PYTHONHASHSEED)."""
    import json
    import os
    import subprocess
    import sys

    code = ("import json, sys; from builder.split import get_splitter; from builder.sources import load_tasks; "
            "from swe_taskflow.context_checks import check_context; sp = get_splitter('structural'); "
            f"out = [check_context(t.original_prompt, r.parts, t.fail_to_pass).to_dict() for t in load_tasks({str(TASKS)!r}).tasks "
            "for r in [sp.split(t)] if r.status == 'ok']; print(json.dumps(out))")
    root = Path(__file__).resolve().parents[2]
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root,
                           env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(root)}).stdout
            for seed in ("1", "2")]
    assert runs[0] == runs[1] and json.loads(runs[0])
