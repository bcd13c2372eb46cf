"""Label scoring with any causal LM loadable by ``transformers`` (local files only, never a download).

For each message the prompt is ``template.prefix + message + template.suffix`` (``builder/prompts``), and
each of the 16 labels is scored by the total log-probability of its continuation, tokenized with a
leading space (`` bug-fix``). The label with the highest total wins, so the output is always exactly one
valid label; a softmax over the 16 totals gives the per-label probabilities (the confidence).

Speed: the long shared prefix (instructions + definitions) is encoded once; its KV cache is expanded
across each batch (a ``DynamicCache`` built from the prefix keys/values) so only the message, the suffix
and the label tokens are computed per message. All 16 label continuations are scored in the same forward
pass: their tokens after the first are packed behind the message under a tree-shaped 4D attention mask
(each label token sees the prefix, the message and its own label's earlier tokens, at the positions it
would have right after the message). The model runs with SDPA attention (eager as a fallback). bf16 on
CUDA, float32 on CPU.

Tokenization is segment-wise (prefix, message, suffix, label encoded separately and concatenated), so
the cached path and full re-encoding see the same token ids and give the same scores.

Long messages: a message longer than its token budget keeps its first 3/4 and last 1/4 of the budget
(the request usually opens or closes a pasted log) and drops the middle. The budget is
``min(max_message_tokens, context - prefix - suffix - longest label)``.

The prompt template (``builder/prompts/classify_v1.txt``) holds the paper's Appendix A instructions and the
16 definitions, with one ``{message}`` slot. Its sha256 goes into every label's provenance and cache key, so
a prompt edit can never silently reuse old labels.
"""

from __future__ import annotations

import hashlib
import inspect
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from swe_taskflow.errors import ConfigError, ModelError
from swe_taskflow.taxonomy import INTENTS
from builder.resources import builder_path

from .base import Prediction, prediction_from_scores

VERSION = "1"
DEFAULT_PROMPT = builder_path("prompts", "classify_v1.txt")
SLOT = "{message}"


@dataclass(frozen=True)
class PromptTemplate:
    """A template split at its message slot so the shared head can be encoded once (prefix KV cache)."""

    prefix: str
    """Everything before the message: instructions, definitions, the ``Message:`` line."""
    suffix: str
    """Everything after the message, ending where the label is to be written (``task_type:``)."""
    sha256: str
    """sha256 of the template file's bytes."""
    name: str
    """File name, e.g. ``classify_v1.txt``."""


def load_prompt_template(path: str | Path = DEFAULT_PROMPT) -> PromptTemplate:
    path = Path(path)
    if not path.is_file():
        raise ConfigError("prompt template not found", path=str(path))
    raw = path.read_bytes()
    text = raw.decode("utf-8")
    if text.count(SLOT) != 1:
        raise ConfigError("prompt template must hold exactly one message slot", path=str(path),
                          expected=SLOT, actual=text.count(SLOT))
    prefix, suffix = text.split(SLOT)
    return PromptTemplate(prefix=prefix, suffix=suffix.rstrip("\n").rstrip(" "),
                          sha256=hashlib.sha256(raw).hexdigest(), name=path.name)


def truncate_ids(ids: list[int], budget: int) -> list[int]:
    """The long-message rule: keep the first 3/4 and the last 1/4 of ``budget`` tokens."""
    if len(ids) <= budget:
        return ids
    head = budget - budget // 4
    tail = budget - head
    return ids[:head] + (ids[-tail:] if tail else [])


def folder_revision(path: Path) -> str:
    """A model folder's identity: the HF snapshot commit when it is one, else a hash of its config,
    tokenizer files and the size + first/last MiB of each weight file (hashing many GB would be slow)."""
    if re.fullmatch(r"[0-9a-f]{40}", path.name) and path.parent.name == "snapshots":
        return path.name
    h = hashlib.sha256()
    for f in sorted(path.iterdir()):
        if not f.is_file():
            continue
        h.update(f.name.encode())
        if f.suffix in (".json", ".txt", ".model", ".jinja"):
            h.update(f.read_bytes())
        else:
            size = f.stat().st_size
            h.update(str(size).encode())
            with f.open("rb") as fh:
                h.update(fh.read(1 << 20))
                if size > 2 << 20:
                    fh.seek(-(1 << 20), 2)
                    h.update(fh.read())
    return "sha256:" + h.hexdigest()[:16]


class LLMLabelScorer:
    """Causal-LM label scoring. ``predict`` is deterministic: batched and unbatched give the same labels."""

    def __init__(self, model_path: str, *, device: str = "auto", batch_size: int = 16, model_id: str | None = None,
                 prompt=DEFAULT_PROMPT, max_message_tokens: int = 1024, prefix_reuse: bool = True,
                 progress: bool = True):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from .embedded import resolve_device

        path = Path(model_path)
        if not path.is_dir():
            raise ConfigError("model folder not found", path=str(path))
        self.device = resolve_device(device)
        self.dtype = torch.bfloat16 if self.device.startswith("cuda") else torch.float32
        self.batch_size = batch_size
        self.prefix_reuse = prefix_reuse
        self.progress = progress
        self._torch = torch
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
            try:  # the packed label pass needs a custom 4D mask: sdpa (or eager) takes one, flash kernels do not
                self.model = AutoModelForCausalLM.from_pretrained(str(path), local_files_only=True, dtype=self.dtype,
                                                                  attn_implementation="sdpa")
            except (ValueError, ImportError):
                self.model = AutoModelForCausalLM.from_pretrained(str(path), local_files_only=True, dtype=self.dtype,
                                                                  attn_implementation="eager")
        except (OSError, ValueError) as exc:
            raise ModelError(f"cannot load a causal LM from the folder ({exc.__class__.__name__}: {exc})",
                             path=str(path)) from None
        self.model.to(self.device).eval()
        params = inspect.signature(self.model.forward).parameters
        self._cache_kw = "cache" if "cache" in params else "past_key_values"

        self.template = load_prompt_template(prompt)
        tok = self.tokenizer
        bos = [tok.bos_token_id] if tok.bos_token_id is not None else []
        self.prefix_ids: list[int] = bos + tok(self.template.prefix, add_special_tokens=False)["input_ids"]
        self.suffix_ids: list[int] = tok(self.template.suffix, add_special_tokens=False)["input_ids"]
        self.label_ids: list[list[int]] = [tok(" " + lab, add_special_tokens=False)["input_ids"] for lab in INTENTS]
        if any(not ids for ids in self.label_ids):
            raise ModelError("the tokenizer maps a label to no token", path=str(path))
        self.pad_id = next((t for t in (tok.pad_token_id, tok.eos_token_id) if t is not None), 0)
        cfg = self.model.config.get_text_config() if hasattr(self.model.config, "get_text_config") else self.model.config
        context = int(getattr(cfg, "max_position_embeddings", 0) or 4096)
        longest = max(len(x) for x in self.label_ids)
        self.message_budget = min(max_message_tokens, context - len(self.prefix_ids) - len(self.suffix_ids) - longest)
        if self.message_budget < 8:
            raise ConfigError("the prompt leaves no room for a message in the model's context", path=str(path),
                              expected=f"context > {len(self.prefix_ids) + len(self.suffix_ids) + longest + 8}",
                              actual=context)
        self._prefix_kv = None
        self.info = {"name": "llm", "model": model_id or str(path), "version": VERSION,
                     "revision": folder_revision(path), "prompt_sha256": self.template.sha256,
                     "dtype": str(self.dtype).replace("torch.", ""), "max_message_tokens": self.message_budget}

    # -- tokenization -------------------------------------------------------------------------
    def message_ids(self, text: str) -> list[int]:
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        return truncate_ids(ids, self.message_budget)

    # -- model passes -------------------------------------------------------------------------
    def _forward(self, input_ids, attention_mask, position_ids, cache):
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                         use_cache=True, **{self._cache_kw: cache})
        return out.logits, getattr(out, "cache", None) or getattr(out, "past_key_values", None)

    def _new_cache(self, kv=None, repeat: int = 1):
        from transformers import DynamicCache

        if kv is None:
            return DynamicCache(config=self.model.config)
        data = [(k.expand(repeat, *k.shape[1:]), v.expand(repeat, *v.shape[1:])) for k, v in kv]
        return DynamicCache(data, config=self.model.config)

    def _prefix_cache(self):
        """Keys/values of the shared prefix, computed once per scorer."""
        if self._prefix_kv is None:
            torch = self._torch
            ids = torch.tensor([self.prefix_ids], device=self.device)
            pos = torch.arange(len(self.prefix_ids), device=self.device)[None]
            _, cache = self._forward(ids, torch.ones_like(ids), pos, self._new_cache())
            self._prefix_kv = [(layer.keys, layer.values) for layer in cache.layers]
        return self._prefix_kv

    def score_ids(self, messages: list[list[int]], *, prefix_reuse: bool | None = None) -> np.ndarray:
        """(B, 16) total label log-probs for tokenized messages (one batch, one forward pass).

        Row layout: [prefix (only without reuse)] + message + suffix (right-padded) + packed label tokens (each
        label's tokens after the first, one label after another). Each packed label token sees the prefix, its own
        message and the earlier tokens of its own label (a tree mask), and sits at the position it would have right
        after the message, so one pass gives every label's total log-prob exactly as 16 separate continuations would.
        """
        torch, dev = self._torch, self.device
        reuse = self.prefix_reuse if prefix_reuse is None else prefix_reuse
        B, P = len(messages), len(self.prefix_ids)
        Q0 = 0 if reuse else P   # queries before the body: the prefix, unless its keys/values are cached
        seqs = [m + self.suffix_ids for m in messages]
        lens = torch.tensor([len(x) for x in seqs], device=dev)
        L = int(lens.max())
        inp, tgt, owner, step = [], [], [], []   # packed labels: input, target, label of each, position in it
        for j, ids in enumerate(self.label_ids):
            for t in range(len(ids) - 1):
                inp.append(ids[t])
                tgt.append(ids[t + 1])
                owner.append(j)
                step.append(t)
        R = len(inp)
        body = torch.full((B, L), self.pad_id, dtype=torch.long, device=dev)
        for i, x in enumerate(seqs):
            body[i, :len(x)] = torch.tensor(x, device=dev)
        parts = [body, torch.tensor(inp, dtype=torch.long, device=dev)[None].expand(B, R)]
        if not reuse:
            parts.insert(0, torch.tensor(self.prefix_ids, device=dev)[None].expand(B, P))
        input_ids = torch.cat(parts, dim=1)
        ar_l = torch.arange(L, device=dev)
        owner_t = torch.tensor(owner, dtype=torch.long, device=dev)
        step_t = torch.tensor(step, dtype=torch.long, device=dev)
        pos = [(P + ar_l)[None].expand(B, L), P + lens[:, None] + step_t[None]]
        if not reuse:
            pos.insert(0, torch.arange(P, device=dev)[None].expand(B, P))
        # (B, 1, queries, keys) attention mask; keys = prefix (P) + body (L) + packed labels (R)
        keys_body = ar_l[None] < lens[:, None]  # (B, L) real body tokens
        m = torch.zeros((B, Q0 + L + R, P + L + R), dtype=torch.bool, device=dev)
        if not reuse:
            m[:, :P, :P] = torch.tril(torch.ones((P, P), dtype=torch.bool, device=dev))
        m[:, Q0:, :P] = True  # body and label queries see the whole prefix
        causal = ar_l[None, :, None] >= ar_l[None, None, :]  # (1, L, L)
        m[:, Q0:Q0 + L, P:P + L] = causal & keys_body[:, None, :]
        m[:, Q0 + L:, P:P + L] = keys_body[:, None, :]
        same = (owner_t[:, None] == owner_t[None, :]) & (step_t[:, None] >= step_t[None, :])
        m[:, Q0 + L:, P + L:] = same[None]
        mask = m[:, None]
        if self.model.config._attn_implementation != "sdpa":
            mask = torch.zeros(mask.shape, dtype=self.dtype, device=dev).masked_fill(~mask, torch.finfo(self.dtype).min)
        cache = self._new_cache(self._prefix_cache(), B) if reuse else self._new_cache()
        with torch.inference_mode():
            logits, _ = self._forward(input_ids, mask, torch.cat(pos, dim=1), cache)
            # sums of each label's token log-probs: its first token after the message, then the packed rest
            last = logits[torch.arange(B, device=dev), Q0 + lens - 1].float().log_softmax(-1)  # (B, V)
            total = last[:, torch.tensor([ids[0] for ids in self.label_ids], device=dev)]  # (B, 16)
            if R:
                lp = logits[:, Q0 + L:].float().log_softmax(-1)  # (B, R, V)
                tok = lp.gather(-1, torch.tensor(tgt, device=dev)[None, :, None].expand(B, R, 1))[..., 0]
                total = total.index_add(1, owner_t, tok)
        return total.double().cpu().numpy()

    def label_scores(self, texts: Sequence[str], *, prefix_reuse: bool | None = None) -> np.ndarray:
        """(n, 16) total label log-probs; batches are formed over messages sorted by token length."""
        ids = [self.message_ids(t) for t in texts]
        order = sorted(range(len(ids)), key=lambda i: (len(ids[i]), i))
        out = np.zeros((len(ids), len(INTENTS)))
        batches = range(0, len(order), self.batch_size)
        if self.progress and len(batches) > 1:
            from swe_taskflow.progress import track

            batches = track(batches, desc="llm labels", unit="batches")
        for start in batches:
            idx = order[start:start + self.batch_size]
            out[idx] = self.score_ids([ids[i] for i in idx], prefix_reuse=prefix_reuse)
        return out

    def predict(self, texts: Sequence[str]) -> list[Prediction]:
        return [prediction_from_scores(row) for row in self.label_scores(list(texts))]
