"""A rebuild into a folder whose release got trajectories from `evaluate import` (issue 25, section 1).

The import rewrites ``OUT/release`` (new manifest, a trajectories config): the next build must not call
that "files this build did not write". It keeps the trajectories when the rows they are bound to are
unchanged, and when rows changed it moves the old release (with its trajectories) aside to
``OUT/stale-trajectories/``, with a message; nothing is deleted. A note dropped into the release is
still foreign. The releases are the hand-written Harbor fixture; the trajectory is a hand-written ATIF file.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from builder.pipeline import outdir
from builder.pipeline.build import BuildOutcome, _place_release
from builder.release.trajectories import add_trajectories, import_trajectories
from builder.release.writer import read_release, write_release
from swe_taskflow.errors import ConfigError
from swe_taskflow.hashing import ROW_HASH_FIELD, row_sha256
from swe_taskflow.verify import verify_folder

from tests.support.harbor_fixture import build_fixture_release

SPLIT = "qa_last"
IID = "fixture__harbor-0"


@pytest.fixture(scope="module")
def fixture(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rebuild-traj")
    rel, _ = build_fixture_release(tmp)
    return tmp, rel


def _atif(path: Path) -> Path:
    doc = {"schema_version": "ATIF-v1.4", "session_id": "hand-written-rebuild",
           "agent": {"name": "hand-written-agent", "version": "0", "model_name": "example-model"},
           "notes": "hand-written fixture, not a real agent run",
           "steps": [{"step_id": 1, "source": "user", "message": "[hand-written] fix it"},
                     {"step_id": 2, "source": "agent", "message": "[hand-written] done",
                      "metrics": {"prompt_tokens": 12, "completion_tokens": 3, "cost_usd": 0.001}}],
           "extra": {"instance_id": IID, "exit_status": "Submitted"}}
    path.write_text(json.dumps(doc))
    return path


def _built_once(fixture, tmp_path: Path) -> Path:
    """OUT as a build leaves it (release + marker), then an import adds a trajectory to OUT/release."""
    _, rel = fixture
    out = tmp_path / "out"
    shutil.copytree(rel, out / "release")
    outdir.record(out)
    rows = import_trajectories(out / "release", [_atif(tmp_path / "t.json")], condition=SPLIT, model="m")
    add_trajectories(out / "release", rows)
    assert verify_folder(out / "release").ok
    return out


def _trajectories(release: Path) -> list[dict]:
    return read_release(release)[2]


def test_an_imported_release_is_not_foreign_but_a_dropped_note_is(fixture, tmp_path):
    out = _built_once(fixture, tmp_path)
    assert outdir.foreign_files(out) == []
    outdir.claim(out)                                   # the rebuild may proceed
    (out / "release" / "note.txt").write_text("mine\n")
    assert "release/note.txt" in outdir.foreign_files(out)
    with pytest.raises(ConfigError, match="did not write"):
        outdir.claim(out)


def test_rebuild_with_unchanged_rows_keeps_the_trajectories(fixture, tmp_path):
    _, rel = fixture
    out = _built_once(fixture, tmp_path)
    said: list[str] = []
    outcome = BuildOutcome(recipe=None, out=out, results=[])
    _place_release(rel, out, outcome, say=said.append)           # the build's fresh release: same rows
    kept = _trajectories(out / "release")
    assert [(t["instance_id"], t["model"]) for t in kept] == [(IID, "m")]
    assert verify_folder(out / "release").ok
    assert outcome.extra["trajectories"] == {"kept": 1, "stale": 0} and "kept 1" in said[0]
    assert not (out / outdir.STALE).exists()
    outdir.record(out)
    assert outdir.foreign_files(out) == []


def test_rebuild_with_changed_rows_moves_the_old_release_aside(fixture, tmp_path):
    _, rel = fixture
    out = _built_once(fixture, tmp_path)
    old_manifest = next((out / "release" / "manifests").glob("*.json")).read_bytes()
    manifest, splits, _ = read_release(rel)                        # a new build: one row of the split changed
    row = splits[SPLIT][0]
    row["turns"][0]["text"] += "\n\n[hand-written] One more requirement."
    row[ROW_HASH_FIELD] = row_sha256(row)
    target = tmp_path / "target.json"
    shutil.copyfile(rel / manifest.target.path, target)
    changed = tmp_path / "changed"
    write_release(changed, name=manifest.name, version=manifest.version, splits=splits, target_path=target,
                  provenance={**manifest.provenance, "package": manifest.package}, repo_id="org/harbor-fixture")
    said: list[str] = []
    _place_release(changed, out, BuildOutcome(recipe=None, out=out, results=[]), say=said.append)
    assert _trajectories(out / "release") == []                    # the new release carries none
    assert verify_folder(out / "release").ok
    (aside,) = (out / outdir.STALE).iterdir()
    assert verify_folder(aside).ok                                 # moved, whole: still a verifiable release
    assert next((aside / "manifests").glob("*.json")).read_bytes() == old_manifest   # the very release imported into
    assert [t["instance_id"] for t in _trajectories(aside)] == [IID]
    assert "moved 1 imported trajectories aside" in said[0] and str(aside) in said[0]
