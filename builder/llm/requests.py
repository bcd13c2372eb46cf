"""What an LLM is asked and what it answers: the request whose canonical JSON addresses a reply, the reply with
its facts, and the content-addressed response store (``ROOT/ab/<sha256>.json`` per request).

The key is the sha256 of the canonical request (model, params, messages), so a rerun with the same inputs finds
the same file and replays exactly, offline. A record holds the request, the text and the token counts; never
headers or credentials. Hand-written fixtures carry ``"provenance": "hand-written"``. The backends build on it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from swe_taskflow.errors import InputError
from swe_taskflow.hashing import key_sha256

from ..json_cache import JsonCache

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
        return key_sha256(self.canonical())


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


STORE_FORMAT = "swe-taskflow-llm-response-1"


class ResponseStore:
    """A folder of recorded responses addressed by request key (a :class:`JsonCache` of records)."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.files = JsonCache(path)
        self.root = self.files.root

    def path_for(self, key: str) -> Path:
        return self.files.path(key)

    def get(self, key: str) -> dict[str, Any] | None:
        """The record for ``key``, or ``None``; a corrupt record is an input error naming its file."""
        rec = self.files.load(key)
        if rec is None:
            return None
        p = self.path_for(key)
        if not isinstance(rec, dict) or not isinstance(rec.get("response", {}).get("text"), str):
            raise InputError("response record lacks response.text", path=str(p), field="response.text")
        if rec.get("key") != key:
            raise InputError("record key does not match its file name", path=str(p), field="key",
                             expected=key, actual=rec.get("key"))
        return rec

    def reply(self, rec: dict[str, Any], *, stage: str) -> LLMReply:
        resp = rec["response"]
        usage = resp.get("usage") or {}
        return LLMReply(text=resp["text"], key=rec["key"], model=rec.get("request", {}).get("model", ""),
                        stage=stage, prompt_tokens=int(usage.get("prompt_tokens", 0)),
                        completion_tokens=int(usage.get("completion_tokens", 0)), replayed=True,
                        provenance=rec.get("provenance", "model"))

    def put(self, request: LLMRequest, reply: LLMReply, *, backend: str,
            provenance: str = "model") -> Path:
        """Record ``reply`` under the request's key (atomic write); returns the file."""
        rec = {"format": STORE_FORMAT, "key": request.key, "stage": reply.stage, "backend": backend,
               "provenance": provenance, "request": request.canonical(),
               "response": {"text": reply.text, "usage": {"prompt_tokens": reply.prompt_tokens,
                                                          "completion_tokens": reply.completion_tokens}}}
        return self.files.put(request.key, rec)

    def put_text(self, request: LLMRequest, text: str, *, stage: str, provenance: str) -> Path:
        """Record a response written by hand (fixtures, tests): ``provenance`` says so."""
        reply = LLMReply(text=text, key=request.key, model=request.model, stage=stage)
        return self.put(request, reply, backend="hand", provenance=provenance)

    def __len__(self) -> int:
        return len(self.files)


__all__ = ["Message", "canonical_messages", "LLMRequest", "LLMReply", "ResponseStore", "STORE_FORMAT"]
