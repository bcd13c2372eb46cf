"""Reading a Harbor job folder as untrusted input: no symlink, no path outside the trial, typed fields.

A job folder is written by whatever ran in it (an agent's answer file, a verifier's output), so every
read goes through here: each path is built from the trial folder and names that are single safe path
components, and every component is ``lstat``-ed so a symbolic link is refused with its path, never
followed; files are read through :mod:`swe_taskflow.untrusted` (``lstat`` first, so a FIFO or a device is
never opened; ``O_NOFOLLOW``; a size bound); JSON must be UTF-8 and not nested past
Python's recursion limit; a field of the wrong type is an :class:`InputError` naming the file and the
field's path (``step_results[2].verifier_result.rewards.resolved``). Values of the right type but
impossible (a reward of 2, a negative token count, a NaN) are not errors here: :func:`check_reward`
and :func:`check_usage` return the reason, and the trial is reported invalid.
"""

from __future__ import annotations

import math
import os
import re
import stat
from pathlib import Path
from typing import Any, Mapping

from swe_taskflow import untrusted
from swe_taskflow.errors import InputError

#: The largest JSON file read from a job folder (result.json, checkpoint.json, a trajectory).
MAX_JSON_BYTES = 256 << 20
#: Answers are kept up to this many bytes (UTF-8); a longer answer is cut there and marked truncated.
MAX_ANSWER_BYTES = 1 << 20
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
#: Rewards that are verdicts: exactly 0 or 1.
#: (``answered``: an answer step; ``safe`` / ``correct``: a stress step's verdict, docs/stress.md.)
BINARY_REWARDS = ("resolved", "clean_resolved", "answered", "safe", "correct")
#: Rewards that are test counts: non-negative whole numbers.
COUNT_SUFFIXES = ("tests_passed", "tests_failed")


def safe_name(name: Any, *, path: str, field: str) -> str:
    """``name`` when it is one safe path component (no separator, no '..', no leading dot)."""
    if not isinstance(name, str) or not _SAFE_NAME.match(name) or name in (".", ".."):
        raise InputError("not a single safe path component (letters, digits, '.', '_', '-')", path=path,
                         field=field, actual=name)
    return name


def no_link(base: Path, *parts: str) -> Path | None:
    """``base / parts...`` when it exists and no component below ``base`` (nor ``base``) is a symlink.

    None when it does not exist; an InputError naming the link when one is met."""
    p = base
    for part in ("", *parts):
        p = p / part if part else p
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(st.st_mode):
            raise InputError("a symbolic link in a job folder is never followed", path=str(p))
    return p


def read_bytes(path: Path, limit: int) -> tuple[bytes, bool]:
    """(up to ``limit`` bytes of the regular file ``path``, whether it held more), through
    :mod:`swe_taskflow.untrusted`: ``lstat`` first, so a link, a FIFO (which would block the read forever), a
    socket or a device is refused before anything is opened."""
    return untrusted.read_prefix(path, "job file", limit)


def load_json(path: Path, limit: int = MAX_JSON_BYTES, what: str = "JSON file") -> Any:
    """A JSON document of a job folder (UTF-8, at most ``limit`` bytes, bounded depth)."""
    return untrusted.read_json(path, what, limit=limit)


def read_answer(path: Path, limit: int = MAX_ANSWER_BYTES) -> tuple[str, bool]:
    """(the answer text, truncated?): cut at ``limit`` bytes on a character boundary; bad UTF-8 replaced."""
    raw, more = read_bytes(path, limit)
    if more:                                 # do not cut a multi-byte character in two
        i = len(raw)
        while i > 0 and (raw[i - 1] & 0xC0) == 0x80:
            i -= 1
        if i > 0 and raw[i - 1] >= 0xC0:
            need = 2 if raw[i - 1] < 0xE0 else 3 if raw[i - 1] < 0xF0 else 4
            if len(raw) - (i - 1) < need:
                raw = raw[:i - 1]
    return raw.decode("utf-8", errors="replace"), more


class Fields:
    """Typed access to one JSON document, every error naming its file and the field's path."""

    def __init__(self, path: Path | str):
        self.path = str(path)

    def fail(self, field: str, what: str, value: Any) -> InputError:
        return InputError(f"expected {what}", path=self.path, field=field, actual=_kind(value))

    def obj(self, value: Any, field: str, *, optional: bool = True) -> dict[str, Any]:
        if value is None and optional:
            return {}
        if not isinstance(value, Mapping):
            raise self.fail(field, "an object", value)
        return dict(value)

    def list(self, value: Any, field: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(field, "a list", value)
        return value

    def str(self, value: Any, field: str, *, optional: bool = True) -> str | None:
        if value is None and optional:
            return None
        if not isinstance(value, str):
            raise self.fail(field, "a string", value)
        return value

    def num(self, value: Any, field: str) -> float | None:
        """A number (NaN and infinities included: their impossibility is checked, not their type)."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(field, "a number", value)
        return float(value)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(type(value), type(value).__name__)


def check_reward(key: str, value: float) -> str | None:
    """Why ``value`` cannot be the reward ``key`` (None when it can)."""
    if not math.isfinite(value):
        return f"reward {key} is {value} (not finite)"
    if key.endswith(COUNT_SUFFIXES):
        if value < 0 or value != int(value):
            return f"reward {key} is {value} (a test count must be a non-negative whole number)"
        return None
    if key in BINARY_REWARDS and value not in (0.0, 1.0):
        return f"reward {key} is {value} (must be exactly 0 or 1)"
    if not 0.0 <= value <= 1.0:
        return f"reward {key} is {value} (must lie in [0, 1])"
    return None


def check_usage(key: str, value: float) -> str | None:
    """Why ``value`` cannot be the usage figure ``key`` (token counts, calls: whole; cost: finite, >= 0)."""
    if not math.isfinite(value) or value < 0:
        return f"{key} is {value} (must be finite and non-negative)"
    if key != "cost_usd" and value != int(value):
        return f"{key} is {value} (must be a whole number)"
    return None


def finite(obj: Any) -> Any:
    """``obj`` with every non-finite float replaced by None (strict JSON out, whatever came in)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, Mapping):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


__all__ = ["MAX_ANSWER_BYTES", "MAX_JSON_BYTES", "safe_name", "no_link", "read_bytes", "load_json", "read_answer",
           "Fields", "check_reward", "check_usage", "finite"]
