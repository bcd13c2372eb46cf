"""The development tools and benchmarks that read ../shared say in one line what is missing and how to supply
it (exit 2), not a traceback, when a checkout has no shared data folder beside it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("script, missing, flag", [
    ("tools/default_target.py", "data/interaction-sessions/specstory_sessions.jsonl", "--sessions"),
    ("benchmarks/split_stats.py", "data/swe-bench-pro/swe_bench_pro_public_731.jsonl", "--tasks"),
    ("tools/train_heads.py", "data/interaction-sessions/specstory_sessions.jsonl", "--sessions"),
    ("benchmarks/hand_label_agreement.py", "data/interaction-sessions/specstory_sessions.jsonl", "--sessions"),
    ("benchmarks/hand_label_sample.py", "data/interaction-sessions/specstory_sessions.jsonl", "--sessions"),
])
def test_missing_shared_folder_is_one_line_naming_the_path(tmp_path, script, missing, flag):
    nowhere = tmp_path / "no-shared"
    env = {**os.environ, "SWE_TASKFLOW_SHARED": str(nowhere), "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert str(nowhere / missing) in lines[0]
    assert flag in lines[0] and "SWE_TASKFLOW_SHARED" in lines[0]
    assert run.stdout == ""


def test_split_check_bench_does_not_extrapolate_from_the_bundled_fallback(tmp_path):
    env = {**os.environ, "SWE_TASKFLOW_SHARED": str(tmp_path / "no-shared"), "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "benchmarks/split_check_bench.py", "--max-kb", "32", "--before-max-kb", "32"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "builder/data/example/tasks.jsonl" in run.stdout.splitlines()[0]
    if " before " not in run.stdout:
        pytest.skip("the pre-rewrite split checks are not in this checkout's git history")
    assert "fitted on" not in run.stdout   # no extrapolated time printed
    assert "not extrapolated" in run.stdout and "too small to extrapolate" in run.stdout
