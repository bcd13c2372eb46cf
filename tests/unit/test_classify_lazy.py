"""A model loads only when a label is missing from the cache (issue 36): a rebuild whose labels are cached
builds no classifier. The embedded classifier is replaced by a counting stand-in (hand-written)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import builder.classify as classify
from builder.classify import LazyClassifier, Prediction, label_texts
from builder.pipeline.stages import common

TEXTS = ["fix the login crash", "run the tests", "thanks!", "fix the login crash"]


class Stand:
    """What the embedded classifier answers, without MiniLM."""

    info = {"name": "embedded", "version": "test", "revision": "r", "prompt_sha256": "p"}

    def predict(self, texts):
        return [Prediction("other", 1.0) for _ in texts]


@pytest.fixture()
def builds(monkeypatch) -> list:
    made: list = []

    def build(kind, device, batch_size):
        made.append(kind)
        return Stand()

    monkeypatch.setattr(classify, "_embedded", build)
    return made


def _ctx(tmp_path):
    progress = SimpleNamespace(total=0, done=0)
    progress.set_total = lambda n: setattr(progress, "total", n)
    progress.advance = lambda n=1: setattr(progress, "done", progress.done + n)
    sec = SimpleNamespace(name="embedded", device="cpu", batch_size=64)
    return SimpleNamespace(recipe=SimpleNamespace(classifier=sec), items=SimpleNamespace(root=tmp_path),
                           progress=progress)


def test_a_stage_rerun_with_cached_labels_builds_no_classifier(tmp_path, builds):
    ctx = _ctx(tmp_path)
    common.classifier.cache_clear()
    first, info = common.label(ctx, TEXTS)
    assert builds == ["embedded"] and ctx.progress.done == ctx.progress.total == 3
    common.classifier.cache_clear()   # a new process
    again, info_again = common.label(_ctx(tmp_path), TEXTS)
    assert builds == ["embedded"]      # nothing built: every label came from the cache
    assert info_again == info and [p.intent for p in again] == [p.intent for p in first]
    common.classifier.cache_clear()
    common.label(_ctx(tmp_path), TEXTS + ["a new message"])
    assert builds == ["embedded", "embedded"]   # one missing label: built


def test_cache_keys_stay_the_classifier_identity(tmp_path, builds):
    lazy = LazyClassifier("embedded", "cpu", 64, tmp_path)
    label_texts(TEXTS, lazy, cache=str(tmp_path))
    assert classify.LabelCache(Stand.info, tmp_path).get(TEXTS[0]) is not None   # same file as an eager run


def test_a_changed_build_input_rebuilds(tmp_path, builds, monkeypatch):
    label_texts(TEXTS, LazyClassifier("embedded", "cpu", 64, tmp_path), cache=str(tmp_path))
    monkeypatch.setattr(classify, "_build_fingerprint", lambda kind: "another")
    label_texts(TEXTS, LazyClassifier("embedded", "cpu", 64, tmp_path), cache=str(tmp_path))
    assert builds == ["embedded", "embedded"]   # no memo for the new code: its identity is built, not guessed
