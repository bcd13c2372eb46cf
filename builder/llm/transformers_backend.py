"""Local generation with ``transformers`` (greedy by default, so a rerun gives the same text)."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from swe_taskflow.errors import ModelError

from .base import BackendConfig, BaseBackend
from .requests import LLMRequest


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
