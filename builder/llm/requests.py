"""What an LLM is asked and what it answers: the request whose canonical JSON addresses a reply in the response
store, and the reply with its facts. A leaf module: the backends and the store both build on it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from swe_taskflow.errors import InputError
from swe_taskflow.hashing import sha256_json

Message = Mapping[str, str]


def canonical_messages(messages: Sequence[Message]) -> list[dict[str, str]]:
    """Messages as plain ``{role, content}`` dicts; anything else is an input error."""
    out = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping) or not isinstance(m.get("role"), str) or not isinstance(m.get("content"), str):
            raise InputError("a message must be {'role': str, 'content': str}", field=f"messages[{i}]")
        out.append({"role": m["role"], "content": m["content"]})
    return out


@dataclass(frozen=True)
class LLMRequest:
    """What determines a response: the model, its sampling parameters and the messages."""

    model: str
    params: Mapping[str, Any]
    messages: tuple[Mapping[str, str], ...]

    def canonical(self) -> dict[str, Any]:
        return {"model": self.model, "params": dict(sorted(self.params.items())),
                "messages": canonical_messages(self.messages)}

    @property
    def key(self) -> str:
        """sha256 of the canonical JSON (sorted keys, no whitespace): the response's address in the store."""
        return sha256_json(self.canonical())


@dataclass(frozen=True)
class LLMReply:
    """A completion and its facts. ``replayed`` is true when it came from the store."""

    text: str
    key: str
    model: str
    stage: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    replayed: bool = False
    provenance: str = "model"


__all__ = ["Message", "canonical_messages", "LLMRequest", "LLMReply"]
