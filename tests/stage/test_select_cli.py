"""`swe-taskflow select`: files in, byte-identical files out; clear errors on bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from builder.cli import main
from swe_taskflow.flow import count_sessions
from swe_taskflow.jsonl import write_jsonl
from swe_taskflow.schema import QAItem, SplitResult
from swe_taskflow.target import Target
from swe_taskflow.taxonomy import RETAINED

ISSUE = ("bug-fix", "new-feature", "tests", "refactor", "debug")


@pytest.fixture()
def inputs(tmp_path):
    rng = np.random.default_rng(0)
    splits, pool, intents = [], [], []
    for i in range(12):
        ok = i % 5 != 4
        parts = tuple(f"task {i} part {j}" for j in range(3)) if ok else ()
        splits.append(SplitResult(f"t{i}", "ok" if ok else "ineligible", parts, original_prompt=f"task {i} issue",
                                  reason="" if ok else "atomic").to_dict())
        if i % 2 == 0:
            for k in range(1 + i % 3):
                pool.append(QAItem(f"t{i}-q{k}", f"t{i}", f"question {k} on task {i}", "answer",
                                   status="accepted", pool="sol").to_dict())
    pool.append(QAItem("t1-rejected", "t1", "?", "!", status="rejected", reason="proof failed").to_dict())
    texts = {f"task {i} issue" for i in range(12)}
    for s in splits:
        p = s["parts"]
        if p:
            texts |= set(p) | {"\n\n".join(p), "\n\n".join(p[:2]), "\n\n".join(p[1:])}
    for t in sorted(texts):
        intents.append({"text": t, "intent": ISSUE[int(rng.integers(len(ISSUE)))]})
    sessions = [[RETAINED[j] for j in rng.integers(0, 13, size=int(rng.integers(3, 9)))] for _ in range(200)]
    target = Target.from_counts(count_sessions(sessions), name="cli-test", population="synthetic", min_messages=3)
    paths = {"tasks": tmp_path / "splits.jsonl", "pool": tmp_path / "pool.jsonl",
             "intents": tmp_path / "intents.jsonl", "target": tmp_path / "target.json"}
    write_jsonl(paths["tasks"], splits)
    write_jsonl(paths["pool"], pool)
    write_jsonl(paths["intents"], intents)
    target.save(paths["target"])
    return paths


def _run(paths, out, *extra):
    return main(["select", "--tasks", str(paths["tasks"]), "--pool", str(paths["pool"]), "--target",
                 str(paths["target"]), "--intents", str(paths["intents"]), "--out", str(out),
                 "--restarts", "8", *extra])


def test_select_writes_byte_identical_outputs(inputs, tmp_path):
    assert _run(inputs, tmp_path / "a", "--seed", "3", "--conditions") == 0
    assert _run(inputs, tmp_path / "b", "--seed", "3", "--conditions") == 0
    names = ["selection.jsonl", "sessions.jsonl", "report.json", "intents.jsonl", "conditions/qa_random.jsonl"]
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    report = json.loads((tmp_path / "a" / "report.json").read_text())
    assert report["tasks"] == 12 and report["pool"]["excluded_question_ids"] == ["t1-rejected"]
    assert set(report["baselines"]) >= {"split_prompt", "qa_first", "qa_last", "qa_random"}
    sessions = [json.loads(x) for x in (tmp_path / "a" / "sessions.jsonl").read_text().splitlines()]
    assert [s["instance_id"] for s in sessions] == [f"t{i}" for i in range(12)]
    assert all(s["condition"] == "tfas_optimized" for s in sessions)
    sel = [json.loads(x) for x in (tmp_path / "a" / "selection.jsonl").read_text().splitlines()]
    assert {r["status"] for r in sel} <= {"selected", "fixed", "below-filter"}
    assert len(list((tmp_path / "a" / "conditions").glob("*.jsonl"))) == 7


def test_select_errors_name_file_and_row(inputs, tmp_path, capsys):
    rows = inputs["tasks"].read_text().splitlines()
    bad = json.loads(rows[2])
    del bad["status"]
    rows[2] = json.dumps(bad)
    inputs["tasks"].write_text("\n".join(rows) + "\n")
    assert _run(inputs, tmp_path / "x") == 2
    err = capsys.readouterr().err
    assert "splits.jsonl:3" in err and "status" in err
    inputs["intents"].write_text('{"text": "task 0 issue", "intent": "bugfix"}\n')
    inputs["tasks"].write_text("\n".join(rows[:2]) + "\n")
    assert _run(inputs, tmp_path / "y") == 2
    assert "intents.jsonl:1" in capsys.readouterr().err


def test_texts_without_intents_are_classified_once(inputs, tmp_path, monkeypatch):
    import builder.classify as classify
    from builder.classify import Prediction

    calls = []

    class Fake:
        info = {"name": "fake-for-test", "version": "0"}

        def predict(self, texts):
            calls.append(list(texts))
            return [Prediction(intent="debug", confidence=0.5) for _ in texts]

    monkeypatch.setattr(classify, "load_classifier", lambda name: Fake())
    known = inputs["intents"].read_text().splitlines()
    inputs["intents"].write_text("\n".join(known[:5]) + "\n")
    out = tmp_path / "o"
    assert _run(inputs, out, "--classifier", "fake") == 0
    assert len(calls) == 1 and len(calls[0]) == len(set(calls[0])) == len(known) - 5
    rows = [json.loads(x) for x in (out / "intents.jsonl").read_text().splitlines()]
    assert sum(r["origin"] == "given" for r in rows) == 5
    assert {r["intent"] for r in rows if r["origin"] == "classifier"} == {"debug"}


def test_preset_with_an_override_is_reported_beside_the_score(inputs, tmp_path, capsys):
    assert _run(inputs, tmp_path / "p", "--preset", "paper") == 0
    err = capsys.readouterr().err
    assert "selection: preset paper (overridden: restarts=8): 64" not in err   # restarts come from the option
    assert "selection: preset paper (overridden: restarts=8): 8 restarts x <= 20 sweeps" in err
    rep = json.loads((tmp_path / "p" / "report.json").read_text())
    assert rep["preset"] == "paper" and rep["config"]["restarts"] == 8 and rep["config_overrides"] == {"restarts": 8}
    rows = [json.loads(x) for x in (tmp_path / "p" / "selection.jsonl").read_text().splitlines()]
    assert all(r["candidate"]["backbone"] == "split_3" for r in rows if r["split_status"] == "ok")
    assert all(r["candidate"]["n_questions"] > 0 for r in rows if r["available_questions"])
    assert main(["select", "--tasks", str(inputs["tasks"]), "--target", str(inputs["target"]), "--out",
                 str(tmp_path / "x"), "--preset", "nope"]) == 2


def test_the_command_reports_what_the_library_reports(inputs, tmp_path):
    """One way to render the report: the command's report.json is swe_taskflow.select.select_and_report's, plus
    only the record of what the command read (inputs, pool statuses used, intents)."""
    from swe_taskflow.candidates import build_materials
    from swe_taskflow.jsonl import read_jsonl, read_records
    from swe_taskflow.select import SelectConfig, select_and_report
    from swe_taskflow.target import load_target

    assert _run(inputs, tmp_path / "r", "--seed", "2", "--min-placement-share", "0.2") == 0
    got = json.loads((tmp_path / "r" / "report.json").read_text())
    materials, summary = build_materials(read_records(inputs["tasks"], SplitResult, unique="instance_id"),
                                         read_records(inputs["pool"], QAItem, unique="question_id"))
    intents = {obj["text"]: obj["intent"] for _, obj in read_jsonl(inputs["intents"])}
    _, want = select_and_report(materials, intents, load_target(inputs["target"]),
                                SelectConfig(restarts=8, seed=2, min_placement_share=0.2), baselines=True,
                                pool_summary=summary)
    assert set(got) - set(want) == {"inputs", "intents"}
    assert got["pool"].pop("statuses_used") == ["accepted"]
    assert {k: got[k] for k in want} == json.loads(json.dumps(want))


def test_unmeetable_constraints_name_the_input_file(inputs, tmp_path, capsys):
    """The paper preset's diversity constraint on a pool whose questions cannot take every placement: one line
    naming the pool file and the constraint (it used to name the field only)."""
    rows = [json.loads(x) for x in inputs["tasks"].read_text().splitlines()]
    for r in rows:   # no ok split and one question per task: no question can sit between issue turns
        r.update(status="ineligible", parts=[], reason="atomic")
    inputs["tasks"].write_text("".join(json.dumps(r) + "\n" for r in rows))
    pool = [json.loads(x) for x in inputs["pool"].read_text().splitlines()]
    inputs["pool"].write_text("".join(json.dumps(q) + "\n" for q in pool if q["question_id"].endswith("-q0")))
    assert _run(inputs, tmp_path / "u", "--preset", "paper") == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"swe-taskflow: error: {inputs['pool']}: field 'min interleaved': "), err
    assert "cannot be met" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "u" / "report.json").exists()


def test_target_default_means_the_shipped_target_as_in_flow_score(inputs, tmp_path):
    from swe_taskflow.target import default_target_path

    paths = {**inputs, "target": "default"}
    assert _run(paths, tmp_path / "d", "--seed", "3") == 0
    report = json.loads((tmp_path / "d" / "report.json").read_text())
    assert report["inputs"]["target"]["path"] == str(default_target_path())


def test_builder_api_select_writes_what_the_cli_writes(inputs, tmp_path):
    """The CLI is a thin caller of ``builder.api.select`` (issue 33): the same files, byte for byte, and the score."""
    from builder import api
    from swe_taskflow.select import SelectConfig

    assert _run(inputs, tmp_path / "cli", "--seed", "3", "--conditions") == 0
    done = api.select(inputs["tasks"], inputs["target"], tmp_path / "api", pool=inputs["pool"],
                      intents=inputs["intents"], config=SelectConfig(restarts=8, seed=3), conditions=True)
    files = sorted(p.relative_to(tmp_path / "cli") for p in (tmp_path / "cli").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "api") for p in (tmp_path / "api").rglob("*") if p.is_file())
    for f in files:
        assert (tmp_path / "cli" / f).read_bytes() == (tmp_path / "api" / f).read_bytes(), f
    report = json.loads((tmp_path / "api" / "report.json").read_text())
    assert done.tasks == 12 and done.out == tmp_path / "api" and done.evaluations > 0
    score = report["score"]                                   # the returned score is the report's (rounded there)
    assert [round(v, 10) for v in (done.tfas, done.S_L, done.S_T, done.S_R)] == \
        [score["tfas"], score["S_L"], score["S_T"], score["S_R"]]
