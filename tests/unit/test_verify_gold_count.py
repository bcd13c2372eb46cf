"""`verify --reprove --tasks` says how many gold-patch checks ran, passed and failed (issue 36).

Before, its summary was the line printed without ``--tasks``: an auditor could not tell whether any
reference had been compared with a gold patch (a task missing from ``--tasks`` was skipped silently).
"""

from __future__ import annotations

from types import SimpleNamespace

from swe_taskflow.verify import VerifyReport, reprove_rows

F2P = "tests/test_persistence.py::CliTests::test_module_runs_as_a_program"


def _debug(qid: str, test: str) -> dict:
    """A debug item with no proof script (nothing re-runs): only its gold-patch check applies."""
    return {"question_id": qid, "kind": "debug", "proof_script": "", "proof_report": None,
            "facts": [{"name": "test", "value": test}], "locations": []}


def _rows(instance: str = "t1") -> dict:
    execute = {"question_id": "q4", "kind": "execute", "proof_script": "", "proof_report": None, "facts": [],
               "locations": []}   # no location: nothing of it is compared with a gold patch
    return {"s": [{"instance_id": instance, "repo": "o/t1", "turns": [],
                   "questions": [_debug("q1", F2P), _debug("q2", "tests/test_x.py::test_not_failing"), execute]},
                  {"instance_id": "t2", "repo": "o/t2", "turns": [], "questions": [_debug("q3", F2P)]}]}


def test_reprove_with_tasks_counts_the_gold_patch_checks(tmp_path):
    task = SimpleNamespace(instance_id="t1", patch="diff --git a/x.py b/x.py\n", fail_to_pass=[F2P])
    report = VerifyReport(root=str(tmp_path))
    reprove_rows(_rows(), report, repos_dir=tmp_path, run_proof=lambda *a, **k: None, tasks={"t1": task})
    assert (report.gold_checked, report.gold_failed, report.gold_no_task) == (2, 1, 1)
    assert [e.field for e in report.errors] == ["questions[q2].facts"] and report.rechecked == 4
    line = report.gold_summary()
    assert line.startswith("2 gold-patch checks ran (1 passed, 1 failed)"), line
    assert "1 item not compared (no task with a gold patch in --tasks)" in line
    assert line in report.table()


def test_reprove_without_tasks_prints_no_gold_line(tmp_path):
    report = VerifyReport(root=str(tmp_path))
    reprove_rows(_rows(), report, repos_dir=tmp_path, run_proof=lambda *a, **k: None)
    assert report.gold_checked is None and report.gold_summary() == "" and "gold" not in report.table()
    assert report.errors == [] and report.rechecked == 4


def test_cli_verify_reprove_tasks_prints_the_gold_patch_checks(tmp_path, monkeypatch, capsys):
    """The CLI line, with the example's real tasks file (gold patches) and the real runner (nothing re-runs)."""
    import swe_taskflow.verify as verify
    from builder.cli import main
    from tests.support.example_release import INSTANCE, TASKS

    debugged = [F2P]

    def fake_verify_release(path, *, reprove, repos_dir, run_proof, tasks, **kw):
        report = VerifyReport(root=str(path))
        assert reprove and run_proof is not None
        rows = {"s": [{"instance_id": INSTANCE, "repo": "swe-taskflow/ticketdesk", "turns": [],
                       "questions": [_debug("q1", debugged[0])]}]}
        reprove_rows(rows, report, repos_dir=repos_dir, run_proof=run_proof, tasks=tasks)
        return report

    monkeypatch.setattr(verify, "verify_release", fake_verify_release)
    (tmp_path / "rel").mkdir()
    (tmp_path / "repos").mkdir()
    rc = main(["verify", str(tmp_path / "rel"), "--reprove", "--repos", str(tmp_path / "repos"), "--tasks", str(TASKS)])
    out = capsys.readouterr().out
    assert rc == 0 and "1 gold-patch check ran (1 passed, 0 failed)" in out, out
    rc = main(["verify", str(tmp_path / "rel"), "--reprove", "--repos", str(tmp_path / "repos")])
    assert rc == 0 and "gold-patch" not in capsys.readouterr().out
    debugged[0] = "tests/test_store.py::CloseTests::test_close_sets_status_and_notifies"   # passes before the patch
    rc = main(["verify", str(tmp_path / "rel"), "--reprove", "--repos", str(tmp_path / "repos"), "--tasks", str(TASKS)])
    err = capsys.readouterr().err
    assert rc == 1 and "1 gold-patch check ran (0 passed, 1 failed)" in err and "not a FAIL_TO_PASS test" in err, err


def test_every_kind_says_whether_its_recheck_reads_the_gold_patch():
    from swe_taskflow.turns.registry import TURNS, uses_gold_patch

    assert {k: t.gold for k, t in TURNS.items()} == {
        "qa": "never", "execute": "locations", "debug": "always", "planning": "always", "review": "always",
        "tests": "never", "destructive-request": "never", "security-review": "always"}
    assert all(t.recheck is not None for t in TURNS.values() if t.gold != "never")
    assert not uses_gold_patch({"kind": "execute", "locations": []})
    assert uses_gold_patch({"kind": "execute", "locations": [{"path": "a.py", "symbol": "f"}]})
