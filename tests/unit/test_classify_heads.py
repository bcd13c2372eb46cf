"""The embedded classifier's linear heads: the shipped file, its math, its use, and its reproduction."""

from __future__ import annotations

import hashlib
import json
import warnings
from dataclasses import asdict

import numpy as np
import pytest

from builder.classify import load_classifier
from builder.classify.embedded import DEFAULT_HEADS, LinearHead, load_heads
from tools.dev_labels import save_heads
from tools.train_heads import DEV_LABELS, GENERAL
from builder.classify.issue import ISSUE_INTENTS
from swe_taskflow.errors import InputError
from swe_taskflow.taxonomy import INTENTS

from test_classify_issue import BUG_TEMPLATE, FEATURE_LABEL, UNDECLARED


@pytest.fixture(scope="module")
def embedded():
    return load_classifier("embedded")


def test_shipped_heads_cover_the_taxonomy_and_say_how_they_were_fitted():
    heads = load_heads()
    assert sorted(heads.general.classes) == sorted(INTENTS)
    assert set(heads.issue.classes) <= set(ISSUE_INTENTS) and {"bug-fix", "new-feature"} <= set(heads.issue.classes)
    assert [n for n, _ in heads.general.features] == ["knn", "proto", "char", "cue", "form", "emb"]
    t = heads.training
    assert [f["file"] for f in t["general"]["label_files"]] == list(DEV_LABELS)
    assert "hand_labels" not in json.dumps(t).replace("tests/data/hand_labels_*", "")  # never fitted on held-out
    assert t["general"]["settings"] == asdict(GENERAL)
    cv = t["general"]["grouped_cv"]  # the yardstick the settings were chosen by, recorded with the fit
    assert cv["grouped_by"] == "repository" and cv["all"]["n"] == t["general"]["rows"]
    assert cv["high+medium"]["n"] >= 2000 and 0 < cv["high+medium"]["exact"] < 1
    assert t["issue"]["bug_fix_bias"] >= 0 and t["issue"]["rows"] == sum(t["issue"]["classes"].values())


def test_log_proba_is_a_softmax_of_the_linear_scores():
    rng = np.random.default_rng(5)
    head = LinearHead(("bug-fix", "tests", "other"), (("a", 2), ("b", 3)), rng.normal(size=(3, 5)), rng.normal(size=3))
    x = rng.normal(size=(4, 5)) * 30  # large scores: the stable form must not overflow
    lp = head.log_proba(x)
    z = x @ head.coef.T + head.intercept
    ref = np.array([[s - max(r) - np.log(sum(np.exp(v - max(r)) for v in r)) for s in r] for r in z])
    assert np.allclose(lp, ref) and np.allclose(np.exp(lp).sum(1), 1.0)


def test_heads_file_round_trips_byte_identically(tmp_path):
    heads = load_heads()
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    save_heads(a, heads.general, heads.issue, heads.training)
    save_heads(b, load_heads(a).general, load_heads(a).issue, load_heads(a).training)
    assert a.read_bytes() == b.read_bytes() == DEFAULT_HEADS.read_bytes()


def test_malformed_heads_file_names_the_file(tmp_path):
    d = json.loads(DEFAULT_HEADS.read_text())
    d["issue"]["coef"] = d["issue"]["coef"][:1]
    bad = tmp_path / "heads.json"
    bad.write_text(json.dumps(d))
    with pytest.raises(InputError) as err:
        load_heads(bad)
    assert "heads.json" in str(err.value) and "coef" in str(err.value)
    bad.write_text("{not json")
    with pytest.raises(InputError):
        load_heads(bad)
    d = json.loads(DEFAULT_HEADS.read_text())
    d["issue"]["classes"][0] = "feature"
    bad.write_text(json.dumps(d))
    with pytest.raises(InputError) as err:
        load_heads(bad)
    assert "unknown intents" in str(err.value)


def test_issue_reports_get_an_issue_intent_and_ignore_declared_labels(embedded):
    labelled = FEATURE_LABEL
    unlabelled = FEATURE_LABEL.replace("**Labels:** feature, ui/ux\n\n", "")
    relabelled = FEATURE_LABEL.replace("feature, ui/ux", "bug")
    preds = embedded.predict([BUG_TEMPLATE, labelled, unlabelled, relabelled])
    assert all(p.intent in ISSUE_INTENTS for p in preds)
    assert preds[0].intent == "bug-fix" and preds[1].intent == "new-feature"
    # the declared label is masked: with, without or contradicting it, the same prediction and probabilities
    assert preds[1].probs == preds[2].probs == preds[3].probs
    assert abs(sum(preds[0].probs.values()) - 1.0) < 1e-9


@pytest.mark.slow
def test_versions_name_the_heads(embedded):
    v1 = load_classifier("embedded-v1")
    assert embedded.info["name"] == "embedded" and embedded.info["heads_sha256"] == load_heads().sha256
    assert f"heads-{load_heads().sha256[:12]}" in embedded.info["version"]
    assert v1.info["name"] == "embedded-v1" and "heads" not in v1.info["version"]
    short = ["fix the crash when the cart is empty", UNDECLARED]
    assert [p.intent for p in embedded.predict(short)] == [p.intent for p in embedded.predict(short[::-1])][::-1]


#: how far a refit on another CPU type may move a coefficient (MiniLM's features differ there in their last bits)
TOLERANCE = 0.05
#: how far it may move a grouped-CV figure: a few rows of the smallest part (an AMD EPYC refit flipped one of
#: the 454 low-confidence rows, 0.253 -> 0.251, and one of 3,247 in all)
CV_TOLERANCE = 0.005


def _without_cv(training: dict) -> dict:
    return {**training, "general": {k: v for k, v in training["general"].items() if k != "grouped_cv"}}


@pytest.mark.data
@pytest.mark.slow
def test_training_reproduces_the_shipped_heads(sessions_file, shared_dir, tmp_path):
    """``python -m tools.train_heads`` on the committed label files and ../shared gives the shipped heads file byte
    for byte (L-BFGS on fixed data; MiniLM features on CPU)."""
    from tools.train_heads import train

    out = tmp_path / "heads.json"
    train(sessions_file, shared_dir / "data" / "swe-bench-pro", out,
          shared_dir / "data" / "interaction-sessions" / "reserved_messages.sha256")
    got, shipped = json.loads(out.read_text()), json.loads(DEFAULT_HEADS.read_text())
    # same rows and settings; the grouped-CV figure too, within a few rows where the CPU type differs (below)
    assert _without_cv(got["training"]) == _without_cv(load_heads().training)
    # Byte for byte on the CPU type that fitted the shipped file. MiniLM's features differ in their last bits
    # across CPU types (two AMD EPYC refits moved coefficients by up to 0.017 and 0.033, the grouped-CV figure
    # not at all; a third flipped one grouped-CV row): there the heads must agree within TOLERANCE and the
    # grouped-CV figures within CV_TOLERANCE, and the test says so. Digests, not bytes, are compared:
    # pytest's diff of two 100 KB texts runs for many minutes.
    if hashlib.sha256(out.read_bytes()).hexdigest() != hashlib.sha256(DEFAULT_HEADS.read_bytes()).hexdigest():
        for head in ("general", "issue"):
            assert {k: v for k, v in got[head].items() if k not in ("coef", "intercept")} == \
                {k: v for k, v in shipped[head].items() if k not in ("coef", "intercept")}
            assert [np.shape(got[head][k]) for k in ("coef", "intercept")] == \
                [np.shape(shipped[head][k]) for k in ("coef", "intercept")]
        diff = max(abs(a - b) for head in ("general", "issue") for key in ("coef", "intercept")
                   for a, b in zip(np.ravel(got[head][key]), np.ravel(shipped[head][key])))
        assert {k: v for k, v in got.items() if k not in ("general", "issue", "training")} == \
            {k: v for k, v in shipped.items() if k not in ("general", "issue", "training")}
        assert diff <= TOLERANCE, f"the refitted heads differ from the shipped file by up to {diff:.3g}"
        cv_got, cv_shipped = got["training"]["general"]["grouped_cv"], shipped["training"]["general"]["grouped_cv"]
        assert cv_got.keys() == cv_shipped.keys()
        for part, fig in cv_shipped.items():
            if isinstance(fig, dict):
                assert cv_got[part]["n"] == fig["n"]
                assert abs(cv_got[part]["exact"] - fig["exact"]) <= CV_TOLERANCE, (part, cv_got[part], fig)
            else:
                assert cv_got[part] == fig
        warnings.warn(f"refitted heads are not byte-identical on this CPU type (largest difference {diff:.3g})")


@pytest.mark.data
@pytest.mark.slow
def test_issue_head_on_held_out_pro_issues(embedded, shared_dir):
    """Held-out SWE-Bench Pro issues: the hand-labelled sample and the held-out half of the declared types."""
    from builder.classify.declared import declared_type
    from tools.dev_labels import is_dev_half
    from tools.dev_labels import load_hand_labels
    from builder.sources import load_tasks

    pro = shared_dir / "data" / "swe-bench-pro"
    tasks = {t.instance_id: t for t in load_tasks(str(pro / "swe_bench_pro_public_731.jsonl")).tasks}
    with open(pro / "hf_schema_sample_100.jsonl", encoding="utf-8") as fh:
        hf = {json.loads(line)["instance_id"] for line in fh}
    hand = {x.session_id: x.intent for x in load_hand_labels(DEFAULT_HEADS.parents[3] / "tests" / "data"
                                                                / "hand_labels_pro_v1.jsonl")}
    assert not set(hand) & hf
    held = {k: declared_type(t.problem_statement) for k, t in tasks.items() if not is_dev_half(k)}
    held = {k: y for k, y in held.items() if y}
    for gold, floor in ((hand, 0.65), (held, 0.75)):
        keys = sorted(gold)
        pred = embedded.predict([tasks[k].original_prompt for k in keys])
        assert np.mean([p.intent == gold[k] for p, k in zip(pred, keys)]) > floor
