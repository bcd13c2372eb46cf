"""The shipped default target and the script that reproduces it."""

from __future__ import annotations

import json

import pytest

from builder.classify import load_classifier
from tools.default_target import build_default_target
from swe_taskflow.target import load_target
from swe_taskflow.target import default_target_path, shipped_targets, target_path
from swe_taskflow.errors import ConfigError


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
                        "transition_sources", "transition_targets", "P_L", "P_T", "P_R"}  # aggregates only
    with pytest.raises(ConfigError):
        target_path("nope")


def test_shipped_target_matches_the_current_default_classifier():
    """Regenerate with `python -m tools.default_target` after changing the embedded classifier."""
    assert load_target(default_target_path()).classifier["version"] == load_classifier("embedded").info["version"]


def test_build_is_deterministic_and_capped(tmp_path):
    # provenance: hand-written sessions for this test
    rows = []
    for repo, n in (("a/x", 4), ("b/y", 1)):
        for i in range(n):
            rows.append({"session_id": f"{repo}-{i}", "repo": repo, "user_messages": [
                {"index": 0, "text": "add a search box"}, {"index": 1, "text": "run the tests"},
                {"index": 2, "text": "fix the crash on save"}, {"index": 3, "text": "thanks!"}][: 3 + i % 2]})
    rows.append({"session_id": "short", "repo": "b/y", "user_messages": [{"index": 0, "text": "hi"}]})
    src = tmp_path / "s.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    a = build_default_target(src, cap=2, seed=3, date="2026-01-01", cache=False)
    b = build_default_target(src, cap=2, seed=3, date="2026-01-01", cache=False)
    a.save(tmp_path / "a.json")
    b.save(tmp_path / "b.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert a.sample_size["sessions"] == 3  # 2 of a/x (capped) + 1 long one of b/y; the 1-message one filtered
    assert a.provisional and a.session_filter["long_sessions_before_cap"] == 5
