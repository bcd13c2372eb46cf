"""The LLM seam: one request shape, one reply shape, one protocol, and the shared machinery
(response store, token and cost accounting per stage, concurrency limit) every backend gets from
:class:`BaseBackend`."""

from __future__ import annotations

import logging
import threading
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, Protocol, Sequence

from swe_taskflow.errors import ConfigError, ReplayMissError

from .requests import LLMReply, LLMRequest, Message, ResponseStore, canonical_messages

log = logging.getLogger("swe_taskflow.llm")


@dataclass
class StageUsage:
    """Totals of one stage. ``calls`` counts live calls; ``replayed`` counts store hits."""

    calls: int = 0
    replayed: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


class Ledger:
    """Adds up usage by stage; replayed responses count their recorded tokens but cost nothing."""

    def __init__(self, input_cost_per_mtok: float = 0.0, output_cost_per_mtok: float = 0.0) -> None:
        self.input_cost = input_cost_per_mtok
        self.output_cost = output_cost_per_mtok
        self._stages: dict[str, StageUsage] = {}
        self._lock = threading.Lock()

    def add(self, stage: str, prompt_tokens: int, completion_tokens: int, *, replayed: bool = False,
            retries: int = 0) -> None:
        with self._lock:
            u = self._stages.setdefault(stage, StageUsage())
            u.prompt_tokens += prompt_tokens
            u.completion_tokens += completion_tokens
            u.retries += retries
            if replayed:
                u.replayed += 1
            else:
                u.calls += 1
                u.cost_usd += (prompt_tokens * self.input_cost + completion_tokens * self.output_cost) / 1e6

    def stage(self, name: str) -> StageUsage:
        with self._lock:
            return StageUsage(**asdict(self._stages.get(name, StageUsage())))

    def to_dict(self) -> dict[str, Any]:
        """``{stage: {calls, replayed, retries, prompt_tokens, completion_tokens, cost_usd}}``, stages sorted."""
        with self._lock:
            return {k: asdict(v) for k, v in sorted(self._stages.items())}


class LLMBackend(Protocol):
    """What splitters and question generators call."""

    info: dict[str, Any]
    ledger: Ledger

    def complete(self, messages: Sequence[Message], *, stage: str, **params: Any) -> LLMReply: ...


@dataclass(frozen=True)
class BackendConfig:
    """Settings every backend shares."""

    model: str = ""
    """Model id sent to the endpoint / loaded locally; part of every request key."""
    params: Mapping[str, Any] = field(default_factory=lambda: {"temperature": 0.0, "max_tokens": 2048})
    """Default sampling parameters (part of the request key); a call may override single ones."""
    max_concurrency: int = 4
    """At most this many requests in flight at once (threads share one backend)."""
    input_cost_per_mtok: float = 0.0
    """USD per million prompt tokens, for the cost ledger."""
    output_cost_per_mtok: float = 0.0
    """USD per million completion tokens."""

    def validate(self) -> None:
        if not self.model:
            raise ConfigError("an LLM backend needs a model id", field="model")
        if self.max_concurrency < 1:
            raise ConfigError("max_concurrency must be >= 1", field="max_concurrency", actual=self.max_concurrency)


class BaseBackend:
    """Store lookup, accounting and concurrency around a backend's own ``_generate``.

    With a store, a request that is already recorded is answered from it (exact replay); a new one
    is generated and recorded. ``_generate`` returns ``(text, prompt_tokens, completion_tokens)``.
    """

    name = "base"

    def __init__(self, config: BackendConfig, *, store: ResponseStore | str | None = None) -> None:
        config.validate()
        self.config = config
        self.store = ResponseStore(store) if isinstance(store, (str, bytes)) or hasattr(store, "__fspath__") else store
        self.ledger = Ledger(config.input_cost_per_mtok, config.output_cost_per_mtok)
        self._slots = threading.BoundedSemaphore(config.max_concurrency)

    @property
    def info(self) -> dict[str, Any]:
        """Provenance: backend name, model, parameters (never credentials)."""
        return {"backend": self.name, "model": self.config.model, "params": dict(sorted(self.config.params.items()))}

    def request(self, messages: Sequence[Message], **params: Any) -> LLMRequest:
        merged = {**self.config.params, **params}
        return LLMRequest(self.config.model, merged, tuple(canonical_messages(messages)))

    def complete(self, messages: Sequence[Message], *, stage: str, **params: Any) -> LLMReply:
        req = self.request(messages, **params)
        key = req.key
        if self.store is not None:
            hit = self.store.get(key)
            if hit is not None:
                reply = self.store.reply(hit, stage=stage)
                self.ledger.add(stage, reply.prompt_tokens, reply.completion_tokens, replayed=True)
                return reply
        with self._slots:
            text, pt, ct, retries = self._generate(req, stage=stage)
        self.ledger.add(stage, pt, ct, retries=retries)
        reply = LLMReply(text=text, key=key, model=req.model, stage=stage, prompt_tokens=pt, completion_tokens=ct)
        if self.store is not None:
            self.store.put(req, reply, backend=self.name)
        log.debug("llm %s stage=%s key=%s tokens=%d/%d", self.name, stage, key[:12], pt, ct)
        return reply

    def _generate(self, request: LLMRequest, *, stage: str) -> tuple[str, int, int, int]:
        raise NotImplementedError


class ReplayBackend(BaseBackend):
    """Answers only from the response store: a miss raises :class:`ReplayMissError` naming key and stage."""

    name = "replay"

    def __init__(self, config: BackendConfig, *, store=None) -> None:
        if store is None:
            raise ConfigError("the replay backend needs a response store", field="store",
                              hint="pass --store DIR (a folder written by an earlier recorded run)")
        super().__init__(config, store=store)

    def _generate(self, request: LLMRequest, *, stage: str) -> tuple[str, int, int, int]:
        raise ReplayMissError(f"no recorded response for stage '{stage}' (request key {request.key}, "
                              f"model {request.model!r})", path=str(self.store.root),
                              hint="record it with a live backend and the same --store, or check the model and params")
