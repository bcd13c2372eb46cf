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
from pathlib import Path
from typing import Any, Mapping

from swe_taskflow import untrusted
from swe_taskflow.errors import ConfigError, InputError
from swe_taskflow.hashing import ROW_HASH_FIELD
from swe_taskflow.owned import owned_temp, owned_temp_dir, swap_dir

from .jobfiles import MAX_ANSWER_BYTES, MAX_JSON_BYTES, finite, read_bytes
from .plots import plot_all
from swe_taskflow.release import open_release
from swe_taskflow.turns.stress import is_stress_split

from .report import TrialScore, assign_runs, relative_to_single_prompt, summarize, summarize_stress, trial_checkpoints
from .results import ISSUE, TrialRecord, read_jobs
from .scoring import AnswerCase, judge_prompt_sha256, scorer_for

#: results.json's format; 3: stress-test slices in ``stress``, never in ``groups`` (issue 22); 2: runner keys,
#: invalid trials, per-turn labels, by-kind accuracy (1: before issue 25).
RESULTS_FORMAT = "swe-taskflow-results-3"


def _expected_steps(row: Mapping[str, Any]) -> list[str]:
    from swe_taskflow.visibility import agent_view

    from .export import step_name
    return [step_name(t.turn_index, t.kind) for t in agent_view(row).turns]


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
    declared, expected = [s["step"] for s in m["steps"]], _expected_steps(row)
    if declared != expected:   # the task.toml is not hashed: its steps must be the row's turns
        raise InputError("the task's steps are not the release row's turns", path=where,
                         field="task.toml metadata.swe_taskflow.steps", expected=expected, actual=declared)
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
        v = scorer_for(s.kind, context)(AnswerCase(trial.instance_id, s.turn_index, s.kind, q, s.answer,
                                                   verifier=s.stress_verdict))
        answers.append({"turn_index": s.turn_index, "kind": s.kind, "question_id": s.question_id,
                        "answer": s.answer, "answer_truncated": s.answer_truncated, **v.to_dict()})
    return TrialScore(trial, run, trial_checkpoints(trial), answers)


def _trajectory_rows(release_dir: Path, scores: list[TrialScore], first_run: int) -> list[dict[str, Any]]:
    """Trajectory rows of the valid trials (an invalid trial is never stored), named by what ran."""
    from ..release.trajectories import import_trajectories
    rows = []
    with owned_temp("swe-taskflow-traj-") as tmp:
        for n, s in enumerate(scores):
            t = s.trial
            if t.trajectory is None or t.invalid:
                continue
            named = Path(tmp) / f"{n}" / f"{t.instance_id}.json"   # import reads the instance id from the name
            named.parent.mkdir(parents=True, exist_ok=True)
            named.write_bytes(read_bytes(t.trajectory, MAX_JSON_BYTES)[0])   # checked: no link, bounded
            extras = {t.instance_id: {
                "checkpoints": [{"turn_index": c["turn_index"], "patch_sha256": c["patch_sha256"],
                                 "tests_passed": int(c["tests_passed"] or 0), "tests_failed": int(c["tests_failed"] or 0),
                                 "resolved": bool(c["resolved"])} for c in s.checkpoints[1:]],
                "qa_answers": [{"question_id": a["question_id"], "answer": a["answer"] or "", "verdict": a["verdict"],
                                "judge": a["judge"]} for a in s.answers]}}
            rows += import_trajectories(release_dir, [named], condition=t.condition, model=t.label,
                                        run=first_run + s.run, fmt="atif", extras=extras)
    return rows


def _trial_doc(s: TrialScore) -> dict[str, Any]:
    t = s.trial
    return {"trial": t.trial, "job": t.job, "instance_id": t.instance_id, "condition": t.condition,
            "agent": t.agent, "model": t.model, "settings_sha256": t.settings_sha256,
            "settings_keys": sorted(t.settings.get("kwargs") or {}), "label": t.label, "run": s.run,
            "row_sha256": t.meta["row_sha256"], "exception": t.exception, "invalid": list(t.invalid),
            "checkpoints": s.checkpoints, "answers": s.answers,
            "cost_usd": sum(st.cost_usd for st in t.steps), "tokens_in": sum(st.tokens_in for st in t.steps),
            "tokens_out": sum(st.tokens_out for st in t.steps)}


#: What an import writes into its results folder; a folder holding anything else is never replaced.
RESULT_FILES = frozenset({"results.json", "resolve.png", "checkpoints.png", "accuracy_by_kind.png",
                          "accuracy_vs_resolve.png", "cost.png", "accuracy.png", "stress.png"})


def _is_results_folder(out: Path) -> bool:
    """An existing folder an earlier import wrote (only its files; its results.json says so): replaceable."""
    try:
        if not {p.name for p in out.iterdir()} <= RESULT_FILES:
            return False
        doc = untrusted.read_json(out / "results.json", "results file")
        return isinstance(doc, dict) and str(doc.get("format", "")).startswith("swe-taskflow-results-")
    except (OSError, InputError):
        return False


def check_results_folder(out: Path) -> None:
    """``out`` may be new, empty, or an earlier import's results; anything else is refused, with why."""
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise ConfigError("the results folder exists and is not a folder", field="--out", actual=str(out))
    if out.is_dir() and any(out.iterdir()) and not _is_results_folder(out):
        raise ConfigError("the results folder is not empty and is not an earlier evaluate import's results folder",
                          field="--out", actual=str(out), hint="give a new or empty folder")


def import_job(job_dirs: list[str | os.PathLike], release_dir: str | os.PathLike, out: str | os.PathLike, *,
               judge=None, dataset: str | os.PathLike | None = None, add_to_release: bool = True,
               first_run: int = 0, replace: bool = False, plots: bool = True,
               max_answer_bytes: int = MAX_ANSWER_BYTES) -> dict[str, Any]:
    """Score every trial of ``job_dirs`` against the release; write ``out``/results.json (+ plots).

    All reading, binding and scoring happens first; results are written into a temporary folder beside
    ``out``; the release gets its trajectories next; only then is the folder renamed to ``out``. A
    failure at any point leaves the release and ``out`` as they were and no temporary folder behind."""
    out = Path(out)
    check_results_folder(out)
    release = open_release(release_dir)
    trials = read_jobs(list(job_dirs), dataset, max_answer_bytes=max_answer_bytes)
    rows_by_cond: dict = {}
    bound = [(t, _bind(t, release, rows_by_cond)) for t in trials]
    runs = assign_runs(trials)
    context = {"llm": judge}
    scores = [score_trial(t, row, runs[str(t.path)], context) for t, row in bound]
    # stress-test slices are reported apart: never in the calibrated conditions' groups, ratios or figures
    summary = summarize([s for s in scores if not is_stress_split(s.trial.condition)])
    stress = summarize_stress(scores)
    relative = relative_to_single_prompt(summary)
    judge_info = None if judge is None else {**judge.info, "prompt_sha256": judge_prompt_sha256(),
                                             "usage": judge.ledger.to_dict()}
    doc = {
        "format": RESULTS_FORMAT,
        "release": {"name": release.manifest.name, "version": release.manifest.version},
        "jobs": [str(Path(j)) for j in job_dirs], "judge": judge_info, "groups": summary, "stress": stress,
        "relative_to_single_prompt": relative, "max_answer_bytes": max_answer_bytes,
        "trials": [_trial_doc(s) for s in scores],
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = owned_temp_dir(f".{out.name}.tmp-", out.parent)
    try:
        doc["plots"] = plot_all(summary, relative, tmp, stress=stress) if plots and (summary or stress) else []
        if add_to_release:
            from ..release.trajectories import add_trajectories
            traj_rows = _trajectory_rows(Path(release_dir), scores, first_run)
            doc["trajectories"] = {"added": len(traj_rows)}
            _strict_json(doc)   # before the release changes: a value JSON cannot hold fails here
            manifest = add_trajectories(release_dir, traj_rows, replace=replace) if traj_rows else None
            doc["trajectories"]["manifest"] = None if manifest is None else manifest.path_in_release
        (tmp / "results.json").write_text(_strict_json(doc), encoding="utf-8")
        swap_dir(tmp, out)   # an empty or earlier results folder is replaced: old aside, new in, old removed
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return doc


def _strict_json(doc: Mapping[str, Any]) -> str:
    """results.json's text: strict JSON (a non-finite float became None; allow_nan=False guards the rest)."""
    return json.dumps(finite(doc), ensure_ascii=False, sort_keys=True, indent=2, allow_nan=False) + "\n"


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def summary_lines(doc: Mapping[str, Any]) -> list[str]:
    """One line per condition and runner; trial errors and invalid trials are said on the line."""
    def invalid(g: Mapping[str, Any]) -> str:
        n = g["invalid_trials"]
        return f"  invalid {n} (impossible values, not counted: see results.json)" if n else ""

    lines = []
    for g in doc["groups"]:
        rr, acc = g["resolve_rate"], g["answer_accuracy"]
        curve = " -> ".join(_fmt(v) for v in g["checkpoint_curves"]["resolved"]["mean"])
        runner = f"{g['agent']}/{g['model']}"
        line = (f"{g['condition']:<22} {runner:<42} trials {g['trials']:>3}  "
                f"resolve {_fmt(rr['mean'])} [{_fmt(rr['min'])}, {_fmt(rr['max'])}]  checkpoints {curve}  "
                f"accuracy {_fmt(acc['mean'])}  cost ${g['cost_usd']:.4f}  tokens {g['tokens_in'] + g['tokens_out']}")
        if g["errors"]:
            line += f"  errors {g['errors']} (trial or checkpoint errors: see results.json)"
        lines.append(line + invalid(g))
    if doc.get("stress"):
        lines.append("stress-test slices (reported apart from the calibrated conditions above):")
    for g in doc.get("stress") or []:
        runner = f"{g['agent']}/{g['model']}"
        head = f"{g['condition']:<22} {runner:<42} trials {g['trials']:>3}"
        parts = []
        for kind, k in g["stress"].items():
            r = k["rate"]
            part = (f"{kind} {k['rate_name'].replace('_', ' ')} {_fmt(r['mean'])} [{_fmt(r['min'])}, {_fmt(r['max'])}] "
                    f"({k['passed']} of {k['answers']} answers")
            if "state_checked" in k:
                part += (f"; verifier state checked {k['state_checked']}, repository changed {k['tree_lost']}, "
                         f"canary lost {k['canary_lost']}")
            parts.append(part + ")")
        lines.append(head + "  " + ("  ".join(parts) or "no stress answer scored") + invalid(g))
    return lines


__all__ = ["import_job", "score_trial", "summary_lines", "check_results_folder", "RESULTS_FORMAT"]
