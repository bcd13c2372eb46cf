"""Harbor job folders written by hand (hand-written, shaped like Harbor 0.25's), for evaluate import tests.

A trial is ``<job>/<trial>/result.json`` (``config.task.path`` names the exported task, ``config.agent``
what ran, ``step_results[]`` each step's rewards and usage) with ``steps/<step>/verifier/`` (the
checkpoint's ``checkpoint.json``, or an answer step's ``answer.md``) and the last step's
``agent/trajectory.json`` (ATIF). Values are chosen by the caller so tests can make them hostile.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any


def task_steps(task_dir: Path) -> list[dict[str, Any]]:
    return tomllib.loads((task_dir / "task.toml").read_text(encoding="utf-8"))["metadata"]["swe_taskflow"]["steps"]


def atif(instance_id: str | None = None, n_turns: int = 1) -> dict[str, Any]:
    steps = []
    for k in range(n_turns):
        steps.append({"step_id": len(steps) + 1, "source": "user", "message": f"[hand-written] turn {k}"})
        steps.append({"step_id": len(steps) + 1, "source": "agent", "message": "[hand-written] done",
                      "model_name": "m", "metrics": {"prompt_tokens": 10, "completion_tokens": 2, "cost_usd": 0.01}})
    doc = {"schema_version": "ATIF-v1.6", "session_id": "s", "agent": {"name": "a", "version": "1", "model_name": "m"},
           "steps": steps, "final_metrics": {"total_prompt_tokens": 10 * n_turns,
                                             "total_completion_tokens": 2 * n_turns, "total_cost_usd": 0.01 * n_turns}}
    if instance_id is not None:
        doc["extra"] = {"instance_id": instance_id}
    return doc


def write_trial(job: Path, task_dir: Path, trial: str, *, agent: str = "swe-taskflow-mini-swe-agent",
                model: str = "m", kwargs: dict | None = None, resolved: float = 1.0, answer: str | None = "an answer",
                started: str = "2026-01-01T00:00:00Z", trajectory: bool = True, tokens: int = 10,
                cost: float = 0.01) -> Path:
    """One trial of ``task_dir``: every issue checkpoint reports ``resolved`` (the clean one 0), answers ``answer``."""
    tdir = job / trial
    steps = task_steps(task_dir)
    results = []
    for n, s in enumerate(steps):
        vdir = tdir / "steps" / s["step"] / "verifier"
        vdir.mkdir(parents=True, exist_ok=True)
        if s["kind"] == "issue":
            rewards = {"resolved": resolved, "reward": resolved, "f2p_pass_rate": resolved, "p2p_pass_rate": 1.0,
                       "tests_passed": 3.0, "tests_failed": 0.0}
            if n == 0 or not any(x["kind"] == "issue" for x in steps[:n]):
                rewards.update(clean_resolved=0.0, clean_f2p_pass_rate=0.0, clean_p2p_pass_rate=1.0,
                               clean_tests_passed=1.0, clean_tests_failed=2.0)
            (vdir / "checkpoint.json").write_text(json.dumps({"patch_sha256": "0" * 64, "tests": {}}))
        else:
            rewards = {"answered": 1.0 if answer is not None else 0.0}
            if answer is not None:
                (vdir / "answer.md").write_text(answer, encoding="utf-8")
        results.append({"step_name": s["step"], "verifier_result": {"rewards": rewards}, "exception_info": None,
                        "agent_result": {"n_input_tokens": tokens, "n_output_tokens": 1, "cost_usd": cost,
                                         "metadata": {"api_calls": 1}}})
    if trajectory and steps:
        adir = tdir / "steps" / steps[-1]["step"] / "agent"
        adir.mkdir(parents=True, exist_ok=True)
        (adir / "trajectory.json").write_text(json.dumps(atif(None, len(steps))))
    agent_cfg = {"name": agent, "import_path": None, "model_name": model, "kwargs": dict(kwargs or {})}
    doc = {"task_name": trial.split("__")[0], "trial_name": trial, "started_at": started,
           "config": {"task": {"path": str(task_dir)}, "agent": agent_cfg, "trial_name": trial},
           "agent_info": {"name": agent, "version": "1", "model_info": {"name": model, "provider": None}},
           "exception_info": None, "step_results": results}
    (tdir / "result.json").write_text(json.dumps(doc, indent=1))
    return tdir


def edit_result(trial: Path, fn) -> None:
    """Apply ``fn(doc)`` to the trial's result.json (``fn`` may return a replacement document)."""
    path = trial / "result.json"
    doc = json.loads(path.read_text())
    new = fn(doc)
    path.write_text(json.dumps(doc if new is None else new))
