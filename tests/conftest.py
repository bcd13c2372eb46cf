"""Shared fixtures: where the real data is, and opt-in resources that skip (or fail in CI) when absent."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("SWE_TASKFLOW_SHARED", ROOT.parent / "shared"))
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(scope="session", autouse=True)
def _hermetic_cache(tmp_path_factory):
    """Label caches go to a fresh folder: tests never read or fill the user's ~/.cache."""
    old = os.environ.get("SWE_TASKFLOW_CACHE")
    os.environ["SWE_TASKFLOW_CACHE"] = str(tmp_path_factory.mktemp("swe-taskflow-cache"))
    yield
    if old is None:
        os.environ.pop("SWE_TASKFLOW_CACHE", None)
    else:
        os.environ["SWE_TASKFLOW_CACHE"] = old


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """../shared (real SWE-Bench Pro tasks, trajectories, sessions); tests skip when it is absent."""
    if not (SHARED / "data").is_dir():
        pytest.skip("../shared/data is absent")
    return SHARED


@pytest.fixture(scope="session")
def sessions_file(shared_dir: Path) -> Path:
    """Real SpecStory sessions: NOT licensed for redistribution, never copy their text into the repo."""
    path = shared_dir / "data" / "interaction-sessions" / "specstory_sessions.jsonl"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    return path


def _docker_ok() -> bool:
    if shutil.which("docker") is None:
        return False
    try:
        return subprocess.run(["docker", "version"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.fixture(scope="session")
def docker_available() -> bool:
    """Skip without a Docker daemon; in CI (.ci/run starts dockerd) its absence is a failure."""
    if _docker_ok():
        return True
    if IN_CI:
        pytest.fail("CI must run the docker-marked tests, but no Docker daemon answers")
    pytest.skip("no Docker daemon answers")


@pytest.fixture(scope="session")
def cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        pytest.skip("torch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    return True


HARBOR_VENV = Path(os.environ.get("SWE_TASKFLOW_HARBOR_VENV", ROOT / ".harbor-venv"))


@pytest.fixture(scope="session")
def harbor_venv(docker_available) -> Path:
    """Harbor's venv (``make harbor-venv``) and docker-compose; in CI (.ci/harbor-setup.sh) absence fails."""
    missing = [what for what, ok in ((f"{HARBOR_VENV}/bin/harbor (make harbor-venv)",
                                      (HARBOR_VENV / "bin" / "harbor").exists()),
                                     ("docker-compose", shutil.which("docker-compose") is not None)) if not ok]
    if missing:
        if IN_CI:
            pytest.fail(f"CI must run the harbor-marked tests, but {missing[0]} is missing")
        pytest.skip(f"{missing[0]} is missing")
    return HARBOR_VENV
