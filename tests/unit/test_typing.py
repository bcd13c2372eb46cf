"""The pure core type-checks clean under mypy's default settings (issue 33), so `make test` catches a type error
in `swe_taskflow/` the way it catches a failing test; `py.typed` publishes the annotations to its users."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_mypy_finds_no_error_in_the_core():
    # the [tool.mypy] table of pyproject.toml: files = swe_taskflow, untyped third-party packages read as Any
    res = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml")], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert "No module named mypy" not in res.stderr, "mypy is in the test extra: pip install -e '.[test]'"
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-2000:]
    assert "Success: no issues found" in res.stdout


def test_the_core_is_marked_typed():
    assert (ROOT / "swe_taskflow" / "py.typed").is_file()
    text = (ROOT / "pyproject.toml").read_text()
    assert '"py.typed"' in text.split("[tool.setuptools.package-data]", 1)[1].split("\n\n", 1)[0]
