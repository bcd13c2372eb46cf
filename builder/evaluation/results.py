"""Read a Harbor job folder back: every trial, bound to the release row it ran on.

Harbor writes ``<job>/<trial>/result.json`` (``step_results[]`` with each step's verifier rewards and
agent usage) and per step ``steps/<step>/verifier/`` (our checkpoint's ``checkpoint.json`` and
``agent.patch``, or the answer step's ``answer.md``) and ``steps/<step>/agent/`` (trajectories). The
task a trial ran is found through its recorded path (or ``--dataset``), and its ``task.toml`` metadata
names the release row: release, condition, split hash, row hash.
"""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swe_taskflow.errors import InputError

ISSUE = "issue"


@dataclass
class StepRecord:
    step: str
    turn_index: int
    kind: str
    rewards: dict[str, float] = field(default_factory=dict)
    question_id: str | None = None
    answer: str | None = None                   # answer turns: the copied answer, None when none was written
    checkpoint: dict[str, Any] | None = None    # issue turns: per-test statuses, patch hash
    exception: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    api_calls: int = 0


@dataclass
class TrialRecord:
    trial: str
    path: Path
    meta: dict[str, Any]                        # task.toml [metadata.swe_taskflow]
    agent: str
    model: str
    steps: list[StepRecord]
    exception: str | None
    trajectory: Path | None                     # the last step's cumulative ATIF trajectory
    started_at: str = ""

    @property
    def instance_id(self) -> str:
        return self.meta["instance_id"]

    @property
    def condition(self) -> str:
        return self.meta["condition"]


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"unreadable JSON ({exc})", path=str(path)) from None


def _task_meta(result: dict, trial_dir: Path, dataset: Path | None) -> dict[str, Any]:
    recorded = Path(str((result.get("config") or {}).get("task", {}).get("path") or ""))
    candidates = [recorded] if str(recorded) not in ("", ".") else []
    if dataset is not None:
        candidates.insert(0, dataset / recorded.name)
    for cand in candidates:
        if (cand / "task.toml").is_file():
            meta = tomllib.loads((cand / "task.toml").read_text(encoding="utf-8")).get("metadata", {})
            st = meta.get("swe_taskflow")
            if not st:
                raise InputError("task was not exported by swe-taskflow (no [metadata.swe_taskflow])",
                                 path=str(cand / "task.toml"))
            return st
    raise InputError("cannot find the task this trial ran (pass --dataset DIR, the exported dataset)",
                     path=str(trial_dir / "result.json"), field="config.task.path", actual=str(recorded))


def _exception(info: Any) -> str | None:
    if not info:
        return None
    return f"{info.get('exception_type', 'Exception')}: {str(info.get('exception_message', ''))[:300]}"


def read_trial(trial_dir: Path, dataset: Path | None = None) -> TrialRecord:
    result = _json(trial_dir / "result.json")
    meta = _task_meta(result, trial_dir, dataset)
    by_name = {s["step"]: s for s in meta.get("steps", [])}
    agent_info = result.get("agent_info") or {}
    model = ((agent_info.get("model_info") or {}).get("name") or (result.get("config") or {}).get("agent", {})
             .get("model_name") or agent_info.get("name") or "unknown")
    steps, trajectory = [], None
    for n, sr in enumerate(result.get("step_results") or []):
        name = sr["step_name"]
        if name not in by_name:
            raise InputError("trial ran a step its task does not declare", path=str(trial_dir / "result.json"),
                             field=f"step_results[{n}].step_name", actual=name)
        m = by_name[name]
        vdir, adir = trial_dir / "steps" / name / "verifier", trial_dir / "steps" / name / "agent"
        rewards = {k: float(v) for k, v in ((sr.get("verifier_result") or {}).get("rewards") or {}).items()}
        ar = sr.get("agent_result") or {}
        rec = StepRecord(step=name, turn_index=int(m["turn_index"]), kind=m["kind"], rewards=rewards,
                         question_id=m.get("question_id"), exception=_exception(sr.get("exception_info")),
                         tokens_in=int(ar.get("n_input_tokens") or 0), tokens_out=int(ar.get("n_output_tokens") or 0),
                         cost_usd=float(ar.get("cost_usd") or 0.0),
                         api_calls=int((ar.get("metadata") or {}).get("api_calls") or 0))
        if m["kind"] == ISSUE:
            if (vdir / "checkpoint.json").is_file():
                rec.checkpoint = _json(vdir / "checkpoint.json")
        elif (vdir / "answer.md").is_file():
            rec.answer = (vdir / "answer.md").read_text(encoding="utf-8", errors="replace")
        if (adir / "trajectory.json").is_file():
            trajectory = adir / "trajectory.json"
        steps.append(rec)
    return TrialRecord(trial=trial_dir.name, path=trial_dir, meta=meta, agent=str(agent_info.get("name") or ""),
                       model=str(model), steps=steps, exception=_exception(result.get("exception_info")),
                       trajectory=trajectory, started_at=str(result.get("started_at") or ""))


def read_jobs(job_dirs: list[str | os.PathLike], dataset: str | os.PathLike | None = None) -> list[TrialRecord]:
    """Every trial of the job folders, in (job, trial name) order; a folder with no trial is an error."""
    out: list[TrialRecord] = []
    for job in map(Path, job_dirs):
        if not job.is_dir():
            raise InputError("job folder not found", path=str(job))
        trials = sorted(p for p in job.iterdir() if p.is_dir() and (p / "result.json").is_file())
        if not trials:
            raise InputError("no trial in this job folder (no <trial>/result.json)", path=str(job))
        out += [read_trial(t, Path(dataset) if dataset else None) for t in trials]
    return out


__all__ = ["StepRecord", "TrialRecord", "read_trial", "read_jobs", "ISSUE"]
