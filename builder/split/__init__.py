"""Prompt splitting: one issue -> three ordered user turns, or single-turn with the reasons.

``get_splitter("structural")`` needs no model (offline default); ``get_splitter("llm", llm=backend)``
follows the Appendix E contract through a :mod:`builder.llm` backend.
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol, runtime_checkable

from swe_taskflow.errors import ConfigError
from swe_taskflow.schema import SplitResult, Task

from .llm_splitter import LLMSplitConfig, LLMSplitter
from .structural import StructuralConfig, StructuralSplitter

SPLITTERS = ("structural", "llm")


@runtime_checkable
class Splitter(Protocol):
    """The splitter seam. ``info`` identifies the splitter (name, model, prompt hash: part of cache keys and
    provenance)."""

    info: Mapping[str, Any]

    def split(self, task: Task) -> SplitResult: ...


def get_splitter(name: str = "structural", **cfg: Any) -> Splitter:
    """A splitter by name. ``llm`` needs ``llm=<backend>``; other keywords fill its config dataclass."""
    if name == "structural":
        try:
            return StructuralSplitter(StructuralConfig(**cfg))
        except TypeError as exc:
            raise ConfigError(f"bad setting for the structural splitter: {exc}") from None
    if name == "llm":
        llm = cfg.pop("llm", None)
        if llm is None:
            raise ConfigError("the llm splitter needs an LLM backend", field="llm",
                              hint="pass llm=builder.llm.get_backend(...)")
        try:
            return LLMSplitter(llm, LLMSplitConfig(**cfg))
        except TypeError as exc:
            raise ConfigError(f"bad setting for the llm splitter: {exc}") from None
    raise ConfigError(f"unknown splitter {name!r}", field="splitter", actual=name, expected=SPLITTERS)


__all__ = ["SPLITTERS", "Splitter", "LLMSplitConfig", "LLMSplitter", "StructuralConfig", "StructuralSplitter", "get_splitter"]
