"""swe_taskflow_harbor.environment:DockerEnvironment on real containers of the example's image.

Through Harbor's environment API (run in Harbor's venv by tests/support/harbor_env_probe.py): the container
has no network and no new privileges, carries the project's owner label, runs commands as the user Harbor
asks for, uploads and downloads trees (never recreating a link on the host), times out, and is gone
quickly at stop. Then a ``harbor run`` killed with ``kill -9`` leaves its container behind, and the
project's sweep (swe_taskflow.hygiene) removes it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from swe_taskflow import hygiene

pytestmark = [pytest.mark.harbor, pytest.mark.docker]
ROOT = Path(__file__).resolve().parents[2]
ENV_CLASS = "swe_taskflow_harbor.environment:DockerEnvironment"


@pytest.fixture(scope="module")
def image(example_image):
    return example_image


def _env() -> dict:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HARBOR_TELEMETRY": "0"}


def _networks() -> list[str]:
    return sorted(subprocess.run(["docker", "network", "ls", "-q", "--no-trunc"], capture_output=True, text=True,
                                 check=True).stdout.split())


def test_environment_api_on_a_real_container(harbor_venv, image, tmp_path):
    before = _networks()
    proc = subprocess.run([str(harbor_venv / "bin" / "python"), str(ROOT / "tests/support/harbor_env_probe.py"), image,
                           str(tmp_path / "work")], capture_output=True, text=True, env=_env(), timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert _networks() == before                                   # no network was created
    assert out["public_refused"]                                   # only no-network tasks run
    assert out["mounts_refused"]                                   # no host folder is bound in, none dropped silently
    c = out["container"]
    assert c["network_mode"] == "none" and c["security_opt"] == ["no-new-privileges"]
    owner = c["labels"][hygiene.OWNER_LABEL]                       # the project's one owner format
    assert owner.startswith(f"{out['pid']}.") and hygiene._OWNER_RE.fullmatch(owner)
    assert hygiene.owner_dead(owner)                               # the probe has exited: the sweep may take it
    assert out["log_dirs"].split("\n")[:3] == ["777 root"] * 3     # Harbor's log folders, writable by the agent
    agent = out["agent_exec"]
    assert (agent["stderr"], agent["code"]) == (None, 3)                  # stderr comes back within stdout
    lines = agent["stdout"].splitlines()                                  # (the two pipes' order is not kept
    assert sorted(lines) == sorted(["agent", "/app", "hi", "to-stderr"])  # by Docker, with or without compose)
    assert [x for x in lines if x != "to-stderr"] == ["agent", "/app", "hi"]
    assert out["root_exec"] == "0\n"
    rows = [line.split(":")[0].strip() for line in out["interfaces"].splitlines() if ":" in line and "|" not in line]
    assert rows == ["lo"]                                          # network none: loopback only
    assert out["uploaded"].splitlines() == [".", "./data.txt", "./deep", "./deep/run.sh", "./deep/sub",
                                            "./deep/sub/data.txt", "./renamed.txt", "755 root", "ran"]
    assert out["downloaded"] == ["a.txt", "sub", "sub/b.txt"]      # no link, no fifo recreated on the host
    assert out["one_file"] == "nested\n" and "does not exist" in out["absent"]
    assert out["kinds"] == [True, False, True, False, False]
    assert out["timeout"] == "Command timed out after 1 seconds" and out["timeout_s"] < 10
    assert out["attached_after_timeout"] == 0 and out["after_timeout"] == "still-usable\n"
    assert out["stop_s"] < 5                                       # SIGKILL + remove: no 10 s stop timeout
    gone = subprocess.run(["docker", "inspect", c["id"]], capture_output=True)
    assert gone.returncode != 0


def _owned_containers(pid: int) -> list[dict]:
    out = subprocess.run(["docker", "ps", "-a", "--filter", f"label={hygiene.OWNER_LABEL}", "--format",
                          "{{json .}}"], capture_output=True, text=True, check=True).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    found = []
    for row in rows:
        labels = dict(kv.split("=", 1) for kv in row["Labels"].split(",") if "=" in kv)
        if labels.get(hygiene.OWNER_LABEL, "").startswith(f"{pid}."):
            found.append({"id": row["ID"], "owner": labels[hygiene.OWNER_LABEL]})
    return found


@pytest.mark.slow
def test_kill_9_of_a_harbor_run_leaves_containers_that_the_sweep_removes(harbor_venv, image, tmp_path):
    import docker

    from builder.evaluation.export import export_harbor
    from tests.support.example_release import CONDITION, build_example_release
    export_harbor(build_example_release(tmp_path / "release"), CONDITION, tmp_path / "dataset")
    (tmp_path / "jobs").mkdir()
    proc = subprocess.Popen([str(harbor_venv / "bin" / "harbor"), "run", "-p", str(tmp_path / "dataset"), "-a",
                             "oracle", "-e", ENV_CLASS, "-o", str(tmp_path / "jobs"), "--job-name", "killed", "-n", "1",
                             "-y"], cwd=tmp_path, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 240
        while not (found := _owned_containers(proc.pid)) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert found, "harbor run started no container labelled with its own pid"
    finally:
        os.kill(proc.pid, signal.SIGKILL)   # no cleanup runs
        proc.wait()
    assert _owned_containers(proc.pid) == found                    # left behind by the killed run
    assert hygiene.owner_dead(found[0]["owner"])
    removed = hygiene.sweep_containers(docker.from_env())
    assert found[0]["id"][:12] in removed
    assert _owned_containers(proc.pid) == []


MISSING_IMAGE_PROBE = """
import asyncio, sys
from pathlib import Path
from harbor.models.task.config import EnvironmentConfig, NetworkMode, NetworkPolicy
from harbor.models.trial.paths import TrialPaths
from swe_taskflow_harbor.environment import DockerEnvironment

async def main(work):
    (work / "environment").mkdir(parents=True)
    paths = TrialPaths(work / "trial")
    paths.mkdir()
    env = DockerEnvironment(environment_dir=work / "environment", environment_name="probe", session_id="probe__x",
                            trial_paths=paths, task_env_config=EnvironmentConfig(
                                docker_image="swe-taskflow/never-built:0", network_mode="no-network"),
                            network_policy=NetworkPolicy(network_mode=NetworkMode.NO_NETWORK))
    try:
        await env.start(force_build=False)
    except RuntimeError as exc:
        print("start:", exc)
    await env.download_dir("/logs/agent", work / "got")    # what Harbor does next for the agent's logs
    print("downloaded:", sorted(p.name for p in (work / "got").glob("*")) if (work / "got").exists() else "nothing")

asyncio.run(main(Path(sys.argv[1])))
"""


def test_a_missing_image_is_one_error_and_no_log_download_error(harbor_venv, tmp_path):
    """A task image that is not there (SWE-Bench Pro's, not pulled) fails the trial's start with one line naming it;
    Harbor's log download that follows finds nothing to fetch instead of raising a second error, which Harbor
    prints with a traceback (16 of them for the README's first Harbor block on a machine without Pro images)."""
    proc = subprocess.run([str(harbor_venv / "bin" / "python"), "-c", MISSING_IMAGE_PROBE, str(tmp_path)],
                          env=_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "start: image 'swe-taskflow/never-built:0' is not available locally" in proc.stdout
    assert "downloaded: nothing" in proc.stdout
