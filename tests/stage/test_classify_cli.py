"""`swe-taskflow classify` and `swe-taskflow classify agreement` end to end (hand-written sessions)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.tiny_lm import build_tiny_lm

from builder.cli import main
from swe_taskflow.taxonomy import INTENTS

# provenance: hand-written for this test
SESSIONS = [
    {"session_id": "s1", "messages": [{"text": "add a logout button to the header"}, {"text": "run the tests"},
                                      {"text": "thanks!"}]},
    {"session_id": "s2", "user_messages": [{"index": 0, "text": "hi"},
                                           {"index": 1, "text": "KeyError: 'id'\n  File \"a.py\", line 3, in f"}]},
    {"session_id": "s3", "messages": []},
]


@pytest.fixture()
def sessions(tmp_path) -> Path:
    p = tmp_path / "in.jsonl"
    p.write_text("".join(json.dumps(s) + "\n" for s in SESSIONS), encoding="utf-8")
    return p


def _read(p: Path) -> list[dict]:
    return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines()]


def test_classify_then_agreement(sessions, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SWE_TASKFLOW_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "emb.jsonl"
    assert main(["classify", str(sessions), "--out", str(out)]) == 0
    rows = _read(out)
    assert [r["session_id"] for r in rows] == ["s1", "s2"]  # the empty session is reported, not written
    assert "s3" in capsys.readouterr().err
    msgs = [m for r in rows for m in r["messages"]]
    assert len(msgs) == 5 and all(m["intent"] in INTENTS and 0 < m["confidence"] <= 1 for m in msgs)
    assert [m["intent"] for m in msgs] == ["new-feature", "execute", "other", "greeting", "bug-fix"]
    assert list((tmp_path / "cache" / "labels").iterdir())  # cached for the next run

    model = build_tiny_lm(tmp_path / "tiny")
    llm_out = tmp_path / "llm.jsonl"
    assert main(["classify", str(sessions), "--out", str(llm_out), "--classifier", str(model),
                 "--device", "cpu", "--batch-size", "2"]) == 0
    capsys.readouterr()
    report = tmp_path / "agree.json"
    assert main(["classify", "agreement", str(out), str(llm_out), str(out), "--json", str(report)]) == 0
    text = capsys.readouterr().out
    assert "kappa" in text and "confusion" in text
    doc = json.loads(report.read_text())
    assert doc["n_messages"] == 5 and len(doc["pairs"]) == 3
    assert doc["pairs"][1]["exact"] == 1.0  # a file against itself


def test_errors_are_one_line(sessions, tmp_path, capsys):
    assert main(["classify", str(sessions)]) == 2
    assert "--out" in capsys.readouterr().err
    assert main(["classify", str(sessions), "--out", str(tmp_path / "o.jsonl"), "--classifier", "nope"]) == 2
    assert "known: embedded" in capsys.readouterr().err
    assert main(["classify", "agreement", str(sessions)]) == 2
    unlabelled = tmp_path / "u.jsonl"
    unlabelled.write_text(json.dumps(SESSIONS[0]) + "\n")
    assert main(["classify", "agreement", str(unlabelled), str(unlabelled)]) == 2
    assert "intent" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["classify", "--help"], ["classify", "agreement", "--help"]])
def test_help(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "classify agreement A.jsonl B.jsonl" in out and "--out" in out
