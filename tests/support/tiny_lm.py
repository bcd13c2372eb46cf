"""A tiny causal LM built from scratch for tests and benchmarks: a byte-level BPE tokenizer trained with
``tokenizers`` on the prompt and label text, and a LlamaConfig model (hidden 64, 2 layers by default;
``model_overrides`` builds a realistic size for GPU benchmarks; ``weights=False`` saves no weights), saved to a folder and reloaded through
``from_pretrained`` like any real model. Its weights are random unless ``train_steps`` teaches it
``TRAIN_PAIRS`` (hand-written)."""

from __future__ import annotations

from pathlib import Path

from swe_taskflow.taxonomy import DEFINITIONS, INTENTS

TRAIN_PAIRS = [
    ("the app crashes with a KeyError, fix it", "bug-fix"),
    ("run the tests", "execute"),
    ("write unit tests for the parser", "tests"),
    ("thanks!", "other"),
]


SHORT_PROMPT = "Classify the developer message with one task_type.\nMessage:\n{message}\n\ntask_type:\n"


def build_tiny_lm(folder: Path, *, max_positions: int = 2048, train_steps: int = 0, seed: int = 0,
                  train_prompt: Path | None = None, model_overrides: dict | None = None, weights: bool = True) -> Path:
    """Save a tiny model + tokenizer in ``folder``; with ``train_steps``, first teach it TRAIN_PAIRS under
    the template ``train_prompt`` (a short one keeps the ~60 CPU steps to a few seconds)."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    from builder.classify.llm import load_prompt_template

    template = load_prompt_template()
    corpus = [template.prefix, template.suffix, *[" " + i for i in INTENTS], *DEFINITIONS.values(),
              *[m for m, _ in TRAIN_PAIRS]] * 3
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=["<s>", "</s>", "<pad>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(corpus, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>")
    folder.mkdir(parents=True, exist_ok=True)
    fast.save_pretrained(folder)
    torch.manual_seed(seed)
    arch = dict(vocab_size=len(fast), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=max_positions)
    arch.update(model_overrides or {})
    arch["vocab_size"] = max(arch["vocab_size"], len(fast))
    cfg = LlamaConfig(bos_token_id=fast.bos_token_id, eos_token_id=fast.eos_token_id,
                      pad_token_id=fast.pad_token_id, **arch)
    if not weights:   # tokenizer and config only (the caller builds the weights, e.g. on a GPU)
        cfg.save_pretrained(folder)
        return folder
    model = LlamaForCausalLM(cfg)
    if train_steps:
        train_t = load_prompt_template(train_prompt) if train_prompt else template
        rows = [fast(train_t.prefix)["input_ids"] + fast(m)["input_ids"] + fast(train_t.suffix)["input_ids"]
                + fast(" " + lab)["input_ids"] for m, lab in TRAIN_PAIRS]
        rows = [[fast.bos_token_id] + r for r in rows]
        n = max(map(len, rows))
        ids = torch.full((len(rows), n), fast.pad_token_id)
        labels = torch.full((len(rows), n), -100)
        for i, r in enumerate(rows):
            ids[i, :len(r)] = torch.tensor(r)
            labels[i, 1:len(r)] = torch.tensor(r[1:])
        mask = (ids != fast.pad_token_id).long()
        opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
        model.train()
        for _ in range(train_steps):
            loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
    model.save_pretrained(folder)
    return folder
