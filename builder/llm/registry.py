"""Backends by name: ``openai``, ``transformers``, ``replay``."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from swe_taskflow.errors import ConfigError

from .base import BackendConfig, ReplayBackend


def _classes():
    from .openai_backend import OpenAIBackend, OpenAIConfig
    from .transformers_backend import TransformersBackend, TransformersConfig
    return {"openai": (OpenAIBackend, OpenAIConfig), "transformers": (TransformersBackend, TransformersConfig),
            "replay": (ReplayBackend, BackendConfig)}


BACKENDS = ("openai", "transformers", "replay")


def get_backend(name: str, *, store: Any = None, **cfg: Any):
    """Build the backend ``name`` from keyword settings (its config dataclass's fields) and a store.

    ``store`` is a :class:`ResponseStore` or a folder; with ``replay`` it is required.
    """
    classes = _classes()
    if name not in classes:
        raise ConfigError(f"unknown LLM backend {name!r}", field="llm", actual=name, expected=BACKENDS)
    cls, config_cls = classes[name]
    known = {f.name for f in fields(config_cls)}
    unknown = sorted(set(cfg) - known)
    if unknown:
        raise ConfigError(f"unknown setting for the {name} backend", field=unknown[0], expected=sorted(known))
    return cls(config_cls(**cfg), store=store)
