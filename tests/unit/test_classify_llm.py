"""LLM label scoring on a tiny causal LM built here (random weights, and a ~60-step trained one)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.support.tiny_lm import SHORT_PROMPT, TRAIN_PAIRS, build_tiny_lm

from builder.classify import Prediction, label_texts, load_classifier
from builder.classify.llm import LLMLabelScorer, truncate_ids
from swe_taskflow.errors import ConfigError
from swe_taskflow.taxonomy import INTENTS

MESSAGES = ["fix the crash in the login form", "run the tests", "thanks!", "продолжай",
            "Traceback (most recent call last):\n  File \"a.py\", line 1\nKeyError: 'x'", "把按钮改成蓝色",
            "how does the cache work in our code?", "ok"]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory) -> Path:
    return build_tiny_lm(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture(scope="module")
def scorer(tiny_dir) -> LLMLabelScorer:
    return LLMLabelScorer(str(tiny_dir), device="cpu", batch_size=3)


def test_one_valid_label_per_message(scorer):
    preds = scorer.predict(MESSAGES)
    assert len(preds) == len(MESSAGES)
    for p in preds:
        assert isinstance(p, Prediction) and p.intent in INTENTS
        assert set(p.probs) == set(INTENTS)
        assert sum(p.probs.values()) == pytest.approx(1.0)
        assert p.confidence == pytest.approx(max(p.probs.values()))


def _arrangements(s: LLMLabelScorer, msgs: list[str]) -> list[np.ndarray]:
    """The same messages scored in several batches, orders and neighbourhoods, returned in input order."""
    rng = np.random.default_rng(3)
    perm = rng.permutation(len(msgs))
    noise = ["zzz " * k + "filler" for k in range(1, 7)]   # neighbours of other lengths
    out = [s.label_scores(msgs), np.vstack([s.label_scores([m]) for m in msgs])]
    shuffled = s.label_scores([msgs[i] for i in perm] + noise)[:len(msgs)]
    out.append(shuffled[np.argsort(perm)])
    out.append(s.label_scores(noise[:3] + msgs[::-1] + noise[3:])[3:3 + len(msgs)][::-1])
    return out


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_scores_are_bitwise_batch_invariant(tiny_dir, dtype):
    """A message's 16 scores are the same bits whatever batch, position or neighbours it gets."""
    s = LLMLabelScorer(str(tiny_dir), device="cpu", batch_size=3, dtype=dtype)
    ref, *others = _arrangements(s, MESSAGES)
    for got in others:
        assert np.array_equal(got, ref)


def test_batch_size_changes_no_bit(tiny_dir):
    got = [LLMLabelScorer(str(tiny_dir), device="cpu", batch_size=b).label_scores(MESSAGES) for b in (2, 64)]
    assert all(np.array_equal(g, got[0]) for g in got[1:])


def test_prefix_reuse_equals_full_reencoding(scorer):
    reuse = scorer.label_scores(MESSAGES, prefix_reuse=True)
    full = scorer.label_scores(MESSAGES, prefix_reuse=False)
    np.testing.assert_allclose(reuse, full, atol=1e-4)


def _plain_forward_scores(folder: Path, s: LLMLabelScorer, msg: str, labels) -> list[float]:
    """Label log-probs from a separately loaded model (transformers' eager attention), one plain forward over
    the whole concatenated sequence per label: no packing, no prefix reuse, no tree mask."""
    import torch
    from transformers import AutoModelForCausalLM

    ref = AutoModelForCausalLM.from_pretrained(str(folder), attn_implementation="eager").eval()
    base = s.prefix_ids + s.message_ids(msg) + s.suffix_ids
    out = []
    for j in labels:
        lab = s.label_ids[j]
        with torch.no_grad():
            logp = ref(input_ids=torch.tensor([base + lab])).logits[0].float().log_softmax(-1)
        out.append(sum(float(logp[len(base) - 1 + t, tok]) for t, tok in enumerate(lab)))
    return out


def test_scores_match_an_independent_full_forward(scorer, tiny_dir):
    msg = MESSAGES[0]
    got = scorer.label_scores([msg])[0]
    labels = [INTENTS.index(x) for x in ("new-feature", "meta-question", "tests", "other")]
    assert [len(scorer.label_ids[j]) for j in labels] != [1] * len(labels)   # multi-token labels are covered
    np.testing.assert_allclose(got[labels], _plain_forward_scores(tiny_dir, scorer, msg, labels), atol=1e-4)


@pytest.mark.slow
def test_flex_attention_kernel_on_cpu(tiny_dir, scorer):
    """The CUDA kernel (FlexAttention with a block mask from the tree mask_mod), run eagerly on CPU: the
    same scores as the dense kernel and a plain forward; batch-invariant too."""
    flex = LLMLabelScorer(str(tiny_dir), device="cpu", batch_size=3, attention="flex")
    msgs = MESSAGES[:3]
    got = flex.label_scores(msgs)
    np.testing.assert_allclose(got, scorer.label_scores(msgs), atol=1e-4)
    np.testing.assert_allclose(got[0], _plain_forward_scores(tiny_dir, flex, msgs[0], range(len(INTENTS))),
                               atol=1e-4)
    np.testing.assert_allclose(flex.label_scores(msgs, prefix_reuse=False), got, atol=1e-4)
    assert np.array_equal(np.vstack([flex.label_scores([m]) for m in msgs]), got)


def test_slot_length_depends_on_the_message_only():
    from builder.classify.llm import slot_length

    assert [slot_length(n) for n in (1, 16, 17, 128, 129, 257, 513, 1100)] == [16, 16, 32, 128, 160, 320, 640, 1152]
    assert all(slot_length(n) >= n and (slot_length(n) - n) / slot_length(n) < 0.5 for n in range(16, 3000))


def test_weights_load_only_when_a_label_is_scored(tiny_dir, tmp_path):
    s = LLMLabelScorer(str(tiny_dir), device="cpu")
    assert s.info["prompt_sha256"] and s._model is None    # identity without the weights
    label_texts(MESSAGES[:2], s, cache=str(tmp_path))
    assert s._model is not None
    again = LLMLabelScorer(str(tiny_dir), device="cpu")
    label_texts(MESSAGES[:2], again, cache=str(tmp_path))   # all cached: nothing loaded
    assert again._model is None


def test_truncation_rule():
    ids = list(range(100))
    assert truncate_ids(ids, 200) == ids
    cut = truncate_ids(ids, 40)
    assert cut == list(range(30)) + list(range(90, 100))


def test_long_message_within_small_budget(tiny_dir):
    s = LLMLabelScorer(str(tiny_dir), device="cpu", max_message_tokens=32)
    long_msg = "error line " * 400 + "please fix the crash"
    full = s.tokenizer(long_msg, add_special_tokens=False)["input_ids"]
    kept = s.message_ids(long_msg)
    assert len(full) > 32 and len(kept) == 32
    assert kept[:24] == full[:24] and kept[24:] == full[-8:]
    assert s.predict([long_msg])[0].intent in INTENTS


def test_message_longer_than_the_context(tmp_path):
    probe = build_tiny_lm(tmp_path / "probe")
    p = LLMLabelScorer(str(probe), device="cpu")
    room = len(p.prefix_ids) + len(p.suffix_ids) + max(map(len, p.label_ids))
    small = build_tiny_lm(tmp_path / "small", max_positions=room + 40)
    s = LLMLabelScorer(str(small), device="cpu")
    assert s.message_budget == 40
    pred = s.predict(["x = 1\n" * 2000])[0]
    assert pred.intent in INTENTS


def test_trained_tiny_model_picks_the_taught_labels(tmp_path):
    prompt = tmp_path / "short.txt"
    prompt.write_text(SHORT_PROMPT, encoding="utf-8")
    folder = build_tiny_lm(tmp_path / "trained", train_steps=60, train_prompt=prompt)
    s = LLMLabelScorer(str(folder), device="cpu", prompt=prompt)
    assert [p.intent for p in s.predict([m for m, _ in TRAIN_PAIRS])] == [lab for _, lab in TRAIN_PAIRS]


def test_registry_paths_and_unknown_names(tiny_dir):
    assert isinstance(load_classifier(str(tiny_dir), device="cpu"), LLMLabelScorer)
    assert isinstance(load_classifier(f"llm:{tiny_dir}", device="cpu"), LLMLabelScorer)
    with pytest.raises(ConfigError) as err:
        load_classifier("no-such-classifier")
    assert "embedded" in str(err.value)
    with pytest.raises(ConfigError):
        load_classifier("llm:/no/such/folder")
    with pytest.raises(ConfigError):
        load_classifier("embedded", device="tpu")


def test_label_cache_reuses_labels(scorer, tmp_path):
    calls = []

    class Counting:
        info = scorer.info

        def predict(self, texts):
            calls.append(list(texts))
            return scorer.predict(texts)

    first = label_texts(MESSAGES + MESSAGES[:2], Counting(), cache=str(tmp_path))
    second = label_texts(MESSAGES, Counting(), cache=str(tmp_path))
    assert calls == [MESSAGES]  # duplicates classified once; the second run costs nothing
    assert [p.intent for p in second] == [p.intent for p in first[:len(MESSAGES)]]
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and "fix the crash" not in files[0].read_text()  # keys are hashes, not text


@pytest.mark.gpu
def test_cuda_bf16_scoring(tiny_dir, cuda_available):
    s = LLMLabelScorer(str(tiny_dir), device="cuda", batch_size=4)
    assert s.info["dtype"] == "bfloat16" and s.attention == "flex"
    preds = s.predict(MESSAGES)
    assert all(p.intent in INTENTS for p in preds)
    ref, *others = _arrangements(s, MESSAGES)
    for got in others:   # bitwise, as on CPU
        assert np.array_equal(got, ref)
    np.testing.assert_allclose(s.label_scores(MESSAGES, prefix_reuse=False), ref, atol=0.25)
    cpu = LLMLabelScorer(str(tiny_dir), device="cpu").label_scores(MESSAGES)
    np.testing.assert_allclose(ref, cpu, atol=0.25)   # bf16 against float32
