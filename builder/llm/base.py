"""The LLM seam: one request shape, one reply shape, one protocol, and the shared machinery
(response store, token and cost accounting per stage, concurrency limit) every backend gets from
:class:`BaseBackend`, and the backends:

- ``openai``: any OpenAI-compatible chat endpoint (OpenAI, vLLM, TGI, llama.cpp server) through the ``openai``
  SDK. The API key is read from the environment variable named in the config, handed to the SDK client and
  nowhere else: it is not part of ``info``, the store, the ledger or any log line.
- ``transformers``: local generation (greedy by default, so a rerun gives the same text).
- ``replay``: answers from the response store only."""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, Protocol, Sequence

from swe_taskflow.errors import ConfigError, ModelError, ReplayMissError

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


@dataclass(frozen=True)
class OpenAIConfig(BackendConfig):
    """Settings of the OpenAI-compatible backend."""

    base_url: str | None = None
    """Endpoint root, e.g. ``http://127.0.0.1:8000/v1`` for vLLM; ``None`` means the SDK default (OpenAI)."""
    api_key_env: str = "OPENAI_API_KEY"
    """Name of the environment variable holding the key (the key itself is never configured in files)."""
    timeout_s: float = 120.0
    """Per-request timeout."""
    max_retries: int = 4
    """Retries after a timeout, connection error, 408, 409, 429 or 5xx: the SDK's own (exponential backoff
    from 0.5 s with jitter, at most 8 s, or the server's ``Retry-After``)."""


class OpenAIBackend(BaseBackend):
    name = "openai"

    def __init__(self, config: OpenAIConfig, *, store=None) -> None:
        super().__init__(config, store=store)
        if config.max_retries < 0 or config.timeout_s <= 0:
            raise ConfigError("max_retries must be >= 0 and timeout_s > 0", field="max_retries/timeout_s")
        import openai  # lazy: heavy and optional
        key = os.environ.get(config.api_key_env)
        if not key:
            if config.base_url is None:
                raise ConfigError(f"environment variable {config.api_key_env} is not set", field="api_key_env",
                                  hint="export the key, or point base_url at a local server")
            key = "EMPTY"   # local servers (vLLM, llama.cpp) accept any key
        self._openai = openai
        self._client = openai.OpenAI(api_key=key, base_url=config.base_url, timeout=config.timeout_s,
                                     max_retries=config.max_retries)

    @property
    def info(self):
        d = super().info
        d.update(base_url=self.config.base_url, api_key_env=self.config.api_key_env)
        return d

    @property
    def endpoint(self) -> str:
        """The URL the client really calls: ``base_url``, else ``OPENAI_BASE_URL``, else the SDK's default (an error
        said "endpoint default" while ``OPENAI_BASE_URL`` pointed elsewhere)."""
        return str(self._client.base_url)

    def _generate(self, request: LLMRequest, *, stage: str) -> tuple[str, int, int, int]:
        cfg: OpenAIConfig = self.config  # type: ignore[assignment]
        o = self._openai
        try:   # the SDK retries transient failures; the raw response says how often it did
            raw = self._client.chat.completions.with_raw_response.create(
                model=request.model, messages=list(request.canonical()["messages"]), **dict(request.params))
        except (o.APITimeoutError, o.APIConnectionError, o.RateLimitError, o.InternalServerError) as exc:
            raise ModelError(f"stage '{stage}': {type(exc).__name__} after {cfg.max_retries} retries",
                             hint=f"endpoint {self.endpoint}") from None
        except o.APIStatusError as exc:   # 4xx other than 408, 409 and 429: not worth retrying
            raise ModelError(f"stage '{stage}': endpoint answered HTTP {exc.status_code}",
                             hint="check the model id and parameters") from None
        resp = raw.parse()
        if not resp.choices:
            raise ModelError(f"stage '{stage}': the endpoint returned no choices")
        text = resp.choices[0].message.content or ""
        usage = resp.usage
        pt = int(getattr(usage, "prompt_tokens", 0) or 0)
        ct = int(getattr(usage, "completion_tokens", 0) or 0)
        return text, pt, ct, raw.retries_taken


@dataclass(frozen=True)
class TransformersConfig(BackendConfig):
    """Settings of the local backend; ``model`` is a local folder or a cached Hub id."""

    device: str = "cpu"
    """torch device, e.g. ``cpu`` or ``cuda:0``."""
    dtype: str = "auto"
    """torch dtype name (``float32``, ``bfloat16``) or ``auto``."""


class TransformersBackend(BaseBackend):
    name = "transformers"

    def __init__(self, config: TransformersConfig, *, store=None) -> None:
        super().__init__(config, store=store)
        self._model = None
        self._tok = None
        self._load_lock = threading.Lock()

    def _load(self):
        with self._load_lock:
            if self._model is None:
                try:
                    import torch
                    from transformers import AutoModelForCausalLM, AutoTokenizer
                    cfg: TransformersConfig = self.config  # type: ignore[assignment]
                    dtype = "auto" if cfg.dtype == "auto" else getattr(torch, cfg.dtype)
                    self._tok = AutoTokenizer.from_pretrained(cfg.model)
                    self._model = AutoModelForCausalLM.from_pretrained(cfg.model, dtype=dtype).to(cfg.device).eval()
                except (OSError, ValueError, AttributeError) as exc:
                    raise ModelError(f"cannot load local model {self.config.model!r}: {exc}") from None
        return self._model, self._tok

    def _prompt(self, tok, messages) -> str:
        if getattr(tok, "chat_template", None):
            return tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return "".join(f"{m['role']}: {m['content']}\n" for m in messages) + "assistant:"

    def _generate(self, request: LLMRequest, *, stage: str) -> tuple[str, int, int, int]:
        import torch
        model, tok = self._load()
        params = dict(request.params)
        max_new = int(params.pop("max_tokens", 512))
        temperature = float(params.pop("temperature", 0.0))
        seed = params.pop("seed", 0)
        text = self._prompt(tok, request.canonical()["messages"])
        enc = tok(text, return_tensors="pt").to(model.device)
        kw = {"max_new_tokens": max_new, "do_sample": temperature > 0,
              "pad_token_id": tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id}
        if temperature > 0:
            kw["temperature"] = temperature
            torch.manual_seed(int(seed))   # sampling needs torch's RNG; recorded in the request key via params
        with torch.no_grad():
            out = model.generate(**enc, **kw)
        new = out[0, enc["input_ids"].shape[1]:]
        return tok.decode(new, skip_special_tokens=True), int(enc["input_ids"].shape[1]), int(new.shape[0]), 0
