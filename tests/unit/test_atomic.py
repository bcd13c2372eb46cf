"""The one atomic writer: the old content or the new one, never a part, and no temp file left behind."""

from __future__ import annotations

import pytest

from swe_taskflow.atomic import open_atomic, write_bytes, write_text


def test_write_replaces_whole_file_and_creates_folders(tmp_path):
    p = tmp_path / "a" / "b" / "f.bin"
    write_bytes(p, b"one")
    write_text(p, "twö")
    assert p.read_bytes() == "twö".encode("utf-8")
    assert sorted(x.name for x in p.parent.iterdir()) == ["f.bin"]


def test_failure_midway_keeps_the_old_content_and_removes_the_temp_file(tmp_path):
    p = tmp_path / "f.txt"
    p.write_text("old")
    with pytest.raises(RuntimeError):
        with open_atomic(p, "w", encoding="utf-8") as fh:
            fh.write("half of the new")
            raise RuntimeError("interrupted")
    assert p.read_text() == "old"
    assert [x.name for x in tmp_path.iterdir()] == ["f.txt"]


def test_append_mode_is_refused(tmp_path):
    with pytest.raises(ValueError):
        with open_atomic(tmp_path / "f", "a"):
            pass
