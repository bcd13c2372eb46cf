"""A release's imported trajectories as a Harbor jobs folder, so ``harbor view --jobs DIR`` opens them.

Harbor's viewer lists ``DIR/<job>/<trial>/`` (a trial needs ``result.json``, read as Harbor's
``TrialResult``) and shows ``<trial>/agent/trajectory.json`` as ATIF. A trajectory row keeps the ATIF
steps exactly (``builder.release.messages.source_messages`` rebuilds them from the typed records); the
trajectory's header is rebuilt from the row: agent and model from what ran (``<agent>/<model>#<settings>``),
token and cost totals, and the row's checkpoints and judged answers under ``extra``. One job per
condition; one trial per trajectory row, named ``<instance>__run<k>__<settings>``; the trial's reward
is its last checkpoint's ``resolved``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any, Mapping

from swe_taskflow.errors import ConfigError
from swe_taskflow.owned import owned_temp_dir, swap_dir

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_EPOCH = "1970-01-01T00:00:00Z"     # rows carry no times; a fixed one keeps the folder byte-identical


def _safe(text: str) -> str:
    return _UNSAFE.sub("-", text).strip("-.")[:120] or "x"


def _split_label(label: str) -> tuple[str, str, str]:
    runner, _, settings = label.partition("#")
    agent, _, model = runner.partition("/")
    return agent or runner, model or runner, settings


def atif_of(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row's trajectory as an ATIF document Harbor's ``Trajectory`` model accepts."""
    from builder.release.messages import source_messages
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


def trial_result(row: Mapping[str, Any], trial: str, task_path: str) -> dict[str, Any]:
    """A ``TrialResult`` document for one trajectory row (what the viewer's trial list reads)."""
    agent, model, _ = _split_label(str(row["model"]))
    cps = list(row.get("checkpoints") or [])
    rewards = {"resolved": 1.0 if cps and cps[-1]["resolved"] else 0.0} if cps else {}
    return {"task_name": row["instance_id"], "trial_name": trial, "trial_uri": f"file://{task_path}/{trial}",
            "task_id": {"path": task_path}, "task_checksum": str(row["row_sha256"]),
            "config": {"task": {"path": task_path}, "trial_name": trial,
                       "agent": {"name": agent, "model_name": model}},
            "agent_info": {"name": agent, "version": "unknown", "model_info": {"name": model}},
            "agent_result": {"n_input_tokens": int(row["tokens_in"]), "n_output_tokens": int(row["tokens_out"]),
                             "cost_usd": float(row["cost_usd"])},
            "verifier_result": {"rewards": rewards} if rewards else None,
            "started_at": _EPOCH, "finished_at": _EPOCH}


def write_view(release_dir: str | os.PathLike, out: str | os.PathLike) -> list[str]:
    """Write every trajectory row of the release under ``out`` (new or empty); returns the trial paths."""
    from builder.release.writer import read_release
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError("the output folder exists and is not empty", field="--out", actual=str(out))
    _, _, rows = read_release(release_dir)
    if not rows:
        raise ConfigError("the release holds no trajectories (evaluate import adds them)", actual=str(release_dir))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = owned_temp_dir(f".{out.name}.tmp-", out.parent)
    written = []
    try:
        for row in sorted(rows, key=lambda r: (r["condition"], r["instance_id"], r["model"], int(r["run"]))):
            agent, model, settings = _split_label(str(row["model"]))
            job = _safe(f"{row['condition']}__{agent}__{model}")
            trial = _safe(f"{row['instance_id']}__run{row['run']}__{settings or 'x'}")
            tdir = tmp / job / trial
            (tdir / "agent").mkdir(parents=True)
            (tdir / "agent" / "trajectory.json").write_text(json.dumps(atif_of(row), indent=2, ensure_ascii=False,
                                                                       allow_nan=False), encoding="utf-8")
            (tdir / "result.json").write_text(json.dumps(trial_result(row, trial, f"/{row['condition']}/"
                                                                                  f"{row['instance_id']}"),
                                                         indent=2, allow_nan=False), encoding="utf-8")
            written.append(f"{job}/{trial}")
        swap_dir(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return written


__all__ = ["write_view", "atif_of", "trial_result"]
