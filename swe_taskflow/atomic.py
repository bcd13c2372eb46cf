"""The one atomic file writer: readers see the old content or the new one, never a part.

A temp file in the target's own folder (so the rename stays on one file system), fsync, then
``os.replace``; on any failure the temp file is removed and the old content is left as it was.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator


@contextmanager
def open_atomic(path: str | os.PathLike, mode: str = "wb", *, encoding: str | None = None) -> Iterator[IO]:
    """A file handle whose content replaces ``path`` when the block ends without an exception."""
    if mode not in ("wb", "w"):
        raise ValueError(f"open_atomic writes whole files: mode 'w' or 'wb', not {mode!r}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, mode, encoding=encoding if mode == "w" else None) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    with open_atomic(path, "wb") as fh:
        fh.write(data)


def write_text(path: str | os.PathLike, text: str, *, encoding: str = "utf-8") -> None:
    write_bytes(path, text.encode(encoding))


__all__ = ["open_atomic", "write_bytes", "write_text"]
