"""Each source benchmark's images hold the repository in their own place: SWE-bench's (Verified) at /testbed,
SWE-Bench Pro's and the example's own task's at /app. A checkpoint that looks in the wrong one cannot grade."""

from __future__ import annotations

import json
import tomllib

import pytest

from builder.evaluation.export import export_harbor
from builder.evaluation.options import ExportOptions
from tests.support.harbor_fixture import build_fixture_release


def test_repo_dir_follows_the_source_unless_given():
    opts = ExportOptions()
    assert opts.repo_dir("swe-bench-verified") == "/testbed"
    assert opts.repo_dir("swe-bench-pro") == "/app" and opts.repo_dir("hand-written") == "/app"
    assert ExportOptions(app_dir="/src").repo_dir("swe-bench-verified") == "/src"


@pytest.mark.parametrize("source,where", [("swe-bench-verified", "/testbed"), ("swe-bench-pro", "/app")])
def test_the_exported_task_works_where_its_image_holds_the_repository(tmp_path, source, where):
    rel, _ = build_fixture_release(tmp_path, source=source)
    out = tmp_path / "ds"
    export_harbor(rel, "split_prompt", out)
    tasks = sorted(p for p in out.iterdir() if (p / "task.toml").is_file())
    assert tasks
    for task in tasks:
        assert tomllib.loads((task / "task.toml").read_text())["environment"]["workdir"] == where
        checkpoints = sorted(task.glob("steps/*/tests/checkpoint.json"))
        assert checkpoints and all(json.loads(c.read_text())["app_dir"] == where for c in checkpoints)
