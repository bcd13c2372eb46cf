"""swe_taskflow.untrusted: lstat first, no link followed, never a FIFO or device, size bounded before reading,
gzip bounded after decompressing; every refusal an InputError naming the file (issue 32)."""

from __future__ import annotations

import gzip
import os
import socket
import tracemalloc

import pytest

from swe_taskflow import untrusted
from swe_taskflow.errors import InputError, TaskflowError
from tests.support.no_hang import no_hang




def test_a_regular_file_is_read(tmp_path):
    (tmp_path / "a.json").write_text('{"x": 1}')
    assert untrusted.read_json(tmp_path / "a.json") == {"x": 1}
    assert untrusted.read_text(tmp_path / "a.json") == '{"x": 1}'


def test_a_fifo_is_refused_before_it_is_opened(tmp_path):
    os.mkfifo(tmp_path / "f")
    with no_hang(5), pytest.raises(untrusted.UntrustedPathError, match="a FIFO") as exc:
        untrusted.read_bytes(tmp_path / "f", "manifest")
    assert exc.value.path == str(tmp_path / "f") and isinstance(exc.value, TaskflowError)


def test_a_device_and_a_socket_are_refused(tmp_path):
    with pytest.raises(InputError, match="character device"):
        untrusted.read_bytes("/dev/zero")
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(tmp_path / "s"))
    try:
        with pytest.raises(InputError, match="socket"):
            untrusted.read_bytes(tmp_path / "s")
    finally:
        s.close()


def test_a_link_is_never_followed(tmp_path):
    (tmp_path / "secret").write_text("host secret")
    (tmp_path / "link").symlink_to(tmp_path / "secret")
    with pytest.raises(InputError, match="symbolic link") as exc:
        untrusted.read_text(tmp_path / "link")
    assert "host secret" not in str(exc.value)


def test_a_link_below_the_root_is_never_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.json").write_text("{}")
    root = tmp_path / "root"
    root.mkdir()
    (root / "sub").symlink_to(outside)
    with pytest.raises(InputError, match="real folder is expected"):
        untrusted.read_json(root / "sub" / "x.json", root=root)
    with pytest.raises(InputError, match="outside its folder"):
        untrusted.read_json(outside / "x.json", root=root)


def test_the_size_is_bounded_before_reading_and_named(tmp_path):
    p = tmp_path / "big"
    with open(p, "wb") as fh:          # sparse: 8 GiB that would take minutes to read
        fh.truncate(8 << 30)
    tracemalloc.start()
    with pytest.raises(InputError, match=r"larger than the limit for a manifest \(67108864 bytes\)") as exc:
        untrusted.read_bytes(p, "manifest")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1 << 20 and "8589934592 bytes" in str(exc.value)


def test_a_folder_where_a_file_is_expected_and_the_reverse(tmp_path):
    with pytest.raises(InputError, match="is a folder"):
        untrusted.read_bytes(tmp_path)
    (tmp_path / "f").write_text("x")
    with pytest.raises(InputError, match="a real folder is expected"):
        untrusted.list_dir(tmp_path / "f")
    (tmp_path / "d").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(InputError, match="symbolic link"):
        untrusted.list_dir(tmp_path / "d")
    names = {e.name: e for e in untrusted.list_dir(tmp_path)}
    assert names["f"].is_file and not names["d"].is_dir       # the link is listed as a link, not followed


def test_a_gzip_bomb_is_bounded_after_decompressing(tmp_path):
    p = tmp_path / "bomb.traj.json.gz"
    member = gzip.compress(b"\0" * (1 << 26), compresslevel=9)   # 64 MiB of zeros in ~65 kB
    p.write_bytes(member * 45)                                    # ~2.9 MB on disk, 2.8 GiB decompressed
    assert 2 << 20 < p.stat().st_size < 4 << 20
    tracemalloc.start()
    with pytest.raises(InputError, match="decompresses to more than"):
        untrusted.read_maybe_gzip(p, "trajectory file", decompressed_limit=16 << 20)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 200 << 20, f"{peak / 1e6:.0f} MB"


def test_bad_json_names_file_and_line(tmp_path):
    (tmp_path / "a.json").write_text('{\n"x": }')
    with pytest.raises(InputError, match="not valid JSON") as exc:
        untrusted.read_json(tmp_path / "a.json")
    assert exc.value.row == 2 and exc.value.path == str(tmp_path / "a.json")
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InputError, match="nested too deeply"):
        untrusted.read_json(tmp_path / "deep.json")


def test_recipe_paths_may_be_links_but_never_special_files(tmp_path):
    (tmp_path / "pool.jsonl").write_text("")
    (tmp_path / "alias.jsonl").symlink_to(tmp_path / "pool.jsonl")
    untrusted.check_recipe_path(tmp_path / "alias.jsonl", "pool")
    os.mkfifo(tmp_path / "fifo")
    with no_hang(5), pytest.raises(InputError, match="a FIFO"):
        untrusted.check_recipe_path(tmp_path / "fifo", "pool")
