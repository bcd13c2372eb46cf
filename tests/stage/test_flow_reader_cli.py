"""`flow measure` / `flow score --bootstrap` read sessions with Arrow and write what the line reader's path wrote.

The reference is computed here the way the commands computed it before the Arrow reader:
``read_sessions_report(engine="lines")``, label lists, ``count_sessions`` / ``session_counts``.
Sessions are generated from a seeded numpy Generator (hand-written, no corpus text).
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from builder.cli import main
from builder.flow_measure import measure_file   # imported before any test's capture starts
from swe_taskflow.bootstrap import bootstrap_score, session_counts
from swe_taskflow.flow import count_sessions
from swe_taskflow.session_table import read_sessions_report
from swe_taskflow.sessions import cap_per_repo, filter_min_messages, intent_lists, write_sessions
from swe_taskflow.target import Target, load_target
from swe_taskflow.taxonomy import INTENTS

#: Packages `flow measure` must not import (seconds of start-up each, or needless for counting).
HEAVY = ("torch", "transformers", "datasets", "matplotlib", "scipy", "pandas")


def _sessions(path, seed: int, n: int, *, empty_every: int = 0):
    rng = np.random.default_rng(seed)
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            k = 0 if empty_every and i % empty_every == 3 else int(rng.integers(1, 15))
            fh.write(json.dumps({"session_id": f"s{i}", "repo": f"org/r{i % 9}",
                                 "messages": [{"text": f"m{j} \u00e9", "intent": INTENTS[int(c)],
                                               "confidence": round(float(rng.random()), 3)}
                                              for j, c in enumerate(rng.integers(0, len(INTENTS), k))]}) + "\n")
    return path


def test_measure_writes_the_reference_bytes(tmp_path, capsys):
    src = _sessions(tmp_path / "corpus.jsonl", 0, 3000, empty_every=50)
    out, labels = tmp_path / "flow.json", tmp_path / "labelled.jsonl"
    argv = ["flow", "measure", str(src), "--out", str(out), "--min-messages", "3", "--cap-per-repo", "200",
            "--seed", "4", "--skip-empty", "--measured-on", "2026-01-01", "--labels-out", str(labels)]
    assert main(argv) == 0
    err = capsys.readouterr().err

    recs, skipped = read_sessions_report(src, skip_empty=True, engine="lines")
    kept = cap_per_repo(filter_min_messages(recs, 3), 200, np.random.default_rng(4))
    ref = tmp_path / "ref.json"
    Target.from_counts(count_sessions(intent_lists(kept)), name="corpus", population="", min_messages=3,
                       session_filter={"cap_per_repo": 200, "cap_seed": 4, "empty_sessions_skipped": len(skipped)},
                       classifier={"name": "input-labels", "note": "intents given in the sessions file"},
                       measured_on="2026-01-01", provisional=False, description="").save(ref)
    assert out.read_bytes() == ref.read_bytes()
    ref_labels = tmp_path / "ref_labelled.jsonl"
    write_sessions(ref_labels, kept)
    assert labels.read_bytes() == ref_labels.read_bytes()
    assert f"{src}:4: skipped session s3: empty session (no user message)" in err
    assert load_target(out).sample_size["sessions"] == len(kept)


def test_score_bootstrap_equals_the_reference(tmp_path, capsys):
    target = _sessions(tmp_path / "target.jsonl", 1, 400)
    bench = _sessions(tmp_path / "bench.jsonl", 2, 150)
    assert main(["flow", "score", "--target", str(target), "--benchmark", str(bench), "--json",
                 "--bootstrap", "50", "--seed", "3"]) == 0
    got = json.loads(capsys.readouterr().out)
    t = session_counts(intent_lists(filter_min_messages(read_sessions_report(target, engine="lines")[0], 3)))
    b = session_counts(intent_lists(read_sessions_report(bench, engine="lines")[0]))
    boot = bootstrap_score(t, b, n_resamples=50, seed=3, confidence=0.95)
    assert got["bootstrap"] == json.loads(json.dumps(boot.as_dict()))


def test_bad_line_error_is_the_reference_error(tmp_path, capsys):
    src = _sessions(tmp_path / "bad.jsonl", 5, 200)
    lines = src.read_text(encoding="utf-8").splitlines()
    lines[150] = lines[150].replace('"intent": "', '"intent": "x', 1)
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        read_sessions_report(src, engine="lines")
    except Exception as exc:   # noqa: BLE001 - the reference's error, whatever it is
        expected = f"swe-taskflow: error: {exc}"
    assert main(["flow", "measure", str(src), "--out", str(tmp_path / "f.json")]) == 2
    assert capsys.readouterr().err.strip() == expected
    assert ":151: field 'messages[0].intent': unknown intent label" in expected


def test_measure_imports_no_heavy_module(tmp_path):
    src = _sessions(tmp_path / "s.jsonl", 6, 50)
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "builder.cli", "flow", "measure", str(src),
                           "--out", str(tmp_path / "f.json")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in proc.stderr.splitlines()
                if line.startswith("import time:")}
    assert "pyarrow" in imported                      # the check sees imports at all
    assert not imported & set(HEAVY), sorted(imported & set(HEAVY))


def test_measuring_notes_go_to_the_stderr_of_the_moment(tmp_path, capsys):
    """Notes are written to ``sys.stderr`` as it is when they are written: a stream bound at import time can be
    closed by then (pytest's capture between tests), and the note failed with 'I/O operation on closed file'."""
    src = tmp_path / "s.jsonl"
    src.write_text("".join(json.dumps({"session_id": f"s{i}", "repo": "a/x", "messages": [
        {"text": "fix it", "intent": "bug-fix"}, {"text": "thanks", "intent": "other"}]}) + "\n" for i in range(3)),
        encoding="utf-8")
    measure_file(str(src), min_messages=1, cap_per_repo=2, seed=0)
    assert "capped at 2 per repo: 2 of 3 sessions kept" in capsys.readouterr().err
