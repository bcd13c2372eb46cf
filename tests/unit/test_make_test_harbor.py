"""`make test` sets up what the harbor-marked tests need where it can, as .ci/run does (issue 36): Harbor's
venv when Python 3.12 exists, else one line saying those tests will be skipped (before: they were skipped
unless `make harbor-venv` had been run by hand)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _dry_run(tmp_path: Path, harbor_py: str) -> str:
    if shutil.which("make") is None:
        pytest.skip("no make")
    venv = tmp_path / "hv"   # a venv that is not there: its set-up is printed, not skipped by a stamp
    done = subprocess.run(["make", "-n", "--no-print-directory", "test", f"HARBOR_PY={harbor_py}",
                           f"HARBOR_VENV={venv}"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_make_test_sets_up_harbor_where_python_312_exists(tmp_path):
    out = _dry_run(tmp_path, "/opt/py312/bin/python3")
    assert f"/opt/py312/bin/python3 -m venv {tmp_path / 'hv'}" in out and "harbor==0.25.0" in out
    assert out.index("harbor==0.25.0") < out.index("-m pytest tests")


def test_make_test_says_the_harbor_tests_skip_without_python_312(tmp_path):
    out = _dry_run(tmp_path, "")
    assert "no Python 3.12" in out and "harbor-marked tests will be skipped" in out
    assert f"-m venv {tmp_path / 'hv'}" not in out   # (the project's own .venv may be set up first: its stamp)
    assert "-m pytest tests" in out
