"""A command printing 300 MB through the project's Harbor environment leaves the host's memory flat (issue 32).

Measured in Harbor's venv (tests/support/harbor_output_probe.py), for both command paths (the resident helper and
a plain docker exec): before the fix the probe went from 44 MB to 623 MB resident (909 MB at the peak); now
the output is streamed into its first and last 2 MiB, and the text says how much was dropped between.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

pytestmark = [pytest.mark.harbor, pytest.mark.docker, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]


def test_300_mb_of_output_keeps_host_memory_flat(harbor_venv, example_image, tmp_path):
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HARBOR_TELEMETRY": "0"}
    proc = subprocess.run([str(harbor_venv / "bin" / "python"), str(ROOT / "tests/support/harbor_output_probe.py"),
                           example_image, str(tmp_path / "work"), "300"], capture_output=True, text=True, env=env,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    for path_name in ("helper", "api"):
        got = out[path_name]
        assert got["code"] == 0 and got["starts"] == "first-line" and got["ends"] == "last-line", got
        assert got["says_dropped"] and got["kept_chars"] < 5 << 20, got
        assert got["peak_mb"] - got["rss_before_mb"] < 64, got   # old code: +865 MB at the peak
