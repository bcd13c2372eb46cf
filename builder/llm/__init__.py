"""LLM backends behind one protocol, with a content-addressed response store for exact offline replay.

Backends by name (:func:`get_backend`): ``openai``, ``transformers``, ``replay``. Prompt templates and the JSON
reply parser (:mod:`.prompts`: ``load_prompt``, ``render``, ``parse_json_object``) are here too: the splitter,
question generation, augmentation writers and the QA judge all use them."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from swe_taskflow.errors import ConfigError

from .base import (BackendConfig, BaseBackend, Ledger, LLMBackend, OpenAIBackend, OpenAIConfig, ReplayBackend,
                   StageUsage, TransformersBackend, TransformersConfig)
from .requests import LLMReply, LLMRequest, ResponseStore

__all__ = ["BACKENDS", "BackendConfig", "BaseBackend", "LLMBackend", "LLMReply", "LLMRequest", "Ledger",
           "ReplayBackend", "ResponseStore", "StageUsage", "get_backend", "backend_from"]

BACKENDS = ("openai", "transformers", "replay")


def get_backend(name: str, *, store: Any = None, **cfg: Any):
    """Build the backend ``name`` from keyword settings (its config dataclass's fields) and a store.

    ``store`` is a :class:`ResponseStore` or a folder; with ``replay`` it is required.
    """
    classes = {"openai": (OpenAIBackend, OpenAIConfig), "transformers": (TransformersBackend, TransformersConfig),
               "replay": (ReplayBackend, BackendConfig)}
    if name not in classes:
        raise ConfigError(f"unknown LLM backend {name!r}", field="llm", actual=name, expected=BACKENDS)
    cls, config_cls = classes[name]
    known = {f.name for f in fields(config_cls)}
    unknown = sorted(set(cfg) - known)
    if unknown:
        raise ConfigError(f"unknown setting for the {name} backend", field=unknown[0], expected=sorted(known))
    return cls(config_cls(**cfg), store=store)


def backend_from(settings: Any, resolve: Any):
    """The backend a recipe's ``[<section>.llm]`` table names (``backend``, ``model``, ``responses``: the recipe's
    ``LLMSettings``), with its response store; ``resolve`` makes a recipe path absolute."""
    store = ResponseStore(str(resolve(settings.responses))) if settings.responses else None
    return get_backend(settings.backend, store=store, **({"model": settings.model} if settings.model else {}))
