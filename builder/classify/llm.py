"""Label scoring with any causal LM loadable by ``transformers`` (local files only, never a download).

For each message the prompt is ``template.prefix + message + template.suffix`` (``builder/prompts``), and
each of the 16 labels is scored by the total log-probability of its continuation, tokenized with a
leading space (`` bug-fix``). The label with the highest total wins, so the output is always exactly one
valid label; a softmax over the 16 totals gives the per-label probabilities (the confidence).

The pass (``score_ids``): the messages of a batch are packed into ONE sequence of equal slots, one per
message: ``message + suffix`` followed by every label's tokens after its first (16 continuations packed
behind the message), padded to the slot length, a bucket of the longest need (``slot_length``). Attention is
FlexAttention (``torch.nn.attention.flex_attention``) in two parts merged by their log-sum-exp:

- every query against the shared prefix's keys/values, computed once per scorer (batch 1, never expanded
  or copied per message; no mask: everything sees the whole prefix);
- each slot against its own tokens under a block mask built from the tree ``mask_mod`` (a body token sees
  the earlier body tokens; a label token sees the body and the earlier tokens of its own label, at the
  position it would have right after the message).

Logits are computed only where a score needs one (``logits_to_keep``). One pass gives every label's total
log-prob exactly as 16 separate continuations of a full re-encoding would (``prefix_reuse=False`` runs
that full re-encoding: each slot carries the prefix too; a test compares both, and both with a plain
forward).

Batch invariance: a message's 16 scores are bitwise the same whatever batch, position or padding it gets
(float32 and bf16; a test checks both on CPU, a ``gpu`` test on CUDA). Nothing a message computes
depends on its neighbours: its slot has a shape that depends on its own length only, the prefix part is
a row-wise computation over a fixed key set, the slot part runs per (slot, head), and the linear layers see
fixed-size row blocks (``_fixed_row_linears``: on CUDA, 1,024 rows, so cuBLAS picks the same kernel for
every batch; on CPU at least 16 rows, below which MKL takes another path). The same holds for a message
alone and in a batch of 64, so labels never depend on which run first labelled a message.

Tokenization is segment-wise (prefix, message, suffix, label encoded separately and concatenated), so
the cached path and full re-encoding see the same token ids. ``predict`` tokenizes ahead on a worker
thread while the model scores (the fast tokenizer releases the GIL) and scores messages bucket by bucket
as buckets fill.

Long messages: a message longer than its token budget keeps its first 3/4 and last 1/4 of the budget
(the request usually opens or closes a pasted log) and drops the middle. The budget is
``min(max_message_tokens, context - prefix - suffix - longest label)``.

The prompt template (``builder/prompts/classify_v1.txt``) holds the paper's Appendix A instructions and the
16 definitions, with one ``{message}`` slot. Its sha256 goes into every label's provenance and cache key, so
a prompt edit can never silently reuse old labels.

Weights load on the first pass, straight to the device (``device_map``): a run whose labels are all
in the label cache never loads them (``info`` needs the tokenizer and config only).
"""

from __future__ import annotations

import hashlib
import queue
import re
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

from swe_taskflow.errors import ConfigError, ModelError
from swe_taskflow.taxonomy import INTENTS
from ..resources import builder_path

from .base import Prediction, prediction_from_scores

VERSION = "1"
DEFAULT_PROMPT = builder_path("prompts", "classify_v1.txt")
SLOT = "{message}"
#: the attention function registered with transformers' AttentionInterface (see ``_tree_attention``)
ATTENTION = "swe_taskflow_tree"
#: messages tokenized per step of the worker thread that runs ahead of the model
TOKENIZE_CHUNK = 256


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


def slot_length(need: int) -> int:
    """The slot a message of ``need`` tokens gets: a bucket of its own length only (never of its batch's), so
    its pass shape never depends on its neighbours. Steps of 16 up to 128, then 32, 64 and 128: padding stays
    under ~12% of a slot."""
    for limit, step in ((128, 16), (256, 32), (512, 64)):
        if need <= limit:
            return max(step, -(-need // step) * step)
    return -(-need // 128) * 128


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


# -- attention ---------------------------------------------------------------------------------
@dataclass
class _Pass:
    """What the attention function needs for one forward (passed through the model as a keyword)."""

    slots: int
    """G: slots (messages) in the packed sequence."""
    slot: int
    """S: tokens per slot."""
    mask: object
    """The slots' tree mask (B = G, S x S): a flex BlockMask, or a dense boolean (G, 1, S, S) for ``dense``."""
    prefix: dict | None
    """layer -> (keys, values) of the shared prefix, (1, kv heads, P, d); None: the slots carry the prefix."""
    attend: Callable
    """(q, k, v, mask, scale) -> (out, natural-log log-sum-exp): ``flex`` or ``dense_attention``."""
    capture: dict | None = None
    """Prefix pass only: layer -> (keys, values) is written here."""


def flex_kernel(compiled: bool) -> Callable:
    """FlexAttention with its log-sum-exp, across torch versions; compiled (Triton on CUDA) or eager."""
    from torch.nn.attention import flex_attention as fa

    flex = fa.flex_attention
    if compiled:
        import torch

        flex = torch.compile(flex, dynamic=True)

    def attend(q, k, v, block_mask, scale):
        if hasattr(fa, "AuxRequest"):
            out, aux = flex(q, k, v, block_mask=block_mask, scale=scale, enable_gqa=True,
                            return_aux=fa.AuxRequest(lse=True))
            return out, aux.lse
        return flex(q, k, v, block_mask=block_mask, scale=scale, enable_gqa=True, return_lse=True)

    return attend


def dense_attention(q, k, v, mask, scale):
    """The same contract as ``flex_kernel``'s without FlexAttention (eager flex is slow on CPU): the CPU flash
    kernel, which returns its log-sum-exp, or plain matmuls elsewhere. ``q`` (B, H, Q, d), ``k``/``v`` (B, kv
    heads, K, d), ``mask`` additive (0 / -inf, q's dtype; B, 1, Q, K) or None. Every query row is computed on
    its own, with a reduction order fixed by K (the key count): the slot length, or the prefix's."""
    import torch

    B, H, Q, d = q.shape
    kvh, K = k.shape[1], k.shape[2]
    r = H // kvh
    flash = getattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu", None)
    if q.device.type == "cpu" and flash is not None:
        if r > 1:   # one copy per pass of the keys the kernel reads (batch 1 for the prefix), never per message
            k, v = k.repeat_interleave(r, 1), v.repeat_interleave(r, 1)
        return flash(q, k, v, attn_mask=mask, scale=scale)
    s = (q.reshape(B, kvh, r * Q, d) @ k.transpose(-1, -2)).float() * scale        # (B, kv heads, r*Q, K)
    if mask is not None:
        s = (s.view(B, kvh, r, Q, K) + mask[:, :, None].float()).view(B, kvh, r * Q, K)
    lse = s.logsumexp(-1, keepdim=True)
    out = (s - lse).exp().to(v.dtype) @ v
    return out.view(B, H, Q, d), lse.view(B, H, Q)


def _tree_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    """Attention over the packed slots (see the module docstring). ``query`` is (1, heads, G*S, d)."""
    import torch

    spec: _Pass | None = kwargs.get("swe_pass")
    if spec is None:   # any other call of the model (e.g. generation): transformers' SDPA attention
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        return sdpa_attention_forward(module, query, key, value, attention_mask, scaling=scaling, dropout=dropout,
                                      **kwargs)
    if spec.capture is not None:   # the prefix itself: plain causal attention, keys/values kept
        spec.capture[module.layer_idx] = (key, value)
        out, _ = spec.attend(query, key, value, spec.mask, scaling)
        return out.transpose(1, 2), None
    G, S = spec.slots, spec.slot
    H, d = query.shape[1], query.shape[-1]

    def per_slot(x):   # (1, h, G*S, d) -> (G, h, S, d), a view
        return x[0].unflatten(1, (G, S)).transpose(0, 1)

    out, lse = spec.attend(per_slot(query), per_slot(key), per_slot(value), spec.mask, scaling)
    if spec.prefix is not None:
        kp, vp = spec.prefix[module.layer_idx]
        out_p, lse_p = spec.attend(query, kp, vp, None, scaling)   # (1, H, G*S, d): row by row
        out_p, lse_p = per_slot(out_p), lse_p[0].unflatten(1, (G, S)).transpose(0, 1)
        top = torch.maximum(lse, lse_p)
        w, w_p = (lse - top).exp()[..., None], (lse_p - top).exp()[..., None]
        out = ((out.float() * w + out_p.float() * w_p) / (w + w_p)).to(query.dtype)
    return out.transpose(0, 1).reshape(H, G * S, d).transpose(0, 1)[None], None   # (1, G*S, H, d)


def _register_attention() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface

    AttentionInterface.register(ATTENTION, _tree_attention)
    AttentionMaskInterface.register(ATTENTION, ALL_MASK_ATTENTION_FUNCTIONS["sdpa"])


def _fixed_row_linears(model, *, chunk: int | None, minimum: int) -> None:
    """Every ``nn.Linear`` of ``model`` multiplies fixed-size row blocks: ``chunk`` rows at a time (the last
    block zero-padded), or, without ``chunk``, at least ``minimum`` rows. The same message then meets the same
    GEMM kernel whatever its batch (BLAS libraries pick kernels by shape; the row count is the batch)."""
    import torch
    from torch import nn

    def forward(layer, x):
        flat = x.reshape(-1, x.shape[-1])
        m = flat.shape[0]
        size = chunk or max(m, minimum)
        pad = -m % size
        if pad:
            flat = torch.cat([flat, flat.new_zeros(pad, flat.shape[1])])
        out = torch.cat([nn.functional.linear(flat[i:i + size], layer.weight, layer.bias)
                         for i in range(0, m + pad, size)]) if chunk else nn.functional.linear(flat, layer.weight,
                                                                                                layer.bias)
        return out[:m].reshape(*x.shape[:-1], out.shape[-1])

    for layer in model.modules():
        if type(layer) is nn.Linear:
            layer.forward = forward.__get__(layer)


class LLMLabelScorer:
    """Causal-LM label scoring. ``predict`` is deterministic and batch-invariant (see the module docstring)."""

    def __init__(self, model_path: str, *, device: str = "auto", batch_size: int = 16, model_id: str | None = None,
                 prompt=DEFAULT_PROMPT, max_message_tokens: int = 1024, prefix_reuse: bool = True,
                 attention: str | None = None, compile: bool | None = None, dtype: str | None = None):
        import torch
        from transformers import AutoConfig, AutoTokenizer

        from .embedded import resolve_device

        path = Path(model_path)
        if not path.is_dir():
            raise ConfigError("model folder not found", path=str(path))
        self.path = path
        self.device = resolve_device(device)
        cuda = self.device.startswith("cuda")
        self.dtype = getattr(torch, dtype) if dtype else torch.bfloat16 if cuda else torch.float32
        self.batch_size = batch_size
        self.prefix_reuse = prefix_reuse
        self.attention = attention or ("flex" if cuda else "dense")
        if self.attention not in ("flex", "dense"):
            raise ConfigError("unknown attention kernel", field="attention", actual=self.attention,
                              expected="flex|dense")
        self.compile = cuda if compile is None else compile
        self._torch = torch
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
            self.config = AutoConfig.from_pretrained(str(path), local_files_only=True)
        except (OSError, ValueError) as exc:
            raise ModelError(f"cannot load a causal LM from the folder ({exc.__class__.__name__}: {exc})",
                             path=str(path)) from None
        self._model = None
        self._attend = None

        self.template = load_prompt_template(prompt)
        tok = self.tokenizer
        bos = [tok.bos_token_id] if tok.bos_token_id is not None else []
        self.prefix_ids: list[int] = bos + tok(self.template.prefix, add_special_tokens=False)["input_ids"]
        self.suffix_ids: list[int] = tok(self.template.suffix, add_special_tokens=False)["input_ids"]
        self.label_ids: list[list[int]] = [tok(" " + lab, add_special_tokens=False)["input_ids"] for lab in INTENTS]
        if any(not ids for ids in self.label_ids):
            raise ModelError("the tokenizer maps a label to no token", path=str(path))
        self.pad_id = next((t for t in (tok.pad_token_id, tok.eos_token_id) if t is not None), 0)
        cfg = self._text_config()
        context = int(getattr(cfg, "max_position_embeddings", 0) or 4096)
        longest = max(len(x) for x in self.label_ids)
        self.message_budget = min(max_message_tokens, context - len(self.prefix_ids) - len(self.suffix_ids) - longest)
        if self.message_budget < 8:
            raise ConfigError("the prompt leaves no room for a message in the model's context", path=str(path),
                              expected=f"context > {len(self.prefix_ids) + len(self.suffix_ids) + longest + 8}",
                              actual=context)
        # packed labels: each label's tokens after its first, one label after another
        self._inp, self._tgt, self._owner, self._step = [], [], [], []
        for j, ids in enumerate(self.label_ids):
            for t in range(len(ids) - 1):
                self._inp.append(ids[t])
                self._tgt.append(ids[t + 1])
                self._owner.append(j)
                self._step.append(t)
        self._prefix_kv = None
        self.info = {"name": "llm", "model": model_id or str(path), "version": VERSION,
                     "revision": folder_revision(path), "prompt_sha256": self.template.sha256,
                     "dtype": str(self.dtype).replace("torch.", ""), "max_message_tokens": self.message_budget}

    def _text_config(self):
        return self.config.get_text_config() if hasattr(self.config, "get_text_config") else self.config

    # -- loading ------------------------------------------------------------------------------
    @property
    def model(self):
        """The weights, loaded on first use straight onto the device."""
        if self._model is None:
            from transformers import AutoModelForCausalLM

            _register_attention()
            warnings.filterwarnings("ignore", message=".*flex_attention called without torch.compile.*")
            import importlib.util

            # straight to the device with accelerate (the `build` extra); without it, through host memory
            direct = {"device_map": self.device} if importlib.util.find_spec("accelerate") else {}
            try:
                model = AutoModelForCausalLM.from_pretrained(str(self.path), local_files_only=True, dtype=self.dtype,
                                                             attn_implementation=ATTENTION, **direct)
            except (OSError, ValueError) as exc:
                raise ModelError(f"cannot load a causal LM from the folder ({exc.__class__.__name__}: {exc})",
                                 path=str(self.path)) from None
            if not direct:
                model.to(self.device)
            self.use_model(model)
        return self._model

    def use_model(self, model) -> None:
        """Score with ``model`` (loaded here, or built elsewhere, e.g. random weights from a config on the GPU)."""
        _register_attention()
        model.config._attn_implementation = ATTENTION
        _fixed_row_linears(model, chunk=1024 if self.device.startswith("cuda") else None, minimum=16)
        self._model = model.eval()

    def _kernel(self) -> Callable:
        if self._attend is None:
            self._attend = flex_kernel(self.compile) if self.attention == "flex" else dense_attention
        return self._attend

    def _mask(self, mask_mod, batch: int, q_len: int, kv_len: int):
        """``mask_mod`` as the kernel takes it: a flex BlockMask, or evaluated densely, additive (B, 1, Q, K)."""
        torch = self._torch
        if self.attention == "flex":
            from torch.nn.attention.flex_attention import create_block_mask

            return create_block_mask(mask_mod, batch, None, q_len, kv_len, device=self.device)
        ar = lambda n: torch.arange(n, device=self.device)  # noqa: E731
        keep = mask_mod(ar(batch)[:, None, None], 0, ar(q_len)[None, :, None], ar(kv_len)[None, None, :])[:, None]
        return torch.zeros(keep.shape, dtype=self.dtype, device=self.device).masked_fill(~keep, float("-inf"))

    # -- tokenization -------------------------------------------------------------------------
    def message_ids(self, text: str) -> list[int]:
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        return truncate_ids(ids, self.message_budget)

    def _tokenize(self, texts: list[str]) -> list[list[int]]:
        if not texts:
            return []
        enc = self.tokenizer(texts, add_special_tokens=False)["input_ids"]
        return [truncate_ids(ids, self.message_budget) for ids in enc]

    def slot_of(self, n_message: int, *, prefix_reuse: bool | None = None) -> int:
        """Slot length of a message of ``n_message`` tokens (its pass groups only messages of this slot)."""
        reuse = self.prefix_reuse if prefix_reuse is None else prefix_reuse
        return slot_length((0 if reuse else len(self.prefix_ids)) + n_message + len(self.suffix_ids) + len(self._inp))

    # -- model passes -------------------------------------------------------------------------
    def _prefix_cache(self):
        """Keys/values of the shared prefix, computed once per scorer: (1, kv heads, P, d) per layer."""
        if self._prefix_kv is None:
            torch = self._torch
            P = len(self.prefix_ids)
            ids = torch.tensor([self.prefix_ids], device=self.device)
            mask = self._mask(lambda b, h, q, k: k <= q, 1, P, P)
            store: dict = {}
            spec = _Pass(slots=1, slot=P, mask=mask, prefix=None, attend=self._kernel(), capture=store)
            with torch.inference_mode():
                self.model(input_ids=ids, attention_mask=mask, position_ids=torch.arange(P, device=self.device)[None],
                           use_cache=False, logits_to_keep=1, swe_pass=spec)
            if self.attention == "dense" and self.device == "cpu":   # the CPU kernel wants every head's keys
                heads = self._text_config().num_attention_heads
                store = {i: (k.repeat_interleave(heads // k.shape[1], 1), v.repeat_interleave(heads // v.shape[1], 1))
                         for i, (k, v) in store.items()}
            self._prefix_kv = store
        return self._prefix_kv

    def score_ids(self, messages: list[list[int]], *, prefix_reuse: bool | None = None) -> np.ndarray:
        """(B, 16) total label log-probs for tokenized messages, all of one slot length (one forward pass).

        Slot layout: [prefix (only without reuse)] + message + suffix + packed label tokens + padding. A body
        token sees the earlier body tokens; a packed label token sees the body and the earlier tokens of its own
        label, and sits at the position it would have right after the message; a padding token sees itself."""
        torch, dev = self._torch, self.device
        reuse = self.prefix_reuse if prefix_reuse is None else prefix_reuse
        P, R = len(self.prefix_ids), len(self._inp)
        pre = 0 if reuse else P
        slots = {self.slot_of(len(m), prefix_reuse=reuse) for m in messages}
        if len(slots) != 1:
            raise ValueError(f"score_ids needs messages of one slot length, got {sorted(slots)}")
        S, G = slots.pop(), len(messages)
        bodies = [(self.prefix_ids if not reuse else []) + m + self.suffix_ids for m in messages]
        n = torch.tensor([len(b) for b in bodies], device=dev)   # body length per slot (prefix included w/o reuse)
        ids = torch.full((G, S), self.pad_id, dtype=torch.long, device=dev)
        pos = torch.zeros((G, S), dtype=torch.long, device=dev)
        owner = torch.tensor(self._owner or [0], dtype=torch.long, device=dev)
        step = torch.tensor(self._step or [0], dtype=torch.long, device=dev)
        base = P - pre   # position of slot token 0
        for g, body in enumerate(bodies):
            k = len(body)
            ids[g, :k] = torch.tensor(body, device=dev)
            pos[g, :k] = base + torch.arange(k, device=dev)
            if R:
                ids[g, k:k + R] = torch.tensor(self._inp, device=dev)
                pos[g, k:k + R] = base + k + step[:R]

        def mask_mod(b, h, q, kv):
            nb = n[b]
            qi, ki = (q - nb).clamp(0, max(R - 1, 0)), (kv - nb).clamp(0, max(R - 1, 0))
            body = (q < nb) & (kv <= q)
            label_q = (q >= nb) & (q < nb + R)
            label = label_q & ((kv < nb) | ((kv >= nb) & (owner[ki] == owner[qi]) & (step[ki] <= step[qi])
                                            & (kv <= q)))
            return body | label | ((q >= nb + R) & (kv == q))

        spec = _Pass(slots=G, slot=S, mask=self._mask(mask_mod, G, S, S),
                     prefix=self._prefix_cache() if reuse else None, attend=self._kernel())
        offsets = torch.arange(G, device=dev)[:, None] * S
        last = offsets[:, 0] + n - 1                                    # the body's last token: first label tokens
        keep = torch.cat([last[:, None], offsets + n[:, None] + torch.arange(R, device=dev)[None]], 1).reshape(-1)
        with torch.inference_mode():
            logits = self.model(input_ids=ids.reshape(1, -1), attention_mask=spec.mask,
                                position_ids=pos.reshape(1, -1), use_cache=False, logits_to_keep=keep,
                                swe_pass=spec).logits[0]
            lp = logits.float().log_softmax(-1).reshape(G, 1 + R, -1)
            total = lp[:, 0, torch.tensor([x[0] for x in self.label_ids], device=dev)]   # (G, 16)
            if R:
                tgt = torch.tensor(self._tgt, device=dev)
                tok = lp[:, 1:].gather(-1, tgt[None, :, None].expand(G, R, 1))[..., 0]
                total = total.index_add(1, owner[:R], tok)
        return total.double().cpu().numpy()

    def iter_scores(self, texts: Sequence[str], *, prefix_reuse: bool | None = None,
                    ids: Sequence[list[int]] | None = None) -> Iterator[tuple[list[int], np.ndarray]]:
        """(indices, (k, 16) scores) pass by pass. A worker thread tokenizes ahead while the model scores;
        messages wait in per-slot buckets, and a bucket is scored when it holds ``batch_size`` messages (the
        rest at the end). Which messages share a pass changes no score (batch invariance)."""
        buckets: dict[int, list[tuple[int, list[int]]]] = {}
        for chunk in self._tokenized(texts, ids):
            for i, m in chunk:
                b = buckets.setdefault(self.slot_of(len(m), prefix_reuse=prefix_reuse), [])
                b.append((i, m))
                if len(b) == self.batch_size:
                    yield [j for j, _ in b], self.score_ids([x for _, x in b], prefix_reuse=prefix_reuse)
                    b.clear()
        for _, b in sorted(buckets.items()):
            if b:
                yield [j for j, _ in b], self.score_ids([x for _, x in b], prefix_reuse=prefix_reuse)

    def _tokenized(self, texts: Sequence[str], ids) -> Iterator[list[tuple[int, list[int]]]]:
        """Chunks of (index, token ids), tokenized on a worker thread one chunk ahead of the consumer."""
        if ids is not None:
            yield list(enumerate(ids))
            return
        texts = list(texts)
        q: queue.Queue = queue.Queue(maxsize=2)
        stop = threading.Event()

        def work():
            try:
                for start in range(0, len(texts), TOKENIZE_CHUNK):
                    if stop.is_set():
                        return
                    part = self._tokenize(texts[start:start + TOKENIZE_CHUNK])
                    q.put(list(enumerate(part, start)))
                q.put(None)
            except BaseException as exc:   # handed to the consumer, raised there
                q.put(exc)

        worker = threading.Thread(target=work, name="llm-tokenize", daemon=True)
        worker.start()
        try:
            while (item := q.get()) is not None:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            stop.set()
            while worker.is_alive():   # unblock a worker waiting on a full queue
                try:
                    q.get_nowait()
                except queue.Empty:
                    worker.join(0.05)

    def label_scores(self, texts: Sequence[str], *, prefix_reuse: bool | None = None,
                     advance: Callable[[int], None] | None = None) -> np.ndarray:
        """(n, 16) total label log-probs in input order; ``advance(k)`` after each pass of k messages."""
        out = np.zeros((len(texts), len(INTENTS)))
        for idx, scores in self.iter_scores(texts, prefix_reuse=prefix_reuse):
            out[idx] = scores
            if advance is not None:
                advance(len(idx))
        return out

    def predict(self, texts: Sequence[str], *, advance: Callable[[int], None] | None = None) -> list[Prediction]:
        return [prediction_from_scores(row) for row in self.label_scores(list(texts), advance=advance)]
