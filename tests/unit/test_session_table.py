"""The Arrow sessions reader gives what the line-by-line reader gives: sessions, skipped ones, Task-Flow bytes, errors.

The line reader (``read_sessions_report(engine="lines")``) is the reference. Every case here is read
by both, on whole files and in blocks of a few hundred bytes (so that block edges, duplicates across
blocks and a fallback block between Arrow blocks are exercised), and must agree: the same records,
the same skipped sessions, the same Task-Flow file bytes, or the same error text (file, line, field,
reason). The generated files are hand-written by a seeded numpy Generator; no corpus text is used.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from swe_taskflow.errors import InputError
from swe_taskflow.flow import count_sessions
from swe_taskflow.session_table import PY_WHITESPACE, SessionTable, read_session_table
from swe_taskflow.session_table import read_sessions_report
from swe_taskflow.sessions import cap_per_repo, filter_min_messages, intent_lists
from swe_taskflow.target import Target
from swe_taskflow.taxonomy import INTENTS

TEXTS = ["fix the bug", "", "why does `x[0]` fail?", "caf\u00e9 \u2603 \U0001F600", "a\\nb \"quoted\"", "null", "{[(",
         "messages", "  leading space", "tab\there"]


def generated(rng: np.random.Generator, n: int, texts: list[str] = TEXTS) -> list[str]:
    """``n`` valid session lines in the three formats, with optional fields present, absent or null."""
    lines = []
    for i in range(n):
        k = int(rng.integers(0, 21))
        fmt = int(rng.integers(0, 3))
        msgs = []
        for j in range(k):
            m = {"text": texts[int(rng.integers(0, len(texts)))]}
            r = rng.random()
            if r < 0.7:
                m["intent"] = INTENTS[int(rng.integers(0, len(INTENTS)))]
            elif r < 0.8:
                m["intent"] = None
            if rng.random() < 0.3:
                m["confidence"] = [0, 1, 0.5, 0.123456789, None, 1.0][int(rng.integers(0, 6))]
            if fmt == 1 and rng.random() < 0.9:
                m["index"] = int(rng.integers(0, 100))
            if fmt == 2 and rng.random() < 0.9:
                m["turn_index"] = j
            if rng.random() < 0.1:
                m["extra"] = {"chars": 3, "nested": [[1, 2], {"a": None}]}
            msgs.append(m)
        if fmt == 0:
            row = {"session_id": f"s{i}", "messages": msgs}
            if rng.random() < 0.5:
                row["repo"] = f"org/repo{int(rng.integers(0, 4))}"
        elif fmt == 1:
            row = {"session_id": f"c{i}", "source": "specstory", "repo": f"org/r{int(rng.integers(0, 3))}",
                   "user_messages": msgs, "started_at": None, "n_user_messages": k}
        else:
            row = {"instance_id": f"inst-{i}", "turns": msgs}
            if rng.random() < 0.7:
                row["condition"] = ["split_prompt", ""][int(rng.integers(0, 2))]
        lines.append(json.dumps(row, ensure_ascii=bool(rng.integers(0, 2))))
    return lines


def _write(path, lines, *, end="\n"):
    raw = [x if isinstance(x, bytes) else x.encode("utf-8", "surrogatepass") for x in lines]
    path.write_bytes(b"\n".join(raw) + end.encode())
    return path


def _both(path, block_bytes=None, **kw):
    """(reference result or error text, Arrow result or error text); a result is (records, skipped)."""
    def run(fn):
        try:
            return fn()
        except InputError as exc:
            return ("error", str(exc))
    ref = run(lambda: read_sessions_report(path, engine="lines", **kw))
    extra = {} if block_bytes is None else {"block_bytes": block_bytes}

    def arrow():
        table, skipped = read_session_table(path, **kw, **extra)
        return table.records(), skipped
    return ref, run(arrow)


def _flow_bytes(tmp_path, counts, name) -> bytes:
    out = tmp_path / f"{name}.json"
    Target.from_counts(counts, name="t", population="", min_messages=1, session_filter={}, classifier={"name": "x"},
                       measured_on="2026-01-01").save(out)
    return out.read_bytes()


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("block_bytes", [None, 300, 4096])
def test_generated_files_read_the_same(tmp_path, seed, block_bytes):
    rng = np.random.default_rng(seed)
    lines = generated(rng, 150)
    lines.insert(7, "")
    lines.insert(20, "   \t ")
    path = _write(tmp_path / "s.jsonl", lines)
    for kw in ({"skip_empty": True}, {}):
        ref, new = _both(path, block_bytes, **kw)
        assert ref == new
    ref_recs, ref_skipped = ref if ref[0] != "error" else _both(path, block_bytes, skip_empty=True)[0]
    assert ref_skipped, "the generated file has empty sessions to skip"


@pytest.mark.parametrize("seed", [3, 4])
def test_generated_labelled_files_give_the_same_task_flow_bytes(tmp_path, seed):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(400):
        n = int(rng.integers(1, 21))
        rows.append(json.dumps({"session_id": str(i), "repo": f"r{i % 7}",
                                "messages": [{"text": "", "intent": INTENTS[c]} for c in rng.integers(0, 16, n)]}))
    path = _write(tmp_path / "s.jsonl", rows)
    recs, _ = read_sessions_report(path, engine="lines")
    for block in (None, 1000):
        table, _ = read_session_table(path, keep_messages=False, **({} if block is None else {"block_bytes": block}))
        assert table.intent_lists() == intent_lists(recs)
        assert _flow_bytes(tmp_path, table.counts(), "new") == _flow_bytes(tmp_path, count_sessions(intent_lists(recs)), "old")
        for step in (1, 37, 500):           # counted over runs of sessions: the same counts, byte for byte
            assert _flow_bytes(tmp_path, table.counts(messages_per_step=step), "new") == \
                _flow_bytes(tmp_path, count_sessions(intent_lists(recs)), "old")
        kept = filter_min_messages(recs, 3)
        capped = cap_per_repo(kept, 5, np.random.default_rng(9))
        t_capped = table.filter_min_messages(3).cap_per_repo(5, np.random.default_rng(9))
        assert t_capped.session_ids.to_pylist() == [r.session_id for r in capped]
        assert _flow_bytes(tmp_path, t_capped.counts(), "new") == \
            _flow_bytes(tmp_path, count_sessions(intent_lists(capped)), "old")
    sc = table.session_counts()
    assert sc.n_sessions == len(recs)


GOOD = '{"session_id": "g%d", "messages": [{"text": "t", "intent": "bug-fix"}]}'

# Each case: one line (str or bytes) put between good lines; both readers must agree on it.
BAD_LINES = {
    "not json": "{not json",
    "trailing garbage": GOOD % 900 + " x",
    "two objects": GOOD % 901 + " " + GOOD % 902,
    "object then null": GOOD % 903 + " null",
    "top-level null": "null",
    "top-level list": "[1, 2]",
    "top-level number": "5",
    "leading spaces": "   " + GOOD % 904,
    "missing id": '{"messages": [{"text": "t"}]}',
    "empty id": '{"session_id": "", "messages": [{"text": "t"}]}',
    "blank id": '{"session_id": "  ", "messages": [{"text": "t"}]}',
    "unicode blank id": '{"session_id": "\\u3000\\u2009", "messages": [{"text": "t"}]}',
    "zero width id": '{"session_id": "\\u200b", "messages": [{"text": "t"}]}',
    "int id": '{"session_id": 77, "messages": [{"text": "t"}]}',
    "bool id": '{"session_id": true, "messages": [{"text": "t"}]}',
    "null id, instance": '{"session_id": null, "instance_id": "i", "condition": "c", "turns": [{"text": "t"}]}',
    "instance null": '{"instance_id": null, "condition": "c", "turns": [{"text": "t"}]}',
    "instance null no cond": '{"instance_id": null, "turns": [{"text": "t"}]}',
    "instance int": '{"instance_id": 5, "turns": [{"text": "t"}]}',
    "duplicate id": GOOD % 1,
    "missing messages": '{"session_id": "m1"}',
    "messages null, user_messages": '{"session_id": "m2", "messages": null, "user_messages": [{"text": "t"}]}',
    "escaped key null": '{"session_id": "m3", "m\\u0065ssages": null, "user_messages": [{"text": "t"}]}',
    "messages and turns": '{"session_id": "m4", "messages": [{"text": "a"}], "turns": [{"text": "b"}, {"text": "c"}]}',
    "messages object": '{"session_id": "m5", "messages": {"text": "t"}}',
    "messages string": '{"session_id": "m6", "messages": "hello"}',
    "empty session": '{"session_id": "m7", "messages": []}',
    "message number": '{"session_id": "m8", "messages": [1]}',
    "message null": '{"session_id": "m9", "messages": [null]}',
    "text missing": '{"session_id": "t1", "messages": [{"intent": "bug-fix"}]}',
    "text null": '{"session_id": "t2", "messages": [{"text": null}]}',
    "text number": '{"session_id": "t3", "messages": [{"text": 5}]}',
    "unknown intent": '{"session_id": "i1", "messages": [{"text": "t", "intent": "bugfix"}]}',
    "intent number": '{"session_id": "i2", "messages": [{"text": "t", "intent": 3}]}',
    "intent null": '{"session_id": "i3", "messages": [{"text": "t", "intent": null}]}',
    "confidence bool": '{"session_id": "c1", "messages": [{"text": "t", "confidence": true}]}',
    "confidence string": '{"session_id": "c2", "messages": [{"text": "t", "confidence": "0.5"}]}',
    "confidence NaN": '{"session_id": "c3", "messages": [{"text": "t", "confidence": NaN}]}',
    "confidence Infinity": '{"session_id": "c4", "messages": [{"text": "t", "confidence": Infinity}]}',
    "confidence negative": '{"session_id": "c5", "messages": [{"text": "t", "confidence": -0.1}]}',
    "confidence above 1": '{"session_id": "c6", "messages": [{"text": "t", "confidence": 1.5}]}',
    "confidence huge": '{"session_id": "c7", "messages": [{"text": "t", "confidence": 1e400}]}',
    "confidence -0": '{"session_id": "c8", "messages": [{"text": "t", "confidence": -0.0}]}',
    "index float": '{"session_id": "x1", "user_messages": [{"text": "t", "index": 1.0}]}',
    "index bool": '{"session_id": "x2", "user_messages": [{"text": "t", "index": true}]}',
    "index null": '{"session_id": "x3", "user_messages": [{"text": "t", "index": null}]}',
    "index string": '{"session_id": "x4", "user_messages": [{"text": "t", "index": "0"}]}',
    "index huge": '{"session_id": "x5", "user_messages": [{"text": "t", "index": 99999999999999999999}]}',
    "turn_index null": '{"instance_id": "x6", "turns": [{"text": "t", "turn_index": null}]}',
    "index null, turn_index": '{"session_id": "x7", "turns": [{"text": "t", "index": null, "turn_index": 2}]}',
    "index and turn_index": '{"session_id": "x8", "turns": [{"text": "t", "index": 4, "turn_index": 2}]}',
    "repo number": '{"session_id": "r1", "repo": 5, "messages": [{"text": "t"}]}',
    "repo zero": '{"session_id": "r2", "repo": 0, "messages": [{"text": "t"}]}',
    "repo false": '{"session_id": "r3", "repo": false, "messages": [{"text": "t"}]}',
    "source number": '{"session_id": "r4", "source": 1.0, "messages": [{"text": "t"}]}',
    "source object": '{"session_id": "r5", "source": {"a": 1}, "messages": [{"text": "t"}]}',
    "bad utf-8 in text": b'{"session_id": "u1", "messages": [{"text": "\xff"}]}',
    "bad utf-8 ignored": b'{"session_id": "u2", "x": "\xc3\x28", "messages": [{"text": "t"}]}',
    "lone surrogate": '{"session_id": "u3", "messages": [{"text": "\\ud800"}]}',
    "lone surrogate ignored": '{"session_id": "u4", "x": "\\udc00", "messages": [{"text": "t"}]}',
    "surrogate pair": '{"session_id": "u5", "messages": [{"text": "\\ud83d\\ude00"}]}',
    "escaped backslash then u": '{"session_id": "u6", "messages": [{"text": "\\\\ud800"}]}',
    "raw tab in string": '{"session_id": "u7\tx", "messages": [{"text": "t"}]}',
    "nul escape": '{"session_id": "u8\\u0000", "messages": [{"text": "t"}]}',
    "deep nesting": '{"session_id": "d1", "x": ' + "[" * 1500 + "]" * 1500 + ', "messages": [{"text": "t"}]}',
    "moderate nesting": '{"session_id": "d2", "x": ' + "[" * 150 + "]" * 150 + ', "messages": [{"text": "t"}]}',
    "many brackets in text": '{"session_id": "d3", "messages": [{"text": "' + "[{" * 400 + '"}]}',
    "duplicate key": '{"session_id": "k1", "session_id": "k2", "messages": [{"text": "t"}]}',
    "duplicate messages key": '{"session_id": "k3", "messages": [{"text": "t"}], "messages": null}',
    "form feed line": "\x0c",
    "nbsp line": "\u00a0",
    "crlf": GOOD % 905 + "\r",
    "nested index key": '{"session_id": "n1", "user_messages": [{"text": "t", "meta": {"index": null}}]}',
    "extra fields": '{"session_id": "n2", "messages": [{"text": "t", "chars": 1, "truncated": false}], "commit": null}',
    "bom": "\ufeff" + GOOD % 906,
}


def _case_lines(bad, n_good=12, at=6):
    good = [GOOD % i for i in range(n_good)]
    return good[:at] + [bad] + good[at:]


@pytest.mark.parametrize("name", sorted(BAD_LINES))
@pytest.mark.parametrize("kw", [{}, {"skip_empty": True}, {"require_intents": True}], ids=["plain", "skip", "require"])
def test_hostile_lines_same_result_or_same_error(tmp_path, name, kw):
    path = _write(tmp_path / "bad.jsonl", _case_lines(BAD_LINES[name]))
    for block in (None, 200):
        ref, new = _both(path, block, **kw)
        assert new == ref, f"{name}: {new!r} != {ref!r}"


def test_first_error_wins_across_blocks(tmp_path):
    """A duplicate in an early Arrow block is reported before a bad line in a later block, as line by line."""
    lines = [GOOD % i for i in range(40)]
    lines[10] = GOOD % 3                                        # duplicate of line 4
    lines[30] = '{"session_id": "z", "messages": [{"text": "t", "intent": "nope"}]}'
    path = _write(tmp_path / "s.jsonl", lines)
    for block in (None, 256, 1024):
        ref, new = _both(path, block)
        assert ref[0] == "error" and ":11: field 'session_id': duplicate session_id" in ref[1]
        assert new == ref
    lines[10] = GOOD % 10
    lines[35] = GOOD % 31                                       # duplicate after the bad line: the bad line wins
    path = _write(tmp_path / "s.jsonl", lines)
    for block in (None, 256):
        ref, new = _both(path, block)
        assert ref[0] == "error" and ":31: field 'messages[0].intent': unknown intent label" in ref[1]
        assert new == ref


@pytest.mark.parametrize("content", [b"", b"\n\n  \n", b'{"session_id": "e", "messages": []}\n'])
def test_no_session_error_is_the_same(tmp_path, content):
    path = tmp_path / "e.jsonl"
    path.write_bytes(content)
    for kw in ({}, {"skip_empty": True}):
        ref, new = _both(path, None, **kw)
        assert ref[0] == "error" and new == ref


def test_last_line_without_newline_and_long_lines(tmp_path):
    long_text = "x" * (3 << 20)                                 # longer than Arrow's default 1 MiB JSON block
    lines = [GOOD % 0, json.dumps({"session_id": "long", "messages": [{"text": long_text, "intent": "explain"}]}),
             GOOD % 1]
    path = _write(tmp_path / "s.jsonl", lines, end="")
    for block in (None, 64):
        ref, new = _both(path, block)
        assert new == ref and len(new[0]) == 3 and new[0][1].texts == (long_text,)


def test_missing_file_and_folder_errors_are_the_same(tmp_path):
    for path in (tmp_path / "absent.jsonl", tmp_path):
        assert _both(path)[0] == _both(path)[1]
        assert _both(path)[0][0] == "error"


def test_python_whitespace_set_is_complete():
    """Blank session ids are judged as ``str.strip`` judges them; the constant must list every such character."""
    assert set(PY_WHITESPACE) == {chr(c) for c in range(0x110000) if chr(c).isspace()}


def test_table_selection_and_records_roundtrip(tmp_path):
    rng = np.random.default_rng(5)
    path = _write(tmp_path / "s.jsonl", generated(rng, 60))
    table, _ = read_session_table(path, skip_empty=True)
    recs = table.records()
    again = SessionTable.from_records(recs, table.lines)
    assert again.records() == recs
    rows = [5, 0, 17, 17]
    assert table.take(rows).records() == [recs[i] for i in rows]
    assert table.filter_min_messages(4).records() == filter_min_messages(recs, 4)
    counting = read_session_table(path, skip_empty=True, keep_messages=False)[0]
    assert not counting.has_messages and np.array_equal(counting.codes, table.codes)
    with pytest.raises(InputError, match="without their messages"):
        counting.records()
    if not table.labelled:
        with pytest.raises(InputError, match="message has no intent"):
            table.counts()


@pytest.mark.parametrize("adversarial", [False, True])
def test_arrow_path_is_taken_for_ordinary_files(tmp_path, monkeypatch, adversarial):
    """Ordinary files never reach the line reader (else the comparisons above would compare it with itself)."""
    import swe_taskflow.session_table as st

    calls = []
    real = st._read_block_lines
    monkeypatch.setattr(st, "_read_block_lines", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
    path = _write(tmp_path / "s.jsonl", generated(np.random.default_rng(11), 200, TEXTS if adversarial else TEXTS[:5]))
    ref, new = _both(path, 2048, skip_empty=True)
    assert new == ref
    if adversarial:      # a text that is exactly "messages" looks like a key written twice: that block is re-read
        assert calls
    else:
        assert calls == []


@pytest.mark.data
@pytest.mark.parametrize("name", ["specstory_sessions.jsonl", "aider_sessions.jsonl"])
def test_real_session_files_read_the_same(shared_dir, tmp_path, name):
    """The shared corpora (read-only, never copied): same sessions, skipped ones, first error and Task-Flow bytes."""
    import zlib
    from dataclasses import dataclass

    from swe_taskflow.sessions import label_sessions

    path = shared_dir / "data" / "interaction-sessions" / name
    ref, new = _both(path, None, skip_empty=True)
    assert new == ref and len(ref[0]) > 100
    assert _both(path, 1 << 16, skip_empty=True)[1] == ref
    strict_ref, strict_new = _both(path, None)
    assert strict_new == strict_ref

    @dataclass
    class Pred:
        intent: str
        confidence: float

    def predict(texts):   # deterministic stand-in for a classifier: the comparison is of the readers
        return [Pred(INTENTS[zlib.crc32(t.encode("utf-8", "surrogatepass")) % len(INTENTS)], 0.5) for t in texts]

    old = count_sessions(intent_lists(label_sessions(ref[0], predict)))
    table, _ = read_session_table(path, skip_empty=True)
    labelled = SessionTable.from_records(label_sessions(table.records(), predict), table.lines)
    assert _flow_bytes(tmp_path, labelled.counts(), "new") == _flow_bytes(tmp_path, old, "old")
