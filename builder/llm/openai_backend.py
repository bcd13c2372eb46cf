"""Any OpenAI-compatible chat endpoint (OpenAI, vLLM, TGI, llama.cpp server) through the ``openai`` SDK.

The API key is read from the environment variable named in the config, handed to the SDK client
and nowhere else: it is not part of ``info``, the store, the ledger or any log line.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from swe_taskflow.errors import ConfigError, ModelError

from .base import BackendConfig, BaseBackend
from .requests import LLMRequest


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

    def _generate(self, request: LLMRequest, *, stage: str) -> tuple[str, int, int, int]:
        cfg: OpenAIConfig = self.config  # type: ignore[assignment]
        o = self._openai
        try:   # the SDK retries transient failures; the raw response says how often it did
            raw = self._client.chat.completions.with_raw_response.create(
                model=request.model, messages=list(request.canonical()["messages"]), **dict(request.params))
        except (o.APITimeoutError, o.APIConnectionError, o.RateLimitError, o.InternalServerError) as exc:
            raise ModelError(f"stage '{stage}': {type(exc).__name__} after {cfg.max_retries} retries",
                             hint=f"endpoint {cfg.base_url or 'default'}") from None
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
