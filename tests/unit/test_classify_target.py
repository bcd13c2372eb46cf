"""The shipped default target and the script that reproduces it."""

from __future__ import annotations

import json

import pytest

from builder.classify import load_classifier
from tools.default_target import build_default_target
from swe_taskflow.target import load_target
from swe_taskflow.target import default_target_path, shipped_targets, target_path
from swe_taskflow.errors import ConfigError
from swe_taskflow.taxonomy import RETAINED


def test_default_target_file_loads_and_states_what_it_is():
    path = default_target_path()
    assert path.name == "specstory-long-v2.json" and {"specstory-long-v1", "specstory-long-v2"} <= set(shipped_targets())
    t = load_target(path)
    assert t.provisional and "Appendix C" in t.description and "stands in for a production target" in t.description
    assert t.min_messages == 3 and t.session_filter["cap_per_repo"] == 20
    assert t.classifier["name"] == "embedded" and t.measured_on
    assert t.sample_size["sessions"] >= 200 and t.flow.intent.sum() == pytest.approx(1.0)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert set(doc) <= {"format", "format_version", "name", "description", "population", "provisional",
                        "session_filter", "sample_size", "classifier", "measured_on", "length_bins", "intents",
                        "transition_sources", "transition_targets", "P_L", "P_T", "P_R",
                        "correction", "bootstrap"}  # aggregates only
    with pytest.raises(ConfigError):
        target_path("nope")


def test_shipped_target_matches_the_current_default_classifier():
    """Regenerate with `python -m tools.default_target` after changing the embedded classifier."""
    assert load_target(default_target_path()).classifier["version"] == load_classifier("embedded").info["version"]


def test_shipped_corrected_target_names_its_confusion_file_and_classifier():
    """The corrected default target was corrected by the committed out-of-fold confusion matrix of the same
    classifier version (`python -m tools.train_heads --confusion-out`; docs/classify.md, "The default target")."""
    import hashlib
    from pathlib import Path

    from swe_taskflow.confusion import load_confusion

    raw, cor = load_target(target_path("specstory-long-v2")), load_target(target_path("specstory-long-v2-corrected"))
    assert cor.corrected and not raw.corrected
    assert cor.classifier == raw.classifier and cor.classifier["version"] == load_classifier("embedded").info["version"]
    conf_file = Path(__file__).resolve().parents[1] / "data" / cor.correction["confusion_file"]
    assert hashlib.sha256(conf_file.read_bytes()).hexdigest() == cor.correction["confusion_sha256"]
    assert cor.correction["n_labelled"] == load_confusion(conf_file).n
    assert cor.sample_size == raw.sample_size and cor.session_filter == raw.session_filter
    assert cor.correction["raw_P_T"] == pytest.approx(list(raw.flow.intent), abs=1e-9)


def _sessions(tmp_path):
    # provenance: hand-written sessions for these tests
    rows = []
    for repo, n in (("a/x", 4), ("b/y", 1)):
        for i in range(n):
            rows.append({"session_id": f"{repo}-{i}", "repo": repo, "user_messages": [
                {"index": 0, "text": "add a search box"}, {"index": 1, "text": "run the tests"},
                {"index": 2, "text": "fix the crash on save"}, {"index": 3, "text": "thanks!"}][: 3 + i % 2]})
    rows.append({"session_id": "short", "repo": "b/y", "user_messages": [{"index": 0, "text": "hi"}]})
    src = tmp_path / "s.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return src


def test_build_is_deterministic_and_capped(tmp_path):
    src = _sessions(tmp_path)
    a = build_default_target(src, cap=2, seed=3, date="2026-01-01", cache=False)
    b = build_default_target(src, cap=2, seed=3, date="2026-01-01", cache=False)
    a.save(tmp_path / "a.json")
    b.save(tmp_path / "b.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert a.sample_size["sessions"] == 3  # 2 of a/x (capped) + 1 long one of b/y; the 1-message one filtered
    assert a.provisional and a.session_filter["long_sessions_before_cap"] == 5


def test_build_corrected_with_a_confusion_file(tmp_path, capsys):
    import hashlib

    from swe_taskflow.agreement import agreement_document, pairwise
    from swe_taskflow.jsonl import write_json
    from tools.default_target import main

    src = _sessions(tmp_path)
    reader = ["new-feature"] * 40 + ["bug-fix"] * 40 + ["debug"] * 20 + ["execute"] * 20    # hand-written labels
    clf = ["new-feature"] * 30 + ["planning"] * 10 + ["bug-fix"] * 30 + ["debug"] * 10 + ["debug"] * 15 \
        + ["bug-fix"] * 5 + ["execute"] * 20
    write_json(tmp_path / "C.json", agreement_document(pairwise({"reader.jsonl": reader, "clf.jsonl": clf}),
                                                       n_messages=len(reader)))
    raw = build_default_target(src, cap=2, seed=3, date="2026-01-01")
    cor = build_default_target(src, cap=2, seed=3, date="2026-01-01", confusion=tmp_path / "C.json", bootstrap=20)
    assert not raw.corrected and cor.corrected and "--confusion" in cor.description
    assert cor.correction["confusion_sha256"] == hashlib.sha256((tmp_path / "C.json").read_bytes()).hexdigest()
    assert cor.correction["n_labelled"] == 120 and cor.correction["raw_P_T"] == pytest.approx(raw.flow.intent)
    assert cor.flow.length == pytest.approx(raw.flow.length) and cor.sample_size == raw.sample_size
    assert set(cor.bootstrap["P_T"]) == set(RETAINED) and cor.bootstrap["n_resamples"] == 20
    assert main(["--sessions", str(src), "--cap", "2", "--seed", "3", "--date", "2026-01-01",
                 "--confusion", str(tmp_path / "C.json"), "--bootstrap", "20", "--out", str(tmp_path / "c.json")]) == 0
    assert "(corrected)" in capsys.readouterr().out
    written = load_target(tmp_path / "c.json")
    assert written.name == "specstory-long-v2-corrected" and written.to_dict() == cor.to_dict() | {"name": written.name}
