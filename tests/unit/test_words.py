"""Counts in prose agree in number (issue 36: "1 tasks", "1 sessions")."""

from __future__ import annotations

from swe_taskflow.words import counted, plural


def test_one_is_singular_and_every_other_count_plural():
    assert counted(1, "task") == "1 task" and counted(0, "task") == "0 tasks" and counted(2, "session") == "2 sessions"
    assert counted(1, "trajectory") == "1 trajectory" and counted(3, "trajectory") == "3 trajectories"
    assert counted(1, "empty session") == "1 empty session" and plural("step", 7) == "steps"


def test_the_cli_says_1_task(tmp_path, capsys):
    """``swe-taskflow flow plot`` titles its picture with the session count."""
    import json

    from builder.cli import main

    sessions = tmp_path / "s.jsonl"
    sessions.write_text(json.dumps({"session_id": "a", "messages": [{"text": "fix it", "intent": "bug-fix"}]}) + "\n")
    code = main(["flow", "plot", str(sessions), "--out", str(tmp_path / "p")])
    assert code == 0, capsys.readouterr().err
    page = next((tmp_path / "p").glob("*.html")).read_text()
    assert "(1 session)" in page and "(1 sessions)" not in page
