"""`swe-taskflow flow ...` end to end on labelled synthetic sessions (no classifier needed)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from builder.cli import main
from swe_taskflow import flow
from swe_taskflow.target import load_target
from swe_taskflow.taxonomy import INTENTS


def _write_sessions(path, seed, n, lo, hi, labels=INTENTS):
    rng = np.random.default_rng(seed)
    seqs = []
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            s = [str(x) for x in rng.choice(labels, size=int(rng.integers(lo, hi + 1)))]
            seqs.append(s)
            fh.write(json.dumps({"session_id": f"{path.stem}-{i}", "repo": f"r{i % 5}",
                                 "messages": [{"text": f"m{j}", "intent": x} for j, x in enumerate(s)]}) + "\n")
    return seqs


@pytest.fixture()
def corpora(tmp_path):
    t = _write_sessions(tmp_path / "target.jsonl", 1, 200, 1, 12)
    b = _write_sessions(tmp_path / "bench.jsonl", 2, 60, 1, 4, ["bug-fix", "new-feature", "explain", "greeting"])
    return tmp_path, t, b


def _json_out(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_measure_writes_a_target_file(corpora, capsys):
    d, t, _ = corpora
    assert main(["flow", "measure", str(d / "target.jsonl"), "--out", str(d / "t.json"), "--min-messages", "3",
                 "--measured-on", "2026-01-01", "--population", "synthetic"]) == 0
    tgt = load_target(d / "t.json")
    want = flow.measure(t, min_messages=3)
    assert tgt.min_messages == 3 and tgt.population == "synthetic" and tgt.measured_on == "2026-01-01"
    assert tgt.classifier["name"] == "input-labels"
    assert tgt.sample_size["sessions"] == sum(1 for s in t if len(s) >= 3)
    for a, b in ((tgt.flow.length, want.length), (tgt.flow.intent, want.intent), (tgt.flow.transition, want.transition)):
        assert a == pytest.approx(b, abs=1e-11)
    assert "m0" not in (d / "t.json").read_text()          # no message text in a target file


def test_measure_is_byte_identical(corpora):
    d, _, _ = corpora
    args = ["flow", "measure", str(d / "target.jsonl"), "--min-messages", "3", "--cap-per-repo", "10",
            "--seed", "4", "--measured-on", "2026-01-01"]
    assert main([*args, "--out", str(d / "a.json")]) == 0
    assert main([*args, "--out", str(d / "b.json")]) == 0
    assert (d / "a.json").read_bytes() == (d / "b.json").read_bytes()
    assert json.loads((d / "a.json").read_text())["sample_size"]["sessions"] <= 50


def test_score_json_prints_the_four_numbers(corpora, capsys):
    d, t, b = corpora
    main(["flow", "measure", str(d / "target.jsonl"), "--out", str(d / "t.json"), "--min-messages", "3",
          "--measured-on", "2026-01-01"])
    capsys.readouterr()
    out = _json_out(capsys, ["flow", "score", "--target", str(d / "t.json"), "--benchmark", str(d / "bench.jsonl"),
                             "--json"])
    assert set(out) == {"tfas", "S_L", "S_T", "S_R"}
    want = flow.score(flow.measure(t, min_messages=3), flow.measure(b))
    assert out["tfas"] == pytest.approx(want.tfas) and out["S_R"] == pytest.approx(want.S_R)
    # the target given as sessions (filtered at >= 3 by default) scores the same
    out2 = _json_out(capsys, ["flow", "score", "--target", str(d / "target.jsonl"), "--benchmark",
                              str(d / "bench.jsonl"), "--json"])
    assert out2 == pytest.approx(out)


def test_score_identical_is_100_and_flow_file_as_benchmark(corpora, capsys):
    d, _, _ = corpora
    main(["flow", "measure", str(d / "bench.jsonl"), "--out", str(d / "b.json"), "--measured-on", "2026-01-01"])
    capsys.readouterr()
    out = _json_out(capsys, ["flow", "score", "--target", str(d / "b.json"), "--benchmark", str(d / "b.json"), "--json"])
    assert out == {"tfas": pytest.approx(100.0), "S_L": 1.0, "S_T": 1.0, "S_R": 1.0}


def test_score_bootstrap(corpora, capsys):
    d, _, _ = corpora
    argv = ["flow", "score", "--target", str(d / "target.jsonl"), "--benchmark", str(d / "bench.jsonl"), "--json",
            "--bootstrap", "50", "--seed", "3"]
    a = _json_out(capsys, argv)
    b = _json_out(capsys, argv)
    assert a == b
    boot = a["bootstrap"]
    assert boot["n_resamples"] == 50 and boot["seed"] == 3 and boot["target_resampled"] is True
    for k in ("tfas", "S_L", "S_T", "S_R"):
        assert boot[k][0] <= boot[k][1]
    assert main(["flow", "score", "--target", str(d / "target.jsonl"), "--benchmark", str(d / "bench.jsonl"),
                 "--bootstrap", "20"]) == 0
    assert "bootstrap intervals" in capsys.readouterr().out


def test_bootstrap_needs_benchmark_sessions(corpora, capsys):
    d, _, _ = corpora
    main(["flow", "measure", str(d / "bench.jsonl"), "--out", str(d / "b.json"), "--measured-on", "2026-01-01"])
    capsys.readouterr()
    rc = main(["flow", "score", "--target", str(d / "b.json"), "--benchmark", str(d / "b.json"), "--bootstrap", "5"])
    assert rc == 2 and "resample sessions" in capsys.readouterr().err


def test_gap_markdown_and_json(corpora, capsys, tmp_path):
    d, _, _ = corpora
    assert main(["flow", "gap", "--target", str(d / "target.jsonl"), "--benchmark", str(d / "bench.jsonl"),
                 "--top", "3", "--out", str(tmp_path / "gap.md")]) == 0
    md = capsys.readouterr().out
    assert md == (tmp_path / "gap.md").read_text() and "## Intents (P_T)" in md and "top 3 of" in md
    g = _json_out(capsys, ["flow", "gap", "--target", str(d / "target.jsonl"), "--benchmark", str(d / "bench.jsonl"),
                           "--json"])
    assert len(g["intents"]) == 13 and len(g["lengths"]) == 7 and g["score"]["tfas"] > 0


def test_bad_input_exits_2_naming_line_and_field(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"session_id": "a", "messages": [{"text": "x", "intent": "explain"}]}\n'
                   '{"session_id": "b", "messages": [{"text": "x", "intent": "nonsense"}]}\n')
    assert main(["flow", "measure", str(bad), "--out", str(tmp_path / "o.json")]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl:2" in err and "messages[0].intent" in err
    assert not (tmp_path / "o.json").exists()


def test_single_message_benchmark_scores_zero_via_cli(corpora, tmp_path, capsys):
    d, _, _ = corpora
    one = tmp_path / "one.jsonl"
    _write_sessions(one, 9, 30, 1, 1)
    out = _json_out(capsys, ["flow", "score", "--target", str(d / "target.jsonl"), "--benchmark", str(one), "--json"])
    assert out["S_L"] == 0.0 and out["tfas"] == 0.0


def test_plot_writes_png_and_html(corpora, tmp_path, capsys):
    d, _, _ = corpora
    assert main(["flow", "plot", str(d / "bench.jsonl"), "--out", str(tmp_path / "plots")]) == 0
    png = (tmp_path / "plots" / "sankey.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    html = (tmp_path / "plots" / "sankey.html").read_text()
    assert "<svg" in html and "END" in html


@pytest.mark.slow
def test_measure_classifies_unlabelled_messages(tmp_path, capsys):
    """Unlabelled messages go through the real embedded classifier (synthetic, hand-written texts)."""
    pytest.importorskip("builder.classify")
    path = tmp_path / "unlabelled.jsonl"
    texts = ["The login page crashes with a null pointer exception, please fix it.",
             "Add a --verbose flag to the export command.",
             "How does the cache invalidation in this project work?",
             "Thanks!"]
    with path.open("w", encoding="utf-8") as fh:
        for i in range(3):
            fh.write(json.dumps({"session_id": f"u{i}", "repo": "hand/written",
                                 "user_messages": [{"index": j, "text": t} for j, t in enumerate(texts[i:] + texts[:i])]})
                     + "\n")
    out = tmp_path / "f.json"
    labelled = tmp_path / "labelled.jsonl"
    assert main(["flow", "measure", str(path), "--out", str(out), "--device", "cpu", "--no-label-cache",
                 "--measured-on", "2026-01-01", "--labels-out", str(labelled)]) == 0
    tgt = load_target(out)
    assert tgt.classifier.get("name") == "embedded" and tgt.sample_size["messages"] == 12
    from swe_taskflow.session_table import read_sessions
    recs = read_sessions(labelled, require_intents=True)
    assert all(c is not None and 0.0 <= c <= 1.0 for r in recs for c in r.confidences)
    assert "classifying 12 unlabelled message(s)" in capsys.readouterr().err


def test_score_and_gap_accept_the_default_target_by_name(corpora, capsys, monkeypatch):
    from swe_taskflow.target import DEFAULT_TARGET, default_target_path

    d, _, b = corpora
    monkeypatch.chdir(d)                       # no file named "default" here
    want = flow.score(load_target(default_target_path()).flow, flow.measure(b))
    for name in ("default", DEFAULT_TARGET):
        out = _json_out(capsys, ["flow", "score", "--target", name, "--benchmark", str(d / "bench.jsonl"), "--json"])
        assert out["tfas"] == pytest.approx(want.tfas) and out["S_T"] == pytest.approx(want.S_T)
    assert main(["flow", "gap", "--target", "default", "--benchmark", str(d / "bench.jsonl")]) == 0
    assert main(["flow", "score", "--target", "no-such-target", "--benchmark", str(d / "bench.jsonl")]) == 2
    assert "no-such-target" in capsys.readouterr().err
