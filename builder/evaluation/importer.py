"""``swe-taskflow evaluate import``: a Harbor job folder back into results and the release.

Each trial must bind to a row of the release (same release name, condition, split hash and row hash
as its task.toml records); its answer turns are scored through the per-kind registry (``qa``: the
LLM judge), its checkpoints read from the verifier outputs; results (JSON + plots) are written, and
the trials' final trajectories become rows of the release's ``trajectories`` config, bound to the
split and row hashes (``verify`` checks the binding, ``push`` publishes them).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Mapping

from swe_taskflow.errors import InputError
from swe_taskflow.hashing import ROW_HASH_FIELD
from swe_taskflow.jsonl import write_json

from .release import open_release
from .report import TrialScore, assign_runs, plot, summarize, trial_checkpoints
from .results import ISSUE, TrialRecord, read_jobs
from .scoring import AnswerCase, judge_prompt_sha256, scorer_for

RESULTS_FORMAT = "swe-taskflow-results-1"


def _bind(trial: TrialRecord, release, rows_by_cond: dict) -> Mapping[str, Any]:
    m, where = trial.meta, str(trial.path / "result.json")
    man = release.manifest
    if m.get("release") != man.name:
        raise InputError("trial ran a task of another release", path=where, field="release",
                         expected=man.name, actual=m.get("release"))
    entry = release.split(m["condition"])
    if m.get("split_sha256") != entry.sha256:
        raise InputError("trial ran a task of another version of this split", path=where, field="split_sha256",
                         expected=entry.sha256, actual=m.get("split_sha256"))
    if m["condition"] not in rows_by_cond:
        rows_by_cond[m["condition"]] = {r["instance_id"]: r for r in release.rows(m["condition"])}
    row = rows_by_cond[m["condition"]].get(m["instance_id"])
    if row is None or row[ROW_HASH_FIELD] != m.get("row_sha256"):
        raise InputError("trial's task is not bound to a row of this split", path=where, field="row_sha256",
                         expected=None if row is None else row[ROW_HASH_FIELD], actual=m.get("row_sha256"))
    return row


def score_trial(trial: TrialRecord, row: Mapping[str, Any], run: int, context: Mapping[str, Any]) -> TrialScore:
    questions = {q["question_id"]: q for q in row.get("questions") or []}
    answers = []
    for s in trial.steps:
        if s.kind == ISSUE:
            continue
        q = questions.get(s.question_id or "")
        if q is None:
            raise InputError("answer turn names a question the release row does not hold", path=str(trial.path),
                             field=f"{s.step}.question_id", actual=s.question_id)
        v = scorer_for(s.kind, context)(AnswerCase(trial.instance_id, s.turn_index, s.kind, q, s.answer))
        answers.append({"turn_index": s.turn_index, "kind": s.kind, "question_id": s.question_id,
                        "answer": s.answer, **v.to_dict()})
    return TrialScore(trial, run, trial_checkpoints(trial), answers)


def _trajectory_rows(release_dir: Path, scores: list[TrialScore], first_run: int) -> list[dict[str, Any]]:
    from builder.release.trajectories import import_trajectories
    rows = []
    with tempfile.TemporaryDirectory(prefix="swe-taskflow-traj-") as tmp:
        for s in scores:
            t = s.trial
            if t.trajectory is None:
                continue
            named = Path(tmp) / f"{s.run}" / f"{t.instance_id}.json"   # import reads the instance id from the name
            named.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(t.trajectory, named)
            extras = {t.instance_id: {
                "checkpoints": [{"turn_index": c["turn_index"], "patch_sha256": c["patch_sha256"],
                                 "tests_passed": int(c["tests_passed"] or 0), "tests_failed": int(c["tests_failed"] or 0),
                                 "resolved": bool(c["resolved"])} for c in s.checkpoints[1:]],
                "qa_answers": [{"question_id": a["question_id"], "answer": a["answer"] or "", "verdict": a["verdict"],
                                "judge": a["judge"]} for a in s.answers]}}
            rows += import_trajectories(release_dir, [named], condition=t.condition, model=t.model,
                                        run=first_run + s.run, fmt="atif", extras=extras)
    return rows


def import_job(job_dirs: list[str | os.PathLike], release_dir: str | os.PathLike, out: str | os.PathLike, *,
               judge=None, dataset: str | os.PathLike | None = None, add_to_release: bool = True,
               first_run: int = 0, replace: bool = False, plots: bool = True) -> dict[str, Any]:
    """Score every trial of ``job_dirs`` against the release; write ``out``/results.json (+ plots)."""
    release = open_release(release_dir)
    trials = read_jobs(list(job_dirs), dataset)
    rows_by_cond: dict = {}
    bound = [(t, _bind(t, release, rows_by_cond)) for t in trials]
    runs = assign_runs(trials)
    context = {"llm": judge}
    scores = [score_trial(t, row, runs[t.trial], context) for t, row in bound]
    summary = summarize(scores)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    judge_info = None if judge is None else {**judge.info, "prompt_sha256": judge_prompt_sha256(),
                                             "usage": judge.ledger.to_dict()}
    doc = {
        "format": RESULTS_FORMAT,
        "release": {"name": release.manifest.name, "version": release.manifest.version},
        "jobs": [str(Path(j)) for j in job_dirs], "judge": judge_info, "groups": summary,
        "trials": [{"trial": s.trial.trial, "instance_id": s.trial.instance_id, "condition": s.trial.condition,
                    "agent": s.trial.agent, "model": s.trial.model, "run": s.run, "row_sha256": s.trial.meta["row_sha256"],
                    "exception": s.trial.exception, "checkpoints": s.checkpoints, "answers": s.answers,
                    "cost_usd": sum(st.cost_usd for st in s.trial.steps),
                    "tokens_in": sum(st.tokens_in for st in s.trial.steps),
                    "tokens_out": sum(st.tokens_out for st in s.trial.steps)} for s in scores],
    }
    files = plot(summary, out) if plots and summary else []
    doc["plots"] = files
    if add_to_release:
        from builder.release.trajectories import add_trajectories
        traj_rows = _trajectory_rows(Path(release_dir), scores, first_run)
        manifest = add_trajectories(release_dir, traj_rows, replace=replace)
        doc["trajectories"] = {"added": len(traj_rows), "manifest": manifest.path_in_release}
    write_json(out / "results.json", doc)
    return doc


def summary_lines(doc: Mapping[str, Any]) -> list[str]:
    lines = []
    for g in doc["groups"]:
        rr, acc = g["resolve_rate"], g["answer_accuracy"]
        fmt = lambda x: "-" if x is None else f"{x:.3f}"   # noqa: E731
        curve = " -> ".join(fmt(v) for v in g["checkpoint_curves"]["resolved"]["mean"])
        lines.append(f"{g['condition']:<22} {g['model']:<28} trials {g['trials']:>3}  resolve {fmt(rr['mean'])} "
                     f"[{fmt(rr['min'])}, {fmt(rr['max'])}]  checkpoints {curve}  accuracy {fmt(acc['mean'])}  "
                     f"cost ${g['cost_usd']:.4f}  tokens {g['tokens_in'] + g['tokens_out']}")
    return lines


__all__ = ["import_job", "score_trial", "summary_lines", "RESULTS_FORMAT"]
