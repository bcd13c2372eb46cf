"""One exception root for the whole project.

Every error carries the facts a user needs to fix the input (file, row, field, expected, actual)
so that the CLI can print one precise line instead of a traceback.
"""

from __future__ import annotations

from typing import Any


class TaskflowError(Exception):
    """Root of every error raised on purpose by swe-taskflow."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        row: int | None = None,
        field: str | None = None,
        expected: Any = None,
        actual: Any = None,
        hint: str | None = None,
    ) -> None:
        self.message = message
        self.path = None if path is None else str(path)
        self.row = row
        self.field = field
        self.expected = expected
        self.actual = actual
        self.hint = hint
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path
            if self.row is not None:
                where += f":{self.row}"
            where += ": "
        elif self.row is not None:
            where = f"row {self.row}: "
        field = f"field '{self.field}': " if self.field else ""
        text = f"{where}{field}{self.message}"
        facts = ([f"expected {_short(self.expected)}"] if self.expected is not None else []) + \
                ([f"got {_short(self.actual)}"] if self.actual is not None else [])
        if facts:   # only the sides that are known: never "expected None"
            text += f" ({', '.join(facts)})"
        if self.hint:
            text += f". {self.hint}"
        return text


class InputError(TaskflowError):
    """A malformed input file, row or field."""


class ConfigError(TaskflowError):
    """An unknown name or invalid setting in a config, recipe or command line."""


class FlowError(TaskflowError):
    """A Task Flow that cannot be measured or scored (e.g. an empty distribution)."""


class ModelError(TaskflowError):
    """A model (classifier, LLM) that cannot be loaded or run."""


class ReplayMissError(TaskflowError):
    """A replay-only LLM run asked for a response that the response store does not hold."""


class SandboxError(TaskflowError):
    """The proof sandbox itself failed (no Docker, no bubblewrap, image missing): never a failed proof."""


class VerifyError(TaskflowError):
    """A release that does not verify. ``kind`` is one of missing, unexpected, mismatch."""

    def __init__(self, message: str, *, kind: str = "mismatch", **kw: Any) -> None:
        self.kind = kind
        super().__init__(message, **kw)


class PublishError(TaskflowError):
    """A push to the Hub that was refused or did not land as the manifest says."""


def _short(value: Any, limit: int = 200) -> str:
    """``repr`` of a value for a one-line message: newlines escaped, long values cut in the middle."""
    text = repr(value)
    if len(text) > limit:
        text = f"{text[: limit // 2]}...{text[-limit // 2:]} ({len(text)} chars)"
    return text
