"""The one key-to-JSON cache (builder.json_cache.JsonCache): layout, atomic round trip, and what a
damaged entry does (a cache recomputes it; a record read as input names its file)."""

from __future__ import annotations

import pytest

from builder.json_cache import JsonCache
from swe_taskflow.errors import InputError

KEY = "ab" + "0" * 62


def test_layout_round_trip_and_count(tmp_path):
    cache = JsonCache(tmp_path / "c")
    assert cache.get(KEY) is None and cache.load(KEY) is None and len(cache) == 0
    path = cache.put(KEY, {"b": [1, "é"], "a": None})
    assert path == tmp_path / "c" / "ab" / f"{KEY}.json" and path.read_text(encoding="utf-8").endswith("\n")
    assert cache.get(KEY) == cache.load(KEY) == {"a": None, "b": [1, "é"]}
    cache.put("cd" + "1" * 62, [1])
    assert len(cache) == 2 and not list(path.parent.glob(".*"))   # no temporary file left beside it


def test_damaged_entry_is_recomputed_by_get_and_named_by_load(tmp_path):
    cache = JsonCache(tmp_path)
    cache.path(KEY).parent.mkdir(parents=True)
    cache.path(KEY).write_text('{"half": ', encoding="utf-8")
    assert cache.get(KEY) is None
    with pytest.raises(InputError) as ei:
        cache.load(KEY)
    assert str(cache.path(KEY)) in str(ei.value) and "cannot be read as JSON" in str(ei.value)
    cache.path(KEY).unlink()
    cache.path(KEY).mkdir()                       # a folder where the entry should be: unreadable
    assert cache.get(KEY) is None
