"""evaluate import's arithmetic and scoring registry, without Harbor: random trials checked against an
independent brute-force computation; scorers by kind; the judge's reply parsing; binding errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from builder.evaluation.report import TrialScore, assign_runs, summarize, trial_checkpoints
from builder.evaluation.results import StepRecord, TrialRecord, read_jobs
from builder.evaluation.scoring import AnswerCase, Verdict, qa_judge, register_scorer, scorer_for
from swe_taskflow.errors import InputError


def _trial(rng, name, iid, model, n_issue, n_answer, started):
    steps = []
    for k in range(n_issue):
        tp = float(rng.integers(0, 6))
        r = {"resolved": float(rng.integers(0, 2)), "tests_passed": tp, "tests_failed": 5.0 - tp,
             "f2p_pass_rate": tp / 5, "p2p_pass_rate": 1.0}
        if k == 0:
            ctp = float(rng.integers(0, 6))
            r.update(clean_resolved=0.0, clean_tests_passed=ctp, clean_tests_failed=5.0 - ctp)
        steps.append(StepRecord(f"turn-{k + 1:02d}-issue", k, "issue", r, tokens_in=10, tokens_out=2, cost_usd=0.5))
    for j in range(n_answer):
        steps.append(StepRecord(f"turn-{n_issue + j + 1:02d}-qa", n_issue + j, "qa", {"answered": 1.0},
                                question_id=f"q{j}", answer="x", tokens_in=3, tokens_out=1, cost_usd=0.25))
    meta = {"instance_id": iid, "condition": "qa_last", "row_sha256": "r" * 64}
    return TrialRecord(name, Path(name), meta, "agent", model, steps, None, None, started)


def _scores(rng):
    trials, verdicts = [], {}
    for model in ("m1", "m2"):
        for i in range(5):
            for run in range(3):
                n_issue = 3 if i % 2 == 0 else 1           # split and single-turn tasks mixed
                t = _trial(rng, f"{model}-t{i}-{run}", f"task-{i}", model, n_issue, 2, f"2026-01-0{run + 1}")
                trials.append(t)
                verdicts[t.trial] = [str(rng.choice(["correct", "incorrect", "unanswered", "unjudged"]))
                                     for _ in range(2)]
    runs = assign_runs(trials)
    kinds = ("qa", "review")                              # two answer turns of two kinds, after the issue turns
    scores = [TrialScore(t, runs[str(t.path)], trial_checkpoints(t),
                         [{"verdict": v, "turn_index": t.steps[-2 + j].turn_index, "kind": kinds[j]}
                          for j, v in enumerate(verdicts[t.trial])]) for t in trials]
    return trials, runs, scores


def test_summary_matches_a_brute_force_computation():
    rng = np.random.default_rng(7)
    trials, runs, scores = _scores(rng)
    assert all(runs[f"m1-t0-{r}"] == r for r in range(3))     # runs follow start time (keyed by trial path)
    summary = {g["model"]: g for g in summarize(scores)}
    for model in ("m1", "m2"):
        g = summary[model]
        mine = [s for s in scores if s.trial.model == model]
        per_run_resolve, per_run_curve, per_run_acc = [], [], []
        for r in range(3):
            rs = [s for s in mine if s.run == r]
            finals = []
            for s in rs:
                issue = [st for st in s.trial.steps if st.kind == "issue"]
                finals.append(issue[-1].rewards["resolved"])
            per_run_resolve.append(sum(finals) / len(finals))
            curve = []
            for p in range(4):
                vals = []
                for s in rs:
                    issue = [st for st in s.trial.steps if st.kind == "issue"]
                    seq = [issue[0].rewards["clean_resolved"]] + [st.rewards["resolved"] for st in issue]
                    vals.append(seq[min(p, len(seq) - 1)])
                curve.append(sum(vals) / len(vals))
            per_run_curve.append(curve)
            scored = [a["verdict"] for s in rs for a in s.answers if a["verdict"] != "unjudged"]
            per_run_acc.append(scored.count("correct") / len(scored))
        assert g["resolve_rate"]["mean"] == pytest.approx(np.mean(per_run_resolve))
        assert (g["resolve_rate"]["min"], g["resolve_rate"]["max"]) == (min(per_run_resolve), max(per_run_resolve))
        assert g["checkpoint_curves"]["resolved"]["mean"] == pytest.approx(np.mean(per_run_curve, axis=0).tolist())
        assert g["checkpoint_curves"]["resolved"]["min"] == pytest.approx(np.min(per_run_curve, axis=0).tolist())
        assert g["answer_accuracy"]["mean"] == pytest.approx(np.mean(per_run_acc))
        for j, kind in enumerate(("qa", "review")):           # per kind: the brute force on that kind only
            per_run_kind = []
            for r in range(3):
                vs = [s.answers[j]["verdict"] for s in mine if s.run == r if s.answers[j]["verdict"] != "unjudged"]
                per_run_kind.append(vs.count("correct") / len(vs) if vs else None)
            got = g["answer_accuracy_by_kind"][kind]
            xs = [x for x in per_run_kind if x is not None]
            assert got["mean"] == pytest.approx(np.mean(xs)) and (got["min"], got["max"]) == (min(xs), max(xs))
        turns = g["answer_accuracy_by_turn"]                  # labelled by turn index and kind
        assert {(t["turn_index"], t["kind"]) for t in turns} == {(1, "qa"), (2, "review"), (3, "qa"), (4, "review")}
        assert all(t["label"] == f"turn {t['turn_index'] + 1} ({t['kind']})" for t in turns)
        assert [p["label"] for p in g["checkpoint_points"]] == g["checkpoint_labels"]
        assert g["runs"] == 3 and g["trials"] == 15 and g["tasks"] == 5
        assert g["cost_usd"] == pytest.approx(sum(st.cost_usd for s in mine for st in s.trial.steps))
        assert g["tokens_in"] == sum(st.tokens_in for s in mine for st in s.trial.steps)


def test_checkpoint_test_pass_rate_and_errors():
    t = _trial(np.random.default_rng(1), "t", "i", "m", 2, 0, "")
    t.steps[1].rewards = {}                      # a checkpoint that wrote no reward: counted, not dropped
    t.steps[1].exception = "VerifierTimeoutError: late"
    cps = trial_checkpoints(t)
    r0 = t.steps[0].rewards
    assert cps[0]["test_pass_rate"] == r0["clean_tests_passed"] / 5
    assert cps[1]["test_pass_rate"] == r0["tests_passed"] / 5
    assert cps[2]["resolved"] == 0.0 and cps[2]["error"] == "VerifierTimeoutError: late"
    assert summarize([TrialScore(t, 0, cps, [])])[0]["errors"] == 1


class _FakeJudge:
    """A judge backend stand-in that returns a fixed reply text (the reply parsing is what is tested)."""

    info = {"backend": "fixed", "model": "m"}

    def __init__(self, text):
        self.text = text

    def complete(self, messages, *, stage):
        from builder.llm.requests import LLMReply
        assert "hidden reference" in messages[0]["content"] and "my answer" in messages[0]["content"]
        return LLMReply(text=self.text, key="k", model="m", stage=stage, replayed=True, provenance="hand-written")


def test_qa_judge_verdicts_and_malformed_replies():
    q = {"question": "where?", "reference_answer": "hidden reference", "evidence": [{"path": "a.py"}]}
    case = AnswerCase("i", 3, "qa", q, "my answer")
    ok = qa_judge({"llm": _FakeJudge('{"verdict": "Correct", "reason": "same"}')})(case)
    assert (ok.verdict, ok.correct, ok.judge) == ("correct", True, "qa-judge:fixed:m")
    assert qa_judge({"llm": _FakeJudge("no json here")})(case).verdict == "judge-error"
    assert qa_judge({"llm": _FakeJudge('{"verdict": "maybe"}')})(case).verdict == "judge-error"
    assert qa_judge({"llm": None})(case).verdict == "unjudged"
    blank = AnswerCase("i", 3, "qa", q, "  ")
    assert qa_judge({"llm": _FakeJudge("unused")})(blank).verdict == "unanswered"


def test_scorer_registry_by_kind(monkeypatch):
    from builder.evaluation import scoring
    monkeypatch.setattr(scoring, "_REGISTRY", dict(scoring._REGISTRY))   # leave the real registry as it was
    case = AnswerCase("i", 1, "review-xyz", {"question": "q"}, "a")
    assert scorer_for("review-xyz", {})(case).verdict == "unscored"
    register_scorer("review-xyz", lambda ctx: (lambda c: Verdict("correct", judge="exact")))
    assert scorer_for("review-xyz", {})(case).to_dict()["judge"] == "exact"
    with pytest.raises(Exception):
        register_scorer("issue", lambda ctx: None)


def test_reading_jobs_names_what_is_missing(tmp_path):
    with pytest.raises(InputError, match="job folder not found"):
        read_jobs([tmp_path / "nope"])
    (tmp_path / "job").mkdir()
    with pytest.raises(InputError, match="no trial"):
        read_jobs([tmp_path / "job"])
    trial = tmp_path / "job" / "t1"
    trial.mkdir()
    (trial / "result.json").write_text(json.dumps({"config": {"task": {"path": str(tmp_path / "gone")}},
                                                   "step_results": []}))
    with pytest.raises(InputError, match="--dataset"):
        read_jobs([tmp_path / "job"])
    task = tmp_path / "ds" / "gone"
    task.mkdir(parents=True)
    (task / "task.toml").write_text("[task]\nname = \"a/b\"\n")
    with pytest.raises(InputError, match="not exported by swe-taskflow"):
        read_jobs([tmp_path / "job"], dataset=tmp_path / "ds")
