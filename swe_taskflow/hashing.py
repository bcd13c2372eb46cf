"""Content hashes that do not depend on any file writer: the project's one place for canonical JSON.

Two canonical forms, each with one job (see CHANGELOG.md):

- :func:`canonical_json` / :func:`canonical_sha256`: RFC 8785 (JCS), strict (non-JSON values are refused).
  Everything a release publishes is hashed this way: rows, splits, features, manifests, recipes.
- :func:`key_json` / :func:`key_sha256`: Python's compact sorted ``json.dumps`` with ``default=str``.
  Addresses of build work (stage cache keys, LLM response store, sandbox images): any value hashes,
  and the bytes are those the cache keys have always had, so existing caches stay valid.

A row's identity is the SHA-256 of its RFC 8785 canonical JSON (sorted keys, fixed number and
string forms), so a row read back from parquet, JSON or memory hashes the same. A split's hash
covers its ordered row hashes (order is part of a condition); a file's hash is the plain SHA-256 of
its bytes, which is what the Hub reports as the LFS oid.
"""

from __future__ import annotations

import hashlib
import json
import os
from json.encoder import encode_basestring as _encode_str  # C; escapes as RFC 8785
from typing import Any, Callable, Iterable, Mapping

import rfc8785

from .errors import InputError

#: The field of a row that holds the row's own hash (never part of what is hashed).
ROW_HASH_FIELD = "row_sha256"
#: Fields of a Task that describe the pipeline's handling, not the task: left out of its hash.
TASK_UNHASHED = ("status", "reason")


_INT_MAX = 2**53 - 1


def _sorted_keys(d: Mapping[str, Any]) -> list[str]:
    """RFC 8785 3.2.3: keys ordered by their UTF-16 code units (code-point order equals it for ASCII)."""
    try:
        if all(k.isascii() for k in d):
            return sorted(d)
        return sorted(d, key=lambda k: k.encode("utf-16-be", "surrogatepass"))
    except AttributeError:
        raise InputError("object keys must be strings", actual=sorted(map(repr, d))) from None


def _encode(obj: Any, out: list[str]) -> None:
    # Same output as rfc8785.dumps (tests compare them on random values), about twice as fast:
    # exact-type dispatch, and strings through the C JSON string encoder, whose escapes are exactly
    # JCS's (RFC 8785 3.2.2.2: \b \t \n \f \r \" \\ short forms, other controls as \u00xx).
    app = out.append
    t = type(obj)
    if t is str:
        app(_encode_str(obj))
    elif t is dict:
        app("{")
        for n, k in enumerate(_sorted_keys(obj)):
            if n:
                app(",")
            app(_encode_str(k))
            app(":")
            _encode(obj[k], out)
        app("}")
    elif t is list or t is tuple:
        app("[")
        for n, v in enumerate(obj):
            if n:
                app(",")
            _encode(v, out)
        app("]")
    elif obj is None:
        app("null")
    elif obj is True:
        app("true")
    elif obj is False:
        app("false")
    elif t is int:
        if not -_INT_MAX <= obj <= _INT_MAX:
            raise InputError("integer outside the I-JSON range (+-2**53-1)", actual=obj)
        app(str(obj))
    elif t is float:
        try:
            app(rfc8785.dumps(obj).decode("ascii"))   # ECMAScript number form
        except rfc8785.CanonicalizationError as exc:
            raise InputError(f"number cannot be canonicalized ({exc})", actual=obj) from None
    elif isinstance(obj, bool):
        app("true" if obj else "false")
    elif isinstance(obj, str):
        _encode(str(obj), out)
    elif isinstance(obj, int):
        _encode(int(obj), out)
    elif isinstance(obj, float):
        _encode(float(obj), out)
    elif isinstance(obj, Mapping):
        _encode(dict(obj), out)
    elif isinstance(obj, (list, tuple)):
        _encode(list(obj), out)
    else:
        raise InputError("value is not JSON", actual=type(obj).__name__)


def canonical_json(obj: Any) -> bytes:
    """RFC 8785 (JCS) bytes of ``obj``; tuples count as arrays. NaN/inf, huge ints, lone surrogates are refused."""
    out: list[str] = []
    _encode(obj, out)
    try:
        return "".join(out).encode("utf-8")
    except UnicodeEncodeError:
        raise InputError("value holds text that is not valid Unicode (lone surrogate)") from None


def compact_json_text(obj: Any, *, default: Callable[[Any], Any] | None = None) -> str:
    """Sorted keys, no whitespace, UTF-8 text kept as is: JSON Lines rows and cache-key bytes."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=default)


def key_json(obj: Any) -> bytes:
    """The bytes a cache key hashes: :func:`compact_json_text` with any non-JSON value as its ``str``."""
    return compact_json_text(obj, default=str).encode("utf-8")


def key_sha256(obj: Any) -> str:
    """SHA-256 of :func:`key_json`: the address of build work (never of published content)."""
    return sha256_hex(key_json(obj))


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical_sha256(obj: Any) -> str:
    """SHA-256 of the canonical JSON of ``obj`` (schemas, proof reports, recipes, manifests)."""
    return sha256_hex(canonical_json(obj))


def row_sha256(row: Mapping[str, Any], *, field: str = ROW_HASH_FIELD) -> str:
    """Hash of a release row's canonical JSON, without its own hash field."""
    return canonical_sha256({k: v for k, v in row.items() if k != field})


def task_sha256(task: Any) -> str:
    """Hash of a normalized source task (a ``schema.Task`` or its dict), without status/reason.

    Two conditions' rows with the same value were derived from byte-identical task records.
    """
    d = task.to_dict() if hasattr(task, "to_dict") else dict(task)
    return canonical_sha256({k: v for k, v in d.items() if k not in TASK_UNHASHED})


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
        for block in iter(lambda: fh.read(chunk_size), b""):
            h.update(block)
    return h.hexdigest()


def git_blob_sha1(data: bytes) -> str:
    """The git blob id of ``data`` (what the Hub reports for a file stored without LFS)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


__all__ = ["ROW_HASH_FIELD", "canonical_json", "compact_json_text", "key_json", "key_sha256", "sha256_hex", "canonical_sha256", "row_sha256", "task_sha256",
           "split_sha256", "file_sha256", "git_blob_sha1"]
