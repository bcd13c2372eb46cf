"""Classifiers chosen by name: ``embedded`` (the CPU default), ``embedded-v1`` (the previous default, for
comparison), ``zero-shot`` (the naive MiniLM baseline),
``llm:<model>`` or a path to a local model folder (causal-LM label scoring), or a model id already in the
local Hugging Face cache. Nothing is ever downloaded."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from swe_taskflow.errors import ConfigError

from .base import Classifier

#: Names load_classifier accepts besides a model folder / cached model id.
KNOWN = ("embedded", "embedded-v1", "zero-shot", "llm:<model folder or cached HF id>")


def _cached_hf_model(model_id: str) -> str | None:
    """Local snapshot folder of a model id in the HF cache, or None (never downloads)."""
    try:
        from huggingface_hub import snapshot_download

        return snapshot_download(model_id, local_files_only=True)
    except Exception:  # not cached / not a valid id
        return None


@lru_cache(maxsize=4)
def _embedded(kind: str, device: str, batch_size: int) -> Classifier:
    """Embedded classifiers are immutable once built: one per (kind, device, batch size) per process."""
    from .embedded import EmbeddedClassifier, ZeroShotClassifier

    if kind == "zero-shot":
        return ZeroShotClassifier(device=device, batch_size=batch_size)
    if kind == "embedded-v1":  # the previous default: hand-set weights, no heads
        return EmbeddedClassifier(device=device, batch_size=batch_size, heads_path=None)
    return EmbeddedClassifier(device=device, batch_size=batch_size)


def resolve_classifier(name: str) -> tuple[str, str, str]:
    """(kind, model folder, model id) that ``name`` names, without loading anything; kind is ``embedded``,
    ``embedded-v1``, ``zero-shot`` or ``llm``. An unknown name raises ConfigError listing the known ones."""
    if name in ("embedded", "embedded-v1", "zero-shot"):
        return name, "", ""
    model = name[4:] if name.startswith("llm:") else name
    folder = Path(model).expanduser()
    if folder.is_dir():
        return "llm", str(folder), ""
    if "/" in model and not model.startswith((".", "/", "~")):
        snap = _cached_hf_model(model)
        if snap is not None:
            return "llm", snap, model
    raise ConfigError("unknown classifier (not a known name, a model folder, or a cached HF model id)",
                      field="classifier", actual=name, hint="known: " + ", ".join(KNOWN))


def load_classifier(name: str = "embedded", *, device: str = "auto", batch_size: int = 64) -> Classifier:
    """Build the classifier ``name`` names; an unknown name raises ConfigError listing the known ones."""
    if device not in ("auto", "cpu", "cuda") and not device.startswith("cuda:"):
        raise ConfigError("unknown device", field="device", actual=device, expected="auto|cpu|cuda")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ConfigError("batch size must be a positive integer", field="batch_size", actual=batch_size)
    kind, folder, model_id = resolve_classifier(name)
    if kind != "llm":
        return _embedded(kind, device, batch_size)
    from .llm import LLMLabelScorer

    return LLMLabelScorer(folder, device=device, batch_size=batch_size, model_id=model_id or None)
