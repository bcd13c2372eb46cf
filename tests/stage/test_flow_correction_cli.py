"""`classify agreement --json` -> `flow measure --confusion` -> `flow score/gap`, end to end on a synthetic corpus
with known true labels read through a known confusion (tests/support/noisy_flows.py; texts `[synthetic]`)."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from builder.cli import main
from swe_taskflow.confusion import Confusion, load_confusion
from swe_taskflow.correction import correct
from swe_taskflow.flow import counts_from_codes
from swe_taskflow.target import load_target
from swe_taskflow.taxonomy import INTENTS
from tests.stage.test_hostile_inputs import one_line
from tests.support.noisy_flows import NoisyCorpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("noisy")
    c = NoisyCorpus.draw(0, sessions=300, labelled=800)
    sessions, reader, classifier = c.write(d)
    assert main(["classify", "agreement", str(reader), str(classifier), "--json", str(d / "C.json"),
                 "--no-confusion"]) == 0
    return d, c, sessions


def test_agreement_json_carries_the_confusion_counts(corpus):
    d, c, _ = corpus
    doc = json.loads((d / "C.json").read_text())
    assert doc["format"] == "swe-taskflow/agreement" and doc["format_version"] == 1 and doc["n_messages"] == 800
    (pair,) = doc["pairs"]
    conf = pair["confusion"]
    assert conf["rows"] == pair["a"] and pair["a"].endswith("reader.jsonl") and conf["columns"].endswith("classifier.jsonl")
    assert conf["labels"] == list(INTENTS) and np.array_equal(conf["counts"], c.confusion_counts())
    assert pair["exact"] == pytest.approx(np.trace(c.confusion_counts()) / 800, abs=1e-6)


def _measure(d, out, *extra):
    assert main(["flow", "measure", str(d / "sessions.jsonl"), "--out", str(out), "--measured-on", "2026-01-01",
                 *map(str, extra)]) == 0


def test_measure_with_confusion_writes_a_corrected_target(corpus, capsys):
    d, c, _ = corpus
    _measure(d, d / "F.json", "--confusion", d / "C.json", "--bootstrap", 40, "--seed", 3)
    _measure(d, d / "F2.json", "--confusion", d / "C.json", "--bootstrap", 40, "--seed", 3)
    _measure(d, d / "R.json", "--bootstrap", 40)
    assert (d / "F.json").read_bytes() == (d / "F2.json").read_bytes()           # seeded: byte-identical
    t, raw = load_target(d / "F.json"), load_target(d / "R.json")
    assert t.corrected and not raw.corrected and t.name == "sessions-corrected" and raw.name == "sessions"
    rec = t.correction
    assert rec["confusion_sha256"] == hashlib.sha256((d / "C.json").read_bytes()).hexdigest()
    assert rec["n_labelled"] == 800 and rec["truth_file"] == "reader.jsonl" and rec["classifier_file"] == "classifier.jsonl"
    want = correct(c.predicted, c.lengths, Confusion(c.confusion_counts()).matrix()).counts.normalized()
    assert t.flow.intent == pytest.approx(want.intent, abs=1e-11)
    assert t.flow.transition == pytest.approx(want.transition, abs=1e-11)
    assert rec["raw_P_T"] == pytest.approx(raw.flow.intent, abs=1e-11)
    assert t.flow.length == pytest.approx(raw.flow.length)                         # lengths do not depend on labels
    assert "Dirichlet" in t.bootstrap["method"] and "Dirichlet" not in raw.bootstrap["method"]
    for k, iv in t.bootstrap["P_T"].items():
        assert iv["lo"] <= iv["value"] <= iv["hi"]
        assert iv["hi"] - iv["lo"] > raw.bootstrap["P_T"][k]["hi"] - raw.bootstrap["P_T"][k]["lo"]   # + classification
    # the corrected flow is closer to the known truth than the raw one
    truth = counts_from_codes(c.true_codes, c.lengths).normalized()
    assert np.abs(t.flow.intent - truth.intent).sum() < np.abs(raw.flow.intent - truth.intent).sum()
    capsys.readouterr()
    assert main(["flow", "score", "--target", str(d / "F.json"), "--benchmark", str(d / "F.json"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tfas"] == pytest.approx(100.0)
    assert main(["flow", "score", "--target", str(d / "F.json"), "--benchmark", str(d / "sessions.jsonl"), "--json",
                 "--bootstrap", "20"]) == 0
    assert json.loads(capsys.readouterr().out)["tfas"] < 100.0
    assert main(["flow", "gap", "--target", str(d / "F.json"), "--benchmark", str(d / "R.json")]) == 0
    assert "bug-fix" in capsys.readouterr().out


def test_a_bad_confusion_file_is_refused_before_anything_is_classified(corpus, tmp_path, capsys):
    d, _, sessions = corpus
    unlabelled = tmp_path / "u.jsonl"
    unlabelled.write_text(json.dumps({"session_id": "a", "messages": [{"text": "fix it"}]}) + "\n")
    two = tmp_path / "two.json"
    assert main(["classify", "agreement", str(d / "reader.jsonl"), str(d / "classifier.jsonl"), str(d / "reader.jsonl"),
                 "--json", str(two), "--no-confusion"]) == 0
    capsys.readouterr()
    doc = json.loads((d / "C.json").read_text())
    bad_labels = tmp_path / "labels.json"
    bad_labels.write_text(json.dumps({**doc, "pairs": [{**doc["pairs"][0], "confusion": {
        **doc["pairs"][0]["confusion"], "labels": list(reversed(INTENTS))}}]}))
    negative = tmp_path / "negative.json"
    counts = [[-1] * 16] + doc["pairs"][0]["confusion"]["counts"][1:]
    negative.write_text(json.dumps({**doc, "pairs": [{**doc["pairs"][0], "confusion": {
        **doc["pairs"][0]["confusion"], "counts": counts}}]}))
    target = tmp_path / "target.json"                          # another kind of document
    target.write_text(json.dumps({"format": "swe-taskflow/target", "format_version": 1}))
    for path, field in ((two, "pairs"), (bad_labels, "pairs[0].confusion.labels"),
                        (negative, "pairs[0].confusion.counts"), (target, "format")):
        one_line(capsys, ["flow", "measure", unlabelled, "--out", tmp_path / "o.json", "--confusion", path,
                          "--classifier", "no-such-classifier"], path.name, field)
    assert not (tmp_path / "o.json").exists()
    assert load_confusion(d / "C.json").n == 800


def test_the_card_says_which_target_is_corrected(tmp_path):
    import dataclasses

    from builder.release.card import render_card
    from builder.release.writer import read_release
    from tests.support.synthetic import small_release

    small_release(tmp_path, name="c")
    manifest, rows, _ = read_release(tmp_path / "rel")
    raw = load_target(tmp_path / "t.json")
    corrected = dataclasses.replace(raw, correction={"n_labelled": 812, "confusion_file": "C.json",
                                                     "confusion_sha256": "f" * 64})
    assert "corrected" not in render_card(manifest, raw, rows).decode()
    assert ("- labels: **corrected** for the classifier's errors: the expected flow of the true intents given its "
            f"confusion matrix on 812 held-out labelled messages (`C.json`, sha256 `{'f' * 64}`)"
            in render_card(manifest, corrected, rows).decode())
