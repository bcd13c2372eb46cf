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


def test_batched_equals_unbatched(scorer):
    batched = scorer.label_scores(MESSAGES)
    single = np.vstack([scorer.label_scores([m]) for m in MESSAGES])
    np.testing.assert_allclose(batched, single, atol=1e-4)
    assert batched.argmax(1).tolist() == single.argmax(1).tolist()


def test_prefix_reuse_equals_full_reencoding(scorer):
    reuse = scorer.label_scores(MESSAGES, prefix_reuse=True)
    full = scorer.label_scores(MESSAGES, prefix_reuse=False)
    np.testing.assert_allclose(reuse, full, atol=1e-4)


def test_scores_match_an_independent_full_forward(scorer):
    """Sum of label-token log-probs from one plain forward over the whole concatenated sequence."""
    import torch

    msg = MESSAGES[0]
    got = scorer.label_scores([msg])[0]
    base = scorer.prefix_ids + scorer.message_ids(msg) + scorer.suffix_ids
    for j in (INTENTS.index("new-feature"), INTENTS.index("meta-question"), INTENTS.index("tests")):
        lab = scorer.label_ids[j]
        ids = torch.tensor([base + lab])
        with torch.no_grad():
            logp = scorer.model(input_ids=ids).logits[0].float().log_softmax(-1)
        want = sum(float(logp[len(base) - 1 + t, tok]) for t, tok in enumerate(lab))
        assert got[j] == pytest.approx(want, abs=1e-4)


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
    assert s.info["dtype"] == "bfloat16"
    preds = s.predict(MESSAGES)
    assert all(p.intent in INTENTS for p in preds)
    batched = s.label_scores(MESSAGES)
    single = np.vstack([s.label_scores([m]) for m in MESSAGES])
    np.testing.assert_allclose(batched, single, atol=0.25)  # bf16: padding changes rounding a little
    top2 = np.sort(batched, axis=1)[:, -2:]
    clear = (top2[:, 1] - top2[:, 0]) > 0.5
    assert (batched.argmax(1) == single.argmax(1))[clear].all()
    np.testing.assert_allclose(s.label_scores(MESSAGES, prefix_reuse=True),
                               s.label_scores(MESSAGES, prefix_reuse=False), atol=0.25)
