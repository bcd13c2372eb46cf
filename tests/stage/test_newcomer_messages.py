"""Issue 25, small things a newcomer met: each message now says what happened, in words.

- ``example build-image`` (and ``proofs build-image``) printed a raw JSON line that reads like a failure;
- ``proofs 13/13 done 3 failed`` gave no hint that the three are the example's deliberately broken questions;
- ``verify`` named ``row_sha256`` where a trajectory row's ``trajectory_sha256`` differed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from builder.cli import main as cli_main
from builder.pipeline.build_progress import BuildProgress
from builder.release import write_release
from builder.release.trajectories import add_trajectories, import_trajectories
from builder.release.writer import PARQUET_OPTIONS
from swe_taskflow.manifest import load_manifest
from swe_taskflow.schema import Task
from swe_taskflow.verify import verify_release
from tests.support.synthetic import small_release_splits, uniform_target

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "builder" / "releases" / "example.toml"
INFO = {"built": False, "content_sha256": "c" * 64, "image_id": "sha256:" + "3eea4cff3324" + "0" * 52,
        "seconds": 2.35, "tag": "swe-taskflow/ticketdesk:735f2b5ddf05"}


# ------------------------------------------------------------------ build-image


@pytest.mark.parametrize("built", [False, True])
@pytest.mark.parametrize("argv, target", [(["example", "build-image"], "builder.bundled.image.build_task_image"),
                                          (["proofs", "build-image"], "builder.proofs.build_test_image")])
def test_build_image_prints_a_readable_line_and_json_on_request(argv, target, built, monkeypatch, capsys):
    module, name = target.rsplit(".", 1)
    monkeypatch.setattr(__import__(module, fromlist=[name]), name, lambda *a, **k: {**INFO, "built": built})
    assert cli_main(argv) == 0
    line = capsys.readouterr().out.strip()
    assert not line.startswith("{") and "swe-taskflow/ticketdesk:735f2b5ddf05" in line and "3eea4cff3324" in line
    assert ("built image" in line and "2.35 s" in line) if built else ("is up to date" in line and "--force" in line)
    assert cli_main([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {**INFO, "built": built}


# ------------------------------------------------------------------ proofs progress


def test_the_example_marks_exactly_its_three_broken_questions():
    """How the example marks them: the pool row's ``note`` (QAItem does not keep it)."""
    from builder.pipeline.recipe import load_recipe
    from builder.proofs.pool import deliberately_failing

    recipe = load_recipe(EXAMPLE)
    rows = [json.loads(line) for line in (ROOT / "builder/data/example/pool.jsonl").read_text().splitlines()]
    meant = deliberately_failing([recipe.resolve(p.path) for p in recipe.questions.pools])
    assert meant == {"example-q11", "example-q12", "example-q13"}
    assert all(r["note"].startswith("a deliberately failing candidate") for r in rows if r["question_id"] in meant)


def test_a_progress_line_says_which_failures_were_meant(tmp_path):
    import io

    stream = io.StringIO()
    progress = BuildProgress(2, stream=stream, interval_s=60)
    sp = progress.stage("proofs", 1)
    sp.set_total(13)
    sp.advance(10)
    sp.advance(3, failed=3, expected=3)
    progress.finish(sp, "ran")
    other = progress.stage("proofs", 2)
    other.restore(13, 13, 5, 3)   # a cached run: two failures nobody asked for
    progress.finish(other, "cached")
    first, second = stream.getvalue().splitlines()[-2:]
    assert "13/13 done" in first and "3 failed (all deliberately broken, as their rows say)" in first
    assert "5 failed (3 deliberately broken, as their rows say)" in second and second.endswith("cached")


# ------------------------------------------------------------------ verify names the hash that differs


def test_verify_names_trajectory_sha256_when_a_trajectory_row_changed(tmp_path, trajectory_file):
    iid = trajectory_file.name.removesuffix(".traj.json.gz")
    text = f"[hand-written] Stand-in issue for {iid}.\n\n[hand-written] Second.\n\n[hand-written] Third."
    task = Task(instance_id=iid, source="princeton-nlp/SWE-bench_Verified", source_revision="hand-written",
                repo="astropy/astropy", base_commit="0" * 40, original_prompt=text,
                extra={"provenance": "hand-written"})
    uniform_target(tmp_path / "target.json")
    rel = tmp_path / "rel"
    write_release(rel, name="traj", version="v1", splits=small_release_splits([task]),
                  target_path=tmp_path / "target.json", provenance={"source": {"benchmark": "hand-written"}})
    add_trajectories(rel, import_trajectories(rel, [trajectory_file], condition="split_prompt", run=1))
    manifest, _ = load_manifest(rel / "manifests/traj-v1.json")
    path = rel / manifest.split("trajectories", "split_prompt").files[0].path
    table = pq.read_table(path)
    rows = table.to_pylist()
    rows[0]["model"] = rows[0]["model"] + "-edited"   # the row's content changes, its stored hash does not
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path, **PARQUET_OPTIONS)
    errors = [e for e in verify_release(rel).errors if "row content does not match" in e.message]
    assert len(errors) == 1, [str(e) for e in verify_release(rel).errors]
    assert errors[0].field == "trajectory_sha256" and "its trajectory_sha256" in str(errors[0])
    assert "row_sha256" not in str(errors[0]).replace("trajectory_sha256", "")
