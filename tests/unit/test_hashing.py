"""Hashes: canonical JSON, row/split/file/task hashes, cross-checked with independent tools."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess

import pytest

from swe_taskflow.errors import InputError
from swe_taskflow.hashing import (canonical_json, file_sha256, git_blob_sha1, canonical_sha256, row_sha256, split_sha256,
                                  task_sha256)
from swe_taskflow.schema import Task


def test_canonical_json_matches_sorted_compact_json_for_plain_data():
    # For strings, ints, bools, nulls and nesting, RFC 8785 equals sorted compact UTF-8 JSON.
    obj = {"b": [3, {"z": None, "a": True}], "a": "é ünïcode", "c": {"y": -7, "x": "q\"uote"}}
    expected = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    assert canonical_json(obj) == expected


def test_canonical_json_normalizes_numbers_and_refuses_nan():
    assert canonical_json({"x": 2.0}) == canonical_json({"x": 2}) == b'{"x":2}'
    assert canonical_json([1e21, 0.1]) == b"[1e+21,0.1]"   # ECMAScript number forms (RFC 8785 section 3.2.2.3)
    with pytest.raises(InputError):
        canonical_json({"x": float("nan")})


def test_row_hash_leaves_out_its_own_field_and_sees_everything_else():
    row = {"instance_id": "a", "turns": [{"text": "t"}], "row_sha256": "whatever"}
    expected = hashlib.sha256(b'{"instance_id":"a","turns":[{"text":"t"}]}').hexdigest()
    assert row_sha256(row) == expected
    assert row_sha256({**row, "row_sha256": "other"}) == expected
    assert row_sha256({**row, "turns": [{"text": "u"}]}) != expected


def test_split_hash_equals_sha256sum_of_the_hash_lines(tmp_path):
    hashes = [hashlib.sha256(bytes([i])).hexdigest() for i in range(5)]
    f = tmp_path / "rows.txt"
    f.write_text("".join(h + "\n" for h in hashes))
    if shutil.which("sha256sum"):
        out = subprocess.run(["sha256sum", str(f)], capture_output=True, text=True, check=True).stdout.split()[0]
        assert split_sha256(hashes) == out
    assert split_sha256(hashes) == hashlib.sha256(f.read_bytes()).hexdigest()
    assert split_sha256(list(reversed(hashes))) != split_sha256(hashes)   # order is part of a split
    with pytest.raises(InputError):
        split_sha256(["abc"])


def test_file_hash_streams_across_chunks(tmp_path):
    data = bytes(range(256)) * 9000   # > 2 chunks of 1 MiB
    f = tmp_path / "blob.bin"
    f.write_bytes(data)
    assert file_sha256(f, chunk_size=1 << 20) == hashlib.sha256(data).hexdigest()
    assert file_sha256(f, chunk_size=7) == hashlib.sha256(data).hexdigest()


def test_git_blob_id_matches_git(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is absent")
    data = b"hello release\n"
    f = tmp_path / "x.txt"
    f.write_bytes(data)
    out = subprocess.run(["git", "hash-object", str(f)], capture_output=True, text=True, check=True).stdout.strip()
    assert git_blob_sha1(data) == out


def test_task_hash_ignores_pipeline_status_but_not_content():
    t = Task(instance_id="i", source="s", source_revision="r", repo="o/n", base_commit="c", original_prompt="p",
             fail_to_pass=("a",))
    same = Task(instance_id="i", source="s", source_revision="r", repo="o/n", base_commit="c", original_prompt="p",
                fail_to_pass=["a"], status="malformed", reason="x")
    other = Task(instance_id="i", source="s", source_revision="r", repo="o/n", base_commit="c", original_prompt="p2")
    assert task_sha256(t) == task_sha256(same)
    assert task_sha256(t) != task_sha256(other)
    assert task_sha256(t) == canonical_sha256({k: v for k, v in t.to_dict().items() if k not in ("status", "reason")})


def _random_value(rng, depth=0):
    kind = rng.integers(0, 8 if depth < 3 else 5)
    alphabet = ["a", "Z", "é", "\u2028", "\x00", "\x1f", "\"", "\\", "\n", "\t", "\U0001F600", "\ufb01", "€", "\x7f"]
    text = lambda: "".join(rng.choice(alphabet, size=int(rng.integers(0, 8))))  # noqa: E731
    if kind == 0:
        return text()
    if kind == 1:
        return int(rng.integers(-2**53 + 1, 2**53 - 1))
    if kind == 2:
        return float(rng.choice([0.0, -0.0, 1.5, 1e21, 1e-7, 123456789012345680000.0, 5e-324, 0.1 + 0.2,
                                 float(rng.normal() * 10 ** int(rng.integers(-30, 30)))]))
    if kind == 3:
        return [None, True, False][int(rng.integers(0, 3))]
    if kind == 4:
        return text()
    if kind == 5:
        return [_random_value(rng, depth + 1) for _ in range(int(rng.integers(0, 4)))]
    return {text() + str(i): _random_value(rng, depth + 1) for i in range(int(rng.integers(0, 4)))}


def test_fast_canonical_json_equals_the_rfc8785_package():
    import numpy as np
    import rfc8785
    rng = np.random.default_rng(8785)
    for _ in range(3000):
        v = {"k": _random_value(rng), "\U0001F600": 1, "\ufb01": 2, "z": [_random_value(rng)]}
        assert canonical_json(v) == rfc8785.dumps(v)
    with pytest.raises(InputError):
        canonical_json({"x": 2**53})
    with pytest.raises(InputError):
        canonical_json({"x": "\ud800"})


def test_cache_key_form_is_the_compact_sorted_json_the_caches_always_had():
    """key_sha256 / key_json keep the bytes of the stage cache keys and the LLM response store keys."""
    from pathlib import PurePosixPath

    from swe_taskflow.hashing import compact_json_text, key_json, key_sha256

    obj = {"b": [3, 2.0, {"z": None}], "a": "é", "p": PurePosixPath("x/y")}
    legacy = json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str).encode("utf-8")
    assert key_json(obj) == legacy
    assert key_sha256(obj) == hashlib.sha256(legacy).hexdigest()
    # the key form is not the published form: 2.0 stays 2.0, and a path hashes as its text
    assert key_json({"x": 2.0}) != canonical_json({"x": 2})
    with pytest.raises(TypeError):
        compact_json_text(obj)   # JSON Lines rows are strict: no silent str() of a non-JSON value


def test_llm_request_key_is_sha256_json_of_its_canonical_form():
    from builder.llm.requests import LLMRequest
    from swe_taskflow.hashing import key_sha256

    req = LLMRequest(model="m", params={"temperature": 0.0, "max_tokens": 8},
                     messages=({"role": "user", "content": "héllo"},))
    text = json.dumps(req.canonical(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert req.key == hashlib.sha256(text.encode("utf-8")).hexdigest() == key_sha256(req.canonical())
