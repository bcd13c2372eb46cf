"""Reading and writing sessions: both formats, errors that name file/line/field, capping, filtering."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pytest

from swe_taskflow.errors import InputError
from swe_taskflow.session_table import read_sessions, read_sessions_report
from swe_taskflow.sessions import (SessionRecord, cap_per_repo, filter_min_messages, intent_lists, label_sessions,
                                   write_sessions)


def _write(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


OURS = {"session_id": "s1", "repo": "a/b", "messages": [{"text": "fix it", "intent": "bug-fix"},
                                                         {"text": "why?", "intent": "explain", "confidence": 0.8}]}
CORPUS = {"session_id": "c1", "source": "specstory", "repo": "x/y",
          "user_messages": [{"index": 0, "text": "hello", "chars": 5, "truncated": False},
                            {"index": 1, "text": "add a flag", "chars": 10, "truncated": False}]}


def test_reads_both_formats(tmp_path):
    recs = read_sessions(_write(tmp_path / "s.jsonl", [OURS, CORPUS]))
    a, b = recs
    assert a.session_id == "s1" and a.texts == ("fix it", "why?") and a.intents == ("bug-fix", "explain")
    assert a.confidences == (None, 0.8) and a.repo == "a/b" and a.labelled
    assert b.intents == (None, None) and b.repo == "x/y" and b.source == "specstory" and not b.labelled
    assert b.message_index == (0, 1)


def test_reads_benchmark_session_rows(tmp_path):
    row = {"instance_id": "i1", "condition": "split_prompt",
           "turns": [{"turn_index": 0, "kind": "issue", "text": "part 1", "intent": "new-feature"},
                     {"turn_index": 1, "kind": "qa", "text": "q", "intent": "explain"}]}
    (rec,) = read_sessions(_write(tmp_path / "s.jsonl", [row]), require_intents=True)
    assert rec.session_id == "i1::split_prompt" and rec.intents == ("new-feature", "explain")


def test_roundtrip_write_read(tmp_path):
    recs = read_sessions(_write(tmp_path / "s.jsonl", [OURS, CORPUS]))
    labelled = [recs[0], recs[1].with_intents(["greeting", "new-feature"], [0.9, 0.7])]
    write_sessions(tmp_path / "o.jsonl", labelled)
    again = read_sessions(tmp_path / "o.jsonl", require_intents=True)
    assert again == labelled


def _err(tmp_path, rows, **kw) -> InputError:
    with pytest.raises(InputError) as exc:
        read_sessions(_write(tmp_path / "bad.jsonl", rows), **kw)
    return exc.value


def test_unknown_label_names_line_and_field(tmp_path):
    bad = {"session_id": "s2", "messages": [{"text": "a", "intent": "bug-fix"}, {"text": "b", "intent": "bugfix"}]}
    e = _err(tmp_path, [OURS, bad])
    assert e.row == 2 and e.field == "messages[1].intent" and e.actual == "bugfix"
    assert "bad.jsonl:2" in str(e) and "messages[1].intent" in str(e)


def test_empty_session_names_line_and_field(tmp_path):
    e = _err(tmp_path, [OURS, {"session_id": "e", "user_messages": []}])
    assert e.row == 2 and e.field == "user_messages" and "empty session" in str(e)


def test_empty_sessions_skipped_only_on_request_and_reported(tmp_path):
    path = _write(tmp_path / "s.jsonl", [OURS, {"session_id": "e", "messages": []}, CORPUS])
    recs, skipped = read_sessions_report(path, skip_empty=True)
    assert [r.session_id for r in recs] == ["s1", "c1"]
    assert [(s.line, s.session_id) for s in skipped] == [(2, "e")]


def test_non_json_line_names_line(tmp_path):
    e = _err(tmp_path, [OURS, "{not json"])
    assert e.row == 2 and "not valid JSON" in str(e) and "bad.jsonl:2" in str(e)


def test_missing_session_id(tmp_path):
    e = _err(tmp_path, [{"messages": [{"text": "a"}]}])
    assert e.row == 1 and e.field == "session_id"


def test_message_without_text(tmp_path):
    e = _err(tmp_path, [OURS, OURS | {"session_id": "s3", "messages": [{"intent": "explain"}]}])
    assert e.row == 2 and e.field == "messages[0].text"


def test_missing_messages_key(tmp_path):
    e = _err(tmp_path, [{"session_id": "s"}])
    assert e.row == 1 and e.field == "messages"


def test_require_intents(tmp_path):
    e = _err(tmp_path, [OURS, CORPUS], require_intents=True)
    assert e.row == 2 and e.field == "user_messages[0].intent"


def test_duplicate_session_id(tmp_path):
    e = _err(tmp_path, [OURS, OURS])
    assert e.row == 2 and e.field == "session_id"


def test_bad_confidence(tmp_path):
    row = {"session_id": "s", "messages": [{"text": "a", "intent": "explain", "confidence": 1.5}]}
    e = _err(tmp_path, [row])
    assert e.field == "messages[0].confidence"


def test_empty_file_is_an_error(tmp_path):
    with pytest.raises(InputError):
        read_sessions(_write(tmp_path / "e.jsonl", []))


def _recs(repo_sizes: dict[str, int]) -> list[SessionRecord]:
    out = []
    for repo, n in repo_sizes.items():
        out += [SessionRecord(f"{repo}-{i}", ("t",) * (1 + i % 4), ("explain",) * (1 + i % 4), repo) for i in range(n)]
    return out


def test_cap_per_repo_bounds_keeps_order_and_is_seeded():
    recs = _recs({"big": 30, "mid": 8, "small": 2})
    a = cap_per_repo(recs, 5, np.random.default_rng(1))
    b = cap_per_repo(recs, 5, np.random.default_rng(1))
    c = cap_per_repo(recs, 5, np.random.default_rng(2))
    assert a == b and a != c
    counts = {r: sum(1 for x in a if x.repo == r) for r in ("big", "mid", "small")}
    assert counts == {"big": 5, "mid": 5, "small": 2}
    pos = [recs.index(x) for x in a]
    assert pos == sorted(pos) and len(set(x.session_id for x in a)) == len(a)


def test_filter_min_messages():
    recs = _recs({"r": 8})
    assert [r.n_messages for r in filter_min_messages(recs, 3)] == [3, 4, 3, 4]
    with pytest.raises(InputError):
        filter_min_messages(recs, 0)


@dataclass
class _Pred:
    intent: str
    confidence: float


def test_label_sessions_fills_only_missing(tmp_path):
    recs = read_sessions(_write(tmp_path / "s.jsonl", [OURS, CORPUS]))
    seen = []

    def predict(texts):
        seen.extend(texts)
        return [_Pred("new-feature", 0.5) for _ in texts]

    out = label_sessions(recs, predict)
    assert seen == ["hello", "add a flag"]
    assert out[0] == recs[0]
    assert out[1].intents == ("new-feature", "new-feature") and out[1].confidences == (0.5, 0.5)
    assert intent_lists(out) == [["bug-fix", "explain"], ["new-feature", "new-feature"]]
    with pytest.raises(InputError) as exc:
        intent_lists(recs)
    assert exc.value.field == "messages[0].intent"


@pytest.mark.data
def test_reads_the_real_corpus(sessions_file):
    """The shared SpecStory corpus: it has empty sessions, so a plain read fails and names the line."""
    with pytest.raises(InputError) as exc:
        read_sessions(sessions_file)
    assert exc.value.row is not None and "empty session" in str(exc.value)
    recs, skipped = read_sessions_report(sessions_file, skip_empty=True)
    n_lines = sum(1 for line in sessions_file.open(encoding="utf-8") if line.strip())
    assert len(recs) + len(skipped) == n_lines
    assert all(r.intents == (None,) * r.n_messages for r in recs)
    long = filter_min_messages(recs, 3)
    capped = cap_per_repo(long, 20, np.random.default_rng(0))
    assert 0 < len(capped) < len(long)
