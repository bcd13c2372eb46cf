"""Shared fixtures: committed test data, ../shared, and opt-in resources that skip (or fail in CI) when absent.

Levels: each test lives in the folder of its level (``unit``: functions in process; ``stage``: one stage or
command on files in a temporary folder; ``container``: real Docker or bubblewrap sandboxes; ``e2e``: whole
builds, Harbor runs, a wheel install) and carries that folder's marker. ``make test-fast`` runs unit and stage
tests that need no container, data or slow work (under a minute). Resource markers (pyproject.toml):
``docker``, ``gpu``, ``slow``, ``data`` and ``harbor``. Real SWE-Bench Pro rows and a
mini-swe-agent trajectory are committed under tests/fixtures/ (MIT, see their SOURCE.md), so a fresh clone
runs every test but those marked ``data`` (the session corpora, which may not be redistributed, and the
full 731-task checks): they skip with a reason naming what is missing. A test that reads ../shared without
the ``data`` marker fails, so no test can come to depend on it silently.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("SWE_TASKFLOW_SHARED", ROOT.parent / "shared"))
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
FIXTURES = ROOT / "tests" / "fixtures"
#: 14 rows of the 731-task SWE-Bench Pro file, byte for byte (tests/fixtures/swe-bench-pro/SOURCE.md).
PRO_SAMPLE = FIXTURES / "swe-bench-pro" / "pro_public_sample.jsonl"
#: 4 rows of the Hugging Face-schema sample (with gold patches).
HF_SAMPLE = FIXTURES / "swe-bench-pro" / "hf_schema_sample.jsonl"
#: One trimmed, real mini-swe-agent trajectory (tests/fixtures/mini-swe-agent/SOURCE.md).
TRAJECTORY = FIXTURES / "mini-swe-agent" / "astropy__astropy-12907.traj.json.gz"
#: Harbor's own venv (``make harbor-venv``; .ci/harbor-setup.sh in CI).
HARBOR_VENV = Path(os.environ.get("SWE_TASKFLOW_HARBOR_VENV", ROOT / ".harbor-venv"))


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


@pytest.fixture(scope="session", autouse=True)
def _ctrl_c_reaches_started_commands():
    """Tests send Ctrl-C (SIGINT) to the commands they start and expect them to stop. A test run started in the
    background of a script (``cmd &``, without job control) inherits SIGINT ignored and would hand that down
    through every exec, where the commands rightly keep ignoring it; a handler in this process is reset to the
    default at exec instead."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield


LEVELS = ("unit", "stage", "container", "e2e")


def pytest_collection_modifyitems(config, items):
    """Each test gets its folder's level marker; every test that reads ../shared carries the ``data`` marker
    (else the run stops, naming it)."""
    for item in items:
        level = Path(str(item.fspath)).parent.name
        if level not in LEVELS:
            raise pytest.UsageError(f"{item.nodeid}: tests live in tests/<level>/ (one of {', '.join(LEVELS)})")
        item.add_marker(getattr(pytest.mark, level))
    unmarked = [item.nodeid for item in items if {"shared_dir", "sessions_file"} & set(item.fixturenames)
                and item.get_closest_marker("data") is None]
    if unmarked:
        raise pytest.UsageError("these tests read ../shared but lack @pytest.mark.data (mark them, or use the "
                                "committed fixtures in tests/fixtures/): " + ", ".join(unmarked))


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """../shared (session corpora, the full 731 tasks): ``data``-marked tests only; they skip without it."""
    if not (SHARED / "data").is_dir():
        pytest.skip(f"data: ../shared/data is absent ({SHARED / 'data'}); set SWE_TASKFLOW_SHARED to run it")
    return SHARED


@pytest.fixture(scope="session")
def sessions_file(shared_dir: Path) -> Path:
    """Real SpecStory sessions: NOT licensed for redistribution, never copy their text into the repo."""
    path = shared_dir / "data" / "interaction-sessions" / "specstory_sessions.jsonl"
    if not path.exists():
        pytest.skip(f"data: {path} is absent")
    return path


@pytest.fixture(scope="session")
def pro_sample() -> Path:
    """14 real SWE-Bench Pro rows (731-file format), committed."""
    return PRO_SAMPLE


@pytest.fixture(scope="module")
def pristine(tmp_path_factory, pro_sample) -> Path:
    """A small release built from the committed Pro rows (``tests.support.synthetic.tamper_release``), once per
    test module: read it, never change it (``rel`` is the copy to tamper with)."""
    from tests.support.synthetic import tamper_release

    return tamper_release(tmp_path_factory.mktemp("pristine"), pro_sample)


@pytest.fixture
def rel(pristine, tmp_path) -> Path:
    """A fresh copy of ``pristine`` for one test to tamper with."""
    import shutil

    dst = tmp_path / "rel"
    shutil.copytree(pristine, dst)
    return dst


@pytest.fixture(scope="session")
def hf_sample() -> Path:
    """4 real SWE-Bench Pro rows in the Hugging Face schema (with gold patches), committed."""
    return HF_SAMPLE


@pytest.fixture(scope="session")
def trajectory_file() -> Path:
    """One real mini-swe-agent trajectory (trimmed), committed."""
    return TRAJECTORY


@pytest.fixture(scope="session")
def harbor_python() -> Path:
    """The Harbor venv's python (``harbor``-marked tests): skipped when absent, a failure in CI."""
    python = HARBOR_VENV / "bin" / "python"
    if python.exists():
        return python
    if IN_CI:
        pytest.fail(f"CI must run the harbor-marked tests, but {python} is absent")
    pytest.skip(f"harbor: no Harbor venv at {HARBOR_VENV} (make harbor-venv, or set SWE_TASKFLOW_HARBOR_VENV)")


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




@pytest.fixture(scope="session")
def example_image(docker_available) -> str:
    """The example's own task image (bash, git, python3), built locally once per run; its tag."""
    from builder.bundled.image import build_task_image
    from builder.pipeline.repos import example_task

    bundled = example_task()
    build_task_image(bundled.task, bundled.files)
    return bundled.task.image_name

@pytest.fixture(scope="session")
def harbor_venv(docker_available) -> Path:
    """Harbor's venv (``make harbor-venv``) with the Docker SDK; in CI (.ci/harbor-setup.sh) absence fails."""
    harbor = HARBOR_VENV / "bin" / "harbor"
    sdk = harbor.exists() and subprocess.run([str(HARBOR_VENV / "bin" / "python"), "-c", "import docker"],
                                             capture_output=True).returncode == 0
    missing = [what for what, ok in ((f"{harbor} (make harbor-venv)", harbor.exists()),
                                     (f"the docker SDK in {HARBOR_VENV} (make harbor-venv)", sdk)) if not ok]
    if missing:
        if IN_CI:
            pytest.fail(f"CI must run the harbor-marked tests, but {missing[0]} is missing")
        pytest.skip(f"{missing[0]} is missing")
    return HARBOR_VENV


@pytest.fixture
def hub(monkeypatch):
    """The recording Hub (tests/support/fakehub.py) as the real client's endpoint, with TEST_TOKEN."""
    from tests.support import fakehub

    yield fakehub.install(monkeypatch, fakehub.TEST_TOKEN)
    fakehub.uninstall()
