"""The one way to read a path that someone else wrote (a release, a job folder, a recipe's files, trajectories).

Every reader of untrusted input goes through here (``tests/unit/test_untrusted_paths.py`` fails when one of
them opens a path another way), so the rules hold once, not case by case:

- ``lstat`` first: only a regular file (or a folder where one is expected) is used; a symbolic link is never
  followed (with ``root``, no component below it may be one either); a FIFO, socket or device is never opened
  (opening a FIFO for reading blocks forever);
- the size is bounded **before** reading, by a limit per kind of file (:data:`LIMITS`) that the error names;
- files are opened with ``O_NOFOLLOW | O_NONBLOCK`` and the opened file is checked to be the one ``lstat`` saw;
- a gzip file is decompressed with a bound on the decompressed size (a 2.9 MB bomb never takes GBs);
- every refusal is an :class:`UntrustedPathError` (an :class:`~swe_taskflow.errors.InputError`) naming the file.
"""

from __future__ import annotations

import json
import os
import stat
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from .errors import InputError

MiB = 1 << 20
#: The largest file of each kind read from untrusted input, in bytes (the error names kind and limit).
LIMITS: dict[str, int] = {
    "manifest": 64 * MiB,
    "README": 16 * MiB,
    "croissant file": 64 * MiB,
    "target file": 16 * MiB,
    "recipe file": 4 * MiB,
    "job JSON file": 256 * MiB,
    "task file": 256 * MiB,
    "answer file": 1 * MiB,
    "trajectory file": 256 * MiB,
    "question pool file": 1024 * MiB,
    "JSON file": 256 * MiB,
    "parquet shard": 2048 * MiB,
    "release file": 2048 * MiB,
    "file": 1024 * MiB,
}
#: The most bytes a gzip file may decompress to (a trajectory or a source file).
MAX_DECOMPRESSED_BYTES = 256 * MiB
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class UntrustedPathError(InputError):
    """An untrusted path refused before anything behind it was read (a link, a FIFO, too large, ...)."""


@dataclass(frozen=True)
class Entry:
    """One entry of an untrusted folder, as ``lstat`` saw it (never followed)."""

    name: str
    path: Path
    st: os.stat_result

    @property
    def is_file(self) -> bool:
        return stat.S_ISREG(self.st.st_mode)

    @property
    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.st.st_mode)

    @property
    def size(self) -> int:
        return self.st.st_size


def kind_of(mode: int) -> str:
    """What a file mode is, in words (for an error)."""
    for test, name in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a symbolic link"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a regular file"


def limit_for(kind: str) -> int:
    return LIMITS.get(kind, LIMITS["file"])


def _lstat(path: Path, what: str) -> os.stat_result:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        raise UntrustedPathError(f"{what} not found", path=str(path)) from None
    except OSError as exc:
        raise UntrustedPathError(f"{what} cannot be read ({exc.strerror or exc})", path=str(path)) from None


def _no_link_below(root: Path, path: Path, what: str) -> None:
    """Every component of ``path`` below ``root`` (``path`` itself excepted) is a real folder, not a link."""
    try:
        rel = path.relative_to(root)
    except ValueError:
        raise UntrustedPathError(f"{what} lies outside its folder", path=str(path), hint=f"it must be under {root}") \
            from None
    p = root
    for part in rel.parts[:-1]:
        p = p / part
        st = _lstat(p, what)
        if not stat.S_ISDIR(st.st_mode):
            raise UntrustedPathError(f"{what}: {p} is {kind_of(st.st_mode)}, a real folder is expected (a link is "
                                     "never followed)", path=str(path))


def check_file(path: str | os.PathLike, kind: str = "file", *, limit: int | None = None,
               root: str | os.PathLike | None = None) -> os.stat_result:
    """The ``lstat`` of ``path`` when it is a regular file (not a link) of at most ``limit`` bytes (default: the
    kind's :data:`LIMITS`); with ``root``, no folder between ``root`` and it may be a link. Reads nothing."""
    path = Path(path)
    if root is not None:
        _no_link_below(Path(root), path, kind)
    st = _lstat(path, kind)
    if stat.S_ISDIR(st.st_mode):
        raise UntrustedPathError(f"{kind} is a folder, a file is expected", path=str(path))
    if stat.S_ISLNK(st.st_mode):
        target = os.readlink(path)
        raise UntrustedPathError(f"{kind} is a symbolic link (to {target!r}); a link is never followed", path=str(path))
    if not stat.S_ISREG(st.st_mode):
        raise UntrustedPathError(f"{kind} is {kind_of(st.st_mode)}, not a regular file (never opened)", path=str(path))
    bound = limit_for(kind) if limit is None else limit
    if st.st_size > bound:
        raise UntrustedPathError(f"{kind} is larger than the limit for a {kind} ({bound} bytes)", path=str(path),
                                 expected=f"<= {bound} bytes", actual=f"{st.st_size} bytes")
    return st


def check_dir(path: str | os.PathLike, kind: str = "folder", *, root: str | os.PathLike | None = None) -> Path:
    """``path`` when it is a real folder (not a link to one); reads nothing."""
    path = Path(path)
    if root is not None:
        _no_link_below(Path(root), path, kind)
    st = _lstat(path, kind)
    if not stat.S_ISDIR(st.st_mode):
        raise UntrustedPathError(f"{kind} is {kind_of(st.st_mode)}, a real folder is expected (a link is never "
                                 "followed)", path=str(path))
    return path


def list_dir(path: str | os.PathLike, kind: str = "folder", *, root: str | os.PathLike | None = None) -> list[Entry]:
    """The entries of a real folder, sorted by name, each with its ``lstat`` (nothing followed or opened)."""
    path = check_dir(path, kind, root=root)
    out = []
    try:
        with os.scandir(path) as it:
            for e in it:
                out.append(Entry(e.name, path / e.name, e.stat(follow_symlinks=False)))
    except OSError as exc:
        raise UntrustedPathError(f"{kind} cannot be listed ({exc.strerror or exc})", path=str(path)) from None
    return sorted(out, key=lambda e: e.name)


def open_file(path: str | os.PathLike, kind: str = "file", *, limit: int | None = None,
              root: str | os.PathLike | None = None) -> BinaryIO:
    """A binary file object on the regular file ``path`` (checked by :func:`check_file` first, opened with
    ``O_NOFOLLOW | O_NONBLOCK``, and checked to be the very file that was ``lstat``-ed)."""
    path = Path(path)
    st = check_file(path, kind, limit=limit, root=root)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        raise UntrustedPathError(f"{kind} cannot be opened ({exc.strerror or exc})", path=str(path)) from None
    now = os.fstat(fd)
    if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
        os.close(fd)
        raise UntrustedPathError(f"{kind} changed while it was opened", path=str(path))
    return os.fdopen(fd, "rb")


def file_sha256(path: str | os.PathLike, kind: str = "file", *, root: str | os.PathLike | None = None,
                chunk_size: int = 1 << 20) -> str:
    """SHA-256 of a regular file's bytes, streamed (no size limit: the caller decided by name and size first)."""
    import hashlib

    h = hashlib.sha256()
    with open_file(path, kind, limit=1 << 62, root=root) as fh:
        for block in iter(lambda: fh.read(chunk_size), b""):
            h.update(block)
    return h.hexdigest()


def read_bytes(path: str | os.PathLike, kind: str = "file", *, limit: int | None = None,
               root: str | os.PathLike | None = None) -> bytes:
    """All bytes of a regular file of at most ``limit`` bytes (a file that grows past it is refused too)."""
    bound = limit_for(kind) if limit is None else limit
    with open_file(path, kind, limit=bound, root=root) as fh:
        data = _read_upto(fh, bound + 1)
    if len(data) > bound:
        raise UntrustedPathError(f"{kind} is larger than the limit for a {kind} ({bound} bytes)", path=str(path))
    return data


def read_prefix(path: str | os.PathLike, kind: str, limit: int, *,
                root: str | os.PathLike | None = None) -> tuple[bytes, bool]:
    """(the first ``limit`` bytes of a regular file of any size, whether it held more): for a file kept cut."""
    with open_file(path, kind, limit=1 << 62, root=root) as fh:
        data = _read_upto(fh, limit + 1)
    return data[:limit], len(data) > limit


def _read_upto(fh: BinaryIO, n: int) -> bytes:
    """At most ``n`` bytes, in memory proportional to what the file holds (``fh.read(n)`` would allocate ``n``
    bytes at once: 256 MiB for every small job file)."""
    first = min(n, os.fstat(fh.fileno()).st_size + 1)
    data = fh.read(first)
    if len(data) < first:
        return data
    parts = [data]
    got = len(data)
    while got < n:   # the file grew since it was measured: read on in bounded steps
        block = fh.read(min(1 << 20, n - got))
        if not block:
            break
        parts.append(block)
        got += len(block)
    return b"".join(parts)


def decode(raw: bytes, *, path: str | os.PathLike, kind: str = "file") -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise UntrustedPathError(f"{kind} is not valid UTF-8 (byte {exc.start})", path=str(path), row=line) from None


def read_text(path: str | os.PathLike, kind: str = "file", *, limit: int | None = None,
              root: str | os.PathLike | None = None) -> str:
    """A bounded UTF-8 text file."""
    return decode(read_bytes(path, kind, limit=limit, root=root), path=path, kind=kind)


def parse_json(raw: bytes, *, path: str | os.PathLike, kind: str = "JSON file") -> Any:
    """JSON bytes as a value; bad UTF-8, bad syntax and nesting too deep are errors naming the file."""
    text = decode(raw, path=path, kind=kind)
    try:
        return json.loads(text)
    except RecursionError:
        raise UntrustedPathError(f"{kind} is JSON nested too deeply", path=str(path)) from None
    except json.JSONDecodeError as exc:
        raise UntrustedPathError(f"{kind} is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})",
                                 path=str(path), row=exc.lineno) from None


def read_json(path: str | os.PathLike, kind: str = "JSON file", *, limit: int | None = None,
              root: str | os.PathLike | None = None) -> Any:
    """A bounded JSON document (see :func:`parse_json`)."""
    return parse_json(read_bytes(path, kind, limit=limit, root=root), path=path, kind=kind)


def gunzip(raw: bytes, *, path: str | os.PathLike, kind: str = "file",
           limit: int = MAX_DECOMPRESSED_BYTES) -> bytes:
    """Decompress gzip bytes, never past ``limit`` decompressed bytes (the reader decompresses in bounded
    steps, so a bomb costs at most ``limit`` bytes of memory before it is refused)."""
    out = bytearray()
    data = raw
    try:
        while data:   # one gzip member after another (``cat a.gz b.gz`` is valid gzip)
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            chunk = d.decompress(data, limit + 1 - len(out))
            out += chunk
            while d.unconsumed_tail and len(out) <= limit:
                out += d.decompress(d.unconsumed_tail, limit + 1 - len(out))
            if len(out) > limit:
                raise UntrustedPathError(f"{kind} decompresses to more than {limit} bytes (the limit for a {kind})",
                                         path=str(path))
            if not d.eof:
                raise UntrustedPathError(f"{kind} is not valid gzip (truncated)", path=str(path))
            data = d.unused_data.lstrip(b"\0")
    except zlib.error as exc:
        raise UntrustedPathError(f"{kind} is not valid gzip ({exc})", path=str(path)) from None
    return bytes(out)


def read_maybe_gzip(path: str | os.PathLike, kind: str = "file", *, limit: int | None = None,
                    decompressed_limit: int = MAX_DECOMPRESSED_BYTES, root: str | os.PathLike | None = None) -> bytes:
    """The bytes of a file, decompressed (bounded) when its name ends in ``.gz``."""
    raw = read_bytes(path, kind, limit=limit, root=root)
    if str(path).endswith(".gz"):
        return gunzip(raw, path=path, kind=kind, limit=decompressed_limit)
    return raw


def check_recipe_path(path: str | os.PathLike, what: str) -> None:
    """A path a recipe names (a source, a pool, a target): it may be reached through a link (the user's own
    checkout), but what it names must be a regular file or a folder, never a FIFO, socket or device."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise UntrustedPathError(f"{what} not found", path=str(path)) from None
    except OSError as exc:
        raise UntrustedPathError(f"{what} cannot be read ({exc.strerror or exc})", path=str(path)) from None
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        raise UntrustedPathError(f"{what} is {kind_of(st.st_mode)}, not a regular file or folder (never opened)",
                                 path=str(path))


__all__ = ["LIMITS", "MAX_DECOMPRESSED_BYTES", "UntrustedPathError", "Entry", "kind_of", "limit_for", "check_file",
           "check_dir", "list_dir", "open_file", "file_sha256", "read_bytes", "read_prefix", "decode", "read_text", "parse_json",
           "read_json", "gunzip", "read_maybe_gzip", "check_recipe_path"]
