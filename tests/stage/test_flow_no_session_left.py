"""`flow measure/score/gap/plot` when the --min-messages filter leaves no session: one line, exit 2, not exit 70.

The paper's setting (`--min-messages 3`) on a sessions file of two-message sessions kept nothing; taking zero
rows out of the session table raised a numpy broadcast error that ended as "internal error" (exit 70).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from builder.cli import main
from swe_taskflow.taxonomy import INTENTS


def _short_sessions(path):
    with path.open("w", encoding="utf-8") as fh:
        for i in range(4):
            fh.write(json.dumps({"session_id": f"s{i}", "repo": "org/r",
                                 "messages": [{"text": "a", "intent": INTENTS[0]},
                                              {"text": "b", "intent": INTENTS[1]}]}) + "\n")
    return path


@pytest.mark.parametrize("argv", [
    ["flow", "measure", "{s}", "--out", "{tmp}/f.json", "--min-messages", "3"],
    ["flow", "plot", "{s}", "--out", "{tmp}/plot", "--min-messages", "3"],
    ["flow", "score", "--target", "{s}", "--benchmark", "{s}", "--target-min-messages", "3"],
    ["flow", "score", "--target", "default", "--benchmark", "{s}", "--benchmark-min-messages", "3",
     "--bootstrap", "5"],
    ["flow", "gap", "--target", "default", "--benchmark", "{s}", "--benchmark-min-messages", "3"],
], ids=["measure", "plot", "score-target", "score-benchmark", "gap"])
def test_a_filter_that_keeps_no_session_is_one_clear_line(tmp_path, capsys, argv):
    s = _short_sessions(tmp_path / "s.jsonl")
    code = main([a.format(s=s, tmp=tmp_path) for a in argv])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and "internal error" not in err
    assert "at least 3 message(s)" in err and str(s) in err


def test_taking_no_session_gives_an_empty_table(tmp_path):
    from swe_taskflow.session_table import read_session_table

    table, _ = read_session_table(_short_sessions(tmp_path / "s.jsonl"))
    empty = table.filter_min_messages(3)
    assert empty.n_sessions == 0 and empty.lengths.size == 0 and empty.codes.size == 0
    kept = table.take(np.array([2, 0]))
    assert kept.session_ids.to_pylist() == ["s2", "s0"] and kept.codes.tolist() == table.codes[[4, 5, 0, 1]].tolist()
