"""Content hashes that do not depend on any file writer.

A row's identity is the SHA-256 of its RFC 8785 canonical JSON (sorted keys, fixed number and
string forms), so a row read back from parquet, JSON or memory hashes the same. A split's hash
covers its ordered row hashes (order is part of a condition); a file's hash is the plain SHA-256 of
its bytes, which is what the Hub reports as the LFS oid.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any, Iterable, Mapping

import rfc8785

from .errors import InputError

#: The field of a row that holds the row's own hash (never part of what is hashed).
ROW_HASH_FIELD = "row_sha256"
#: Fields of a Task that describe the pipeline's handling, not the task: left out of its hash.
TASK_UNHASHED = ("status", "reason")


def canonical_json(obj: Any) -> bytes:
    """RFC 8785 (JCS) bytes of ``obj``; tuples count as arrays. NaN/inf and huge ints are refused."""
    try:
        return rfc8785.dumps(obj)
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:
        raise InputError(f"value cannot be canonicalized as JSON: {exc}") from None


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def json_sha256(obj: Any) -> str:
    """SHA-256 of the canonical JSON of ``obj`` (schemas, proof reports, recipes, manifests)."""
    return sha256_hex(canonical_json(obj))


def row_sha256(row: Mapping[str, Any], *, field: str = ROW_HASH_FIELD) -> str:
    """Hash of a release row's canonical JSON, without its own hash field."""
    return json_sha256({k: v for k, v in row.items() if k != field})


def task_sha256(task: Any) -> str:
    """Hash of a normalized source task (a ``schema.Task`` or its dict), without status/reason.

    Two conditions' rows with the same value were derived from byte-identical task records.
    """
    d = task.to_dict() if hasattr(task, "to_dict") else dict(task)
    return json_sha256({k: v for k, v in d.items() if k not in TASK_UNHASHED})


def split_sha256(row_hashes: Iterable[str]) -> str:
    """Hash of a split: SHA-256 over its row hashes in order, each as 64 hex chars and a newline.

    An auditor can recompute it with ``sha256sum`` over a text file of the row hashes.
    """
    h = hashlib.sha256()
    for rh in row_hashes:
        if len(rh) != 64:
            raise InputError("not a sha256 hex digest", field=ROW_HASH_FIELD, actual=rh)
        h.update(rh.encode("ascii"))
        h.update(b"\n")
    return h.hexdigest()


def file_sha256(path: str | os.PathLike, *, chunk_size: int = 1 << 20) -> str:
    """SHA-256 of a file, streamed (the Hub's LFS oid for the same bytes)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while True:
            block = fh.read(chunk_size)
            if not block:
                break
            h.update(block)
    return h.hexdigest()


def git_blob_sha1(data: bytes) -> str:
    """The git blob id of ``data`` (what the Hub reports for a file stored without LFS)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


__all__ = ["ROW_HASH_FIELD", "canonical_json", "sha256_hex", "json_sha256", "row_sha256", "task_sha256",
           "split_sha256", "file_sha256", "git_blob_sha1"]
