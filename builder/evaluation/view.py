"""A release's imported trajectories as a Harbor jobs folder, so ``harbor view --jobs DIR`` opens them.

Harbor's viewer lists ``DIR/<job>/<trial>/`` (a trial needs ``result.json``, read as Harbor's
``TrialResult``) and shows ``<trial>/agent/trajectory.json`` as ATIF. A trajectory row keeps the ATIF
steps exactly (``builder.release.messages.source_messages`` rebuilds them from the typed records); the
trajectory's header is rebuilt from the row: agent and model from what ran (``<agent>/<model>#<settings>``),
token and cost totals, and the row's checkpoints and judged answers under ``extra``. One job per
condition; one trial per trajectory row, named ``<instance>__run<k>__<settings>``; the trial's reward
is its last checkpoint's ``resolved``.

What the viewer counts is written as Harbor writes it (issue 36: the job list said "Trials 0/0", the job
page "0/1 completed", the trial page "Started 1/1/1970"): each job has ``result.json`` (Harbor's
``JobResult``: trial count, completed trials, reward stats and their mean, tokens, cost) and
``config.json`` (``JobConfig``: the agent and model); a trial's ``started_at``/``finished_at`` are its
trajectory's first and last step times, or, for a trajectory that records none, the time the folder was
written (a trial without ``finished_at`` counts as unfinished). ``tests/stage/test_evaluate_view.py``
loads the folder with Harbor's own models and recomputes the job's stats with Harbor's ``JobStats``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

from swe_taskflow.errors import ConfigError
from swe_taskflow.owned import owned_temp_dir, swap_dir

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_VIEW_NS = uuid.UUID("5b0c3f5e-36a4-4d0e-9c1e-7a1f0e36b0a4")   # job ids: uuid5 of the job's name and rows


def _safe(text: str) -> str:
    return _UNSAFE.sub("-", text).strip("-.")[:120] or "x"


def _split_label(label: str) -> tuple[str, str, str]:
    runner, _, settings = label.partition("#")
    agent, _, model = runner.partition("/")
    return agent or runner, model or runner, settings


def atif_of(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row's trajectory as an ATIF document Harbor's ``Trajectory`` model accepts."""
    from ..release.messages import source_messages
    fmt = str(row["trajectory_format"])
    if not fmt.startswith("ATIF"):
        raise ConfigError("only ATIF trajectories open in harbor view", field="trajectory_format", actual=fmt,
                          hint=f"{row['condition']}/{row['instance_id']}")
    agent, model, settings = _split_label(str(row["model"]))
    steps = source_messages(fmt, row["messages"])
    return {"schema_version": fmt, "session_id": f"{row['condition']}/{row['instance_id']}/run{row['run']}",
            "agent": {"name": agent, "version": "unknown", "model_name": model},
            "steps": steps,
            "final_metrics": {"total_prompt_tokens": int(row["tokens_in"]),
                              "total_completion_tokens": int(row["tokens_out"]),
                              "total_cost_usd": float(row["cost_usd"]), "total_steps": len(steps)},
            "extra": {"swe_taskflow": {"condition": row["condition"], "instance_id": row["instance_id"],
                                       "run": int(row["run"]), "settings_sha256_prefix": settings,
                                       "row_sha256": row["row_sha256"], "split_sha256": row["split_sha256"],
                                       "checkpoints": list(row.get("checkpoints") or []),
                                       "qa_answers": [{k: a[k] for k in ("question_id", "verdict", "judge")}
                                                      for a in row.get("qa_answers") or []]}}}


def _iso(t: datetime) -> str:
    return t.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def step_times(steps: list[Mapping[str, Any]]) -> tuple[datetime, datetime] | None:
    """The first and last step timestamps of an ATIF trajectory (None when it records none)."""
    times = []
    for st in steps:
        raw = st.get("timestamp")
        if isinstance(raw, str) and raw:
            try:
                t = datetime.fromisoformat(raw.replace("Z", "+00:00"))
            except ValueError:
                continue
            times.append(t if t.tzinfo else t.replace(tzinfo=timezone.utc))
    return (min(times), max(times)) if times else None


def trial_result(row: Mapping[str, Any], trial: str, task_path: str, *,
                 times: tuple[datetime, datetime]) -> dict[str, Any]:
    """A ``TrialResult`` document for one trajectory row (what the viewer's trial list reads)."""
    agent, model, _ = _split_label(str(row["model"]))
    cps = list(row.get("checkpoints") or [])
    rewards = {"resolved": 1.0 if cps and cps[-1]["resolved"] else 0.0} if cps else {}
    return {"id": str(uuid.uuid5(_VIEW_NS, f"{row['row_sha256']}/{trial}")),
            "task_name": row["instance_id"], "trial_name": trial, "trial_uri": f"file://{task_path}/{trial}",
            "task_id": {"path": task_path}, "source": str(row["condition"]), "task_checksum": str(row["row_sha256"]),
            "config": {"task": {"path": task_path}, "trial_name": trial,
                       "agent": {"name": agent, "model_name": model}},
            "agent_info": {"name": agent, "version": "unknown", "model_info": {"name": model}},
            "agent_result": {"n_input_tokens": int(row["tokens_in"]), "n_output_tokens": int(row["tokens_out"]),
                             "cost_usd": float(row["cost_usd"])},
            "verifier_result": {"rewards": rewards} if rewards else None,
            "started_at": _iso(times[0]), "finished_at": _iso(times[1])}


def job_config(job: str, trials: list[Mapping[str, Any]]) -> dict[str, Any]:
    """A ``JobConfig`` document: the job's name and the agents/models its trials ran (the job list's columns)."""
    agents = sorted({(t["agent_info"]["name"], t["agent_info"]["model_info"]["name"]) for t in trials})
    return {"job_name": job, "jobs_dir": ".", "agents": [{"name": a, "model_name": m} for a, m in agents]}


def job_result(job: str, trials: list[Mapping[str, Any]]) -> dict[str, Any]:
    """A ``JobResult`` document as Harbor's ``JobStats.increment`` and ``Mean`` metric would write it."""
    evals: dict[str, dict[str, Any]] = {}
    for t in trials:
        key = f"{t['agent_info']['name']}__{t['agent_info']['model_info']['name']}__{t['source']}"
        ev = evals.setdefault(key, {"n_trials": 0, "n_errors": 0, "metrics": [], "reward_stats": {},
                                    "exception_stats": {}, "_rewards": []})
        rewards = (t.get("verifier_result") or {}).get("rewards")
        ev["_rewards"].append(rewards)
        if rewards is not None:
            ev["n_trials"] += 1
            for name, value in rewards.items():
                ev["reward_stats"].setdefault(name, {}).setdefault(str(value), []).append(t["trial_name"])
    for ev in evals.values():
        values = [next(iter(r.values())) if r else 0.0 for r in ev.pop("_rewards")]
        ev["metrics"] = [{"mean": sum(values) / len(values)}] if values else []
    started = min(t["started_at"] for t in trials)
    finished = max(t["finished_at"] for t in trials)
    name_key = job + "\n" + "\n".join(sorted(t["task_checksum"] + t["trial_name"] for t in trials))
    return {"id": str(uuid.uuid5(_VIEW_NS, name_key)), "started_at": started, "updated_at": finished,
            "finished_at": finished, "n_total_trials": len(trials),
            "stats": {"n_completed_trials": len(trials), "n_errored_trials": 0, "n_running_trials": 0,
                      "n_pending_trials": 0, "n_cancelled_trials": 0, "n_retries": 0, "evals": evals,
                      "n_input_tokens": sum(t["agent_result"]["n_input_tokens"] for t in trials),
                      "n_cache_tokens": None,
                      "n_output_tokens": sum(t["agent_result"]["n_output_tokens"] for t in trials),
                      "cost_usd": sum(t["agent_result"]["cost_usd"] for t in trials)},
            "trial_results": []}


def write_view(release_dir: str | os.PathLike, out: str | os.PathLike) -> list[str]:
    """Write every trajectory row of the release under ``out`` (new or empty); returns the trial paths."""
    from ..release.writer import read_release
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError("the output folder exists and is not empty", field="--out", actual=str(out))
    _, _, rows = read_release(release_dir)
    if not rows:
        raise ConfigError("the release holds no trajectories (evaluate import adds them)", actual=str(release_dir))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = owned_temp_dir(f".{out.name}.tmp-", out.parent)
    written = []
    now = datetime.now(timezone.utc).replace(microsecond=0)
    jobs: dict[str, list[dict[str, Any]]] = {}
    try:
        for row in sorted(rows, key=lambda r: (r["condition"], r["instance_id"], r["model"], int(r["run"]))):
            agent, model, settings = _split_label(str(row["model"]))
            job = _safe(f"{row['condition']}__{agent}__{model}")
            trial = _safe(f"{row['instance_id']}__run{row['run']}__{settings or 'x'}")
            tdir = tmp / job / trial
            (tdir / "agent").mkdir(parents=True)
            doc = atif_of(row)
            (tdir / "agent" / "trajectory.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False,
                                                                       allow_nan=False), encoding="utf-8")
            result = trial_result(row, trial, f"/{row['condition']}/{row['instance_id']}",
                                  times=step_times(doc["steps"]) or (now, now))
            (tdir / "result.json").write_text(json.dumps(result, indent=2, allow_nan=False), encoding="utf-8")
            jobs.setdefault(job, []).append(result)
            written.append(f"{job}/{trial}")
        for job, trials in jobs.items():
            for name, doc in (("result.json", job_result(job, trials)), ("config.json", job_config(job, trials))):
                (tmp / job / name).write_text(json.dumps(doc, indent=2, allow_nan=False), encoding="utf-8")
        swap_dir(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return written


__all__ = ["write_view", "atif_of", "trial_result", "job_result", "job_config", "step_times"]
