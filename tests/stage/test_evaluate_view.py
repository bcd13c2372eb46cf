"""Imported trajectories open in `harbor view`: `evaluate view-jobs` writes a Harbor jobs folder whose
trajectories are the imported ATIF steps exactly; Harbor's own models and its viewer app (in process, no
server) read it. Job folders are hand-written (tests/support/harbor_jobs.py)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from builder.cli import main as cli_main
from builder.evaluation.export import export_harbor
from tests.support.harbor_fixture import build_fixture_release
from tests.support.harbor_jobs import write_trial

ROOT = Path(__file__).resolve().parents[2]
CHECK = """
import json, sys
from pathlib import Path
from fastapi.testclient import TestClient
from harbor.models.trajectories import Trajectory
from harbor.viewer.server import create_app
client = TestClient(create_app(Path(sys.argv[1])))
out = {}
for job in client.get("/api/jobs").json()["items"]:
    for trial in client.get(f"/api/jobs/{job['name']}/trials").json()["items"]:
        detail = client.get(f"/api/jobs/{job['name']}/trials/{trial['name']}")
        assert detail.status_code == 200, detail.text
        traj = client.get(f"/api/jobs/{job['name']}/trials/{trial['name']}/trajectory").json()
        Trajectory.model_validate(traj)
        out[f"{job['name']}/{trial['name']}"] = {"steps": traj["steps"],
                                                 "reward": detail.json()["verifier_result"]["rewards"]}
print(json.dumps(out))
"""
COUNTS = """
import json, sys
from datetime import datetime, timezone
from pathlib import Path
from fastapi.testclient import TestClient
from harbor.metrics.mean import Mean
from harbor.models.job.config import JobConfig
from harbor.models.job.result import JobResult, JobStats
from harbor.models.trial.result import TrialResult
from harbor.viewer.server import create_app
root = Path(sys.argv[1])
client = TestClient(create_app(root))
out = {"list": client.get("/api/jobs").json()["items"], "jobs": {}}
for job in sorted(p for p in root.iterdir() if p.is_dir()):
    result = JobResult.model_validate_json((job / "result.json").read_text())
    config = JobConfig.model_validate_json((job / "config.json").read_text())
    trials = [TrialResult.model_validate_json((t / "result.json").read_text())
              for t in sorted(job.iterdir()) if t.is_dir()]
    ref = JobStats.from_trial_results(trials, n_total_trials=len(trials))      # as Harbor counts them
    for key, ev in ref.evals.items():
        ev.metrics = [Mean().compute([(t.verifier_result.rewards if t.verifier_result else None) for t in trials])]
    out["jobs"][job.name] = {
        "ours": json.loads(result.stats.model_dump_json()), "harbor": json.loads(ref.model_dump_json()),
        "n_total": result.n_total_trials, "agents": [(a.name, a.model_name) for a in config.agents],
        "started": [t.started_at.isoformat() for t in trials], "finished": [t.finished_at.isoformat() for t in trials],
        "job_started": result.started_at.isoformat(),
        "detail": client.get(f"/api/jobs/{job.name}").json()["stats"],
        "trial_list": client.get(f"/api/jobs/{job.name}/trials").json()["items"]}
print(json.dumps(out, default=str))
"""


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("eval-view")
    rel, _ = build_fixture_release(tmp)
    export_harbor(rel, "qa_last", tmp / "ds")
    job = tmp / "jobs" / "j"
    for k in range(2):
        write_trial(job, tmp / "ds" / f"fixture__harbor-{k}", f"fixture__harbor-{k}__t", resolved=float(k))
    assert cli_main(["evaluate", "import", str(job), "--release", str(rel), "--out", str(tmp / "r")]) == 0
    assert cli_main(["evaluate", "view-jobs", str(rel), "--out", str(tmp / "view")]) == 0
    return tmp, job


def _originals(job: Path) -> dict[str, list]:
    return {t.name.split("__t")[0]: json.loads(next(t.rglob("trajectory.json")).read_text())["steps"]
            for t in job.iterdir()}


def test_view_folder_holds_the_imported_steps_exactly(imported):
    tmp, job = imported
    trials = sorted((tmp / "view").glob("*/*/agent/trajectory.json"))
    assert len(trials) == 2
    orig = _originals(job)
    for t in trials:
        doc = json.loads(t.read_text())
        iid = doc["extra"]["swe_taskflow"]["instance_id"]
        assert doc["steps"] == orig[iid]
        assert doc["agent"]["name"] == "swe-taskflow-mini-swe-agent" and doc["agent"]["model_name"] == "m"


def test_view_folder_needs_an_empty_out(imported, capsys):
    tmp, _ = imported
    assert cli_main(["evaluate", "view-jobs", str(tmp / "release"), "--out", str(tmp / "view")]) == 2
    assert "not empty" in capsys.readouterr().err


@pytest.mark.harbor
def test_harbor_viewer_reads_the_folder(imported, harbor_venv):
    tmp, job = imported
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HARBOR_TELEMETRY": "0"}
    proc = subprocess.run([str(harbor_venv / "bin" / "python"), "-c", CHECK, str(tmp / "view")], capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    orig = _originals(job)
    assert len(seen) == 2
    for name, got in seen.items():
        iid = name.split("/")[1].split("__run")[0]
        assert got["steps"] == orig[iid]
        assert got["reward"] == {"resolved": float(iid.endswith("1"))}


@pytest.mark.harbor
def test_harbor_counts_the_jobs_trials_and_times(imported, harbor_venv):
    """What the viewer shows: "Trials 2/2" (not 0/0), every trial completed (not pending), real start times."""
    tmp, _ = imported
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HARBOR_TELEMETRY": "0"}
    proc = subprocess.run([str(harbor_venv / "bin" / "python"), "-c", COUNTS, str(tmp / "view")], capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert [(j["n_total_trials"], j["n_completed_trials"]) for j in seen["list"]] == [(2, 2)]
    (job,) = seen["jobs"].values()
    assert job["ours"] == job["harbor"]                                 # the stats Harbor itself computes
    assert job["n_total"] == 2 and job["detail"]["n_completed_trials"] == 2 and job["detail"]["n_pending_trials"] == 0
    assert job["agents"] == [["swe-taskflow-mini-swe-agent", "m"]]
    assert job["ours"]["evals"] and next(iter(job["ours"]["evals"].values()))["metrics"] == [{"mean": 0.5}]
    for t in job["started"] + job["finished"] + [job["job_started"]]:
        assert not t.startswith("1970") and t >= "2026"
    assert len(job["trial_list"]) == 2
    assert all(t["finished_at"] and not t["started_at"].startswith("1970") for t in job["trial_list"])


def test_trial_times_are_the_trajectorys_own():
    from datetime import datetime, timezone
    from builder.evaluation.view import step_times
    steps = [{"source": "user"}, {"source": "agent", "timestamp": "2026-03-01T10:00:05+00:00"},
             {"source": "agent", "timestamp": "2026-03-01T10:02:00Z"}, {"source": "agent", "timestamp": "bad"}]
    assert step_times(steps) == (datetime(2026, 3, 1, 10, 0, 5, tzinfo=timezone.utc),
                                 datetime(2026, 3, 1, 10, 2, tzinfo=timezone.utc))
    assert step_times([{"source": "user"}]) is None
