"""The splitter seam: one issue -> three ordered user turns, or single-turn with the reasons."""

from __future__ import annotations

from typing import Any, Mapping, Protocol, runtime_checkable

from swe_taskflow.schema import SplitResult, Task


@runtime_checkable
class Splitter(Protocol):
    """``info`` identifies the splitter (name, model, prompt hash: part of cache keys and provenance)."""

    info: Mapping[str, Any]

    def split(self, task: Task) -> SplitResult: ...


__all__ = ["Splitter"]
