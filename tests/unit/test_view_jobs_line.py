"""`evaluate view-jobs` counts its trials in words (issue 36: "wrote 1 trials")."""

from __future__ import annotations

import builder.evaluation.view as view
from builder.cli import main


def test_view_jobs_says_1_trial(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(view, "write_view", lambda release, out: ["one"])
    (tmp_path / "rel").mkdir()
    assert main(["evaluate", "view-jobs", str(tmp_path / "rel"), "--out", str(tmp_path / "v")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("wrote 1 trial to ") and "open the folder with: harbor view --jobs" in out, out
