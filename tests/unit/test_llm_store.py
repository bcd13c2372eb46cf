"""Request keys, the response store, concurrency limits and the local transformers backend."""

from __future__ import annotations

import hashlib
import json
import threading
import time

import pytest

from builder.llm import BackendConfig, BaseBackend, LLMRequest, ResponseStore, get_backend
from swe_taskflow.errors import InputError, ReplayMissError

MSG = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "héllo"}]


def test_key_is_sha256_of_canonical_request():
    req = LLMRequest("m", {"temperature": 0.0, "max_tokens": 5}, tuple(MSG))
    text = '{"messages":[{"content":"be brief","role":"system"},{"content":"héllo","role":"user"}],' \
           '"model":"m","params":{"max_tokens":5,"temperature":0.0}}'
    assert req.key == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert LLMRequest("m", {"max_tokens": 5, "temperature": 0.0}, tuple(MSG)).key == req.key
    assert LLMRequest("m2", {"max_tokens": 5, "temperature": 0.0}, tuple(MSG)).key != req.key
    assert LLMRequest("m", {"max_tokens": 6, "temperature": 0.0}, tuple(MSG)).key != req.key
    assert LLMRequest("m", {"max_tokens": 5, "temperature": 0.0}, tuple(MSG[:1])).key != req.key


def test_bad_message_is_an_input_error():
    with pytest.raises(InputError, match=r"messages\[0\]"):
        LLMRequest("m", {}, ({"role": "user"},)).key


class Slow(BaseBackend):
    """A backend whose generation sleeps, counting how many calls overlap."""

    name = "slow"

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.active = self.peak = self.n = 0
        self.lock = threading.Lock()

    def _generate(self, request, *, stage):
        with self.lock:
            self.active += 1
            self.n += 1
            self.peak = max(self.peak, self.active)
        time.sleep(0.05)
        with self.lock:
            self.active -= 1
        return f"answer to {request.messages[-1]['content']}", 10, 2, 0


def test_concurrency_limit_and_store_round_trip(tmp_path):
    store = ResponseStore(tmp_path)
    llm = Slow(BackendConfig(model="slow-1", max_concurrency=2), store=store)
    threads = [threading.Thread(target=llm.complete, args=([{"role": "user", "content": str(i)}],),
                                kwargs={"stage": "s"}) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert llm.n == 8 and llm.peak <= 2
    assert len(store) == 8
    rec = json.loads(store.path_for(llm.request([{"role": "user", "content": "3"}]).key).read_text())
    assert rec["response"]["text"] == "answer to 3" and rec["request"]["model"] == "slow-1"
    assert rec["provenance"] == "model" and rec["stage"] == "s"
    assert llm.ledger.to_dict()["s"]["calls"] == 8
    replay = get_backend("replay", store=store, model="slow-1")
    assert replay.complete([{"role": "user", "content": "3"}], stage="s").text == "answer to 3"
    with pytest.raises(ReplayMissError, match="stage 'late'"):
        replay.complete([{"role": "user", "content": "99"}], stage="late")


def test_corrupt_record_names_its_file(tmp_path):
    store = ResponseStore(tmp_path)
    req = LLMRequest("m", {}, tuple(MSG))
    p = store.path_for(req.key)
    p.parent.mkdir(parents=True)
    p.write_text("{not json")
    with pytest.raises(InputError) as ei:
        store.get(req.key)
    assert str(p) in str(ei.value)


def test_unknown_setting_is_a_config_error():
    from swe_taskflow.errors import ConfigError
    with pytest.raises(ConfigError, match="api_key"):
        get_backend("openai", model="m", api_key="sk-should-not-be-configured")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    """A tiny random Llama with a byte-level BPE tokenizer, saved to disk (no download)."""
    pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, models, pre_tokenizers, decoders, trainers
    import torch
    path = tmp_path_factory.mktemp("tiny-llama")
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(["user: hello world assistant: the split is complete"] * 20, trainer)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>")
    fast.save_pretrained(path)
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=len(fast), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                   num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=256,
                                   bos_token_id=0, eos_token_id=1)
    transformers.LlamaForCausalLM(cfg).save_pretrained(path)
    return str(path)


def test_transformers_backend_is_deterministic_and_recorded(tiny_model, tmp_path):
    store = ResponseStore(tmp_path / "store")
    a = get_backend("transformers", store=store, model=tiny_model, params={"max_tokens": 8, "temperature": 0.0})
    msgs = [{"role": "user", "content": "hello world"}]
    r1 = a.complete(msgs, stage="t")
    b = get_backend("transformers", model=tiny_model, params={"max_tokens": 8, "temperature": 0.0})
    r2 = b.complete(msgs, stage="t")                     # a fresh load, no store: same greedy text
    assert r1.text == r2.text and 0 < r1.completion_tokens <= 8 and r1.prompt_tokens > 0
    assert len(store) == 1
    replay = get_backend("replay", store=store, model=tiny_model, params={"max_tokens": 8, "temperature": 0.0})
    assert replay.complete(msgs, stage="t").text == r1.text
