"""croissant.json: valid for ``mlcroissant``, true to the files (sha256s, record sets, columns), checked by verify."""

from __future__ import annotations

import hashlib
import json
import shutil

import pyarrow.parquet as pq
import pytest

from builder.release import write_release
from tests.support.synthetic import hand_written_tasks, small_release_splits, uniform_target
from builder.release.trajectories import add_trajectories, trajectory_row
from swe_taskflow.features import session_features, trajectory_features
from swe_taskflow.verify import verify_release

import mlcroissant as mlc  # noqa: E402  (the test extra; make test installs it)


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    root = tmp_path_factory.mktemp("croissant")
    uniform_target(root / "target.json")
    splits = small_release_splits(hand_written_tasks())
    write_release(root / "rel", name="croissant-test", version="1.0.0", splits=splits,
                  target_path=root / "target.json", repo_id="org/croissant-test",
                  provenance={"source": {"source": "hand-written", "revision": "1"},
                              "recipe": {"file": "r.toml", "content": "x"}, "seeds": {"select": 3}},
                  description="[hand-written] release for the Croissant tests")
    manifest = next((root / "rel/manifests").glob("*.json"))
    doc = json.loads(manifest.read_text())
    split = next(s for s in doc["splits"] if s["name"] == "split_prompt")
    row = splits["split_prompt"][0]
    parsed = {"instance_id": row["instance_id"], "trajectory_format": "ATIF-v1.4", "exit_status": "Submitted",
              "messages": [{"step_id": 1, "source": "user", "message": "[hand-written]"}], "cost_usd": 0.0,
              "tokens_in": 1, "tokens_out": 1, "api_calls": 0, "source_file_sha256": "0" * 64}
    add_trajectories(root / "rel", [trajectory_row(parsed, condition="split_prompt", model="hw", run=0,
                                                   split_sha256=split["sha256"], row_sha256=row["row_sha256"])])
    return root / "rel"


def test_mlcroissant_validates_it(release):
    ds = mlc.Dataset(jsonld=str(release / "croissant.json"))     # raises ValidationError on any error
    warnings = ds.metadata.ctx.issues.warnings
    # no dates in a release (byte-identical rebuilds): the one recommendation it does not follow
    assert all("datePublished" in w for w in warnings), warnings
    assert ds.metadata.name == "croissant-test" and ds.metadata.url == "https://huggingface.co/datasets/org/croissant-test"


def test_it_describes_every_file_split_and_column(release):
    doc = json.loads((release / "croissant.json").read_text())
    manifest = json.loads(next((release / "manifests").glob("*.json")).read_text())
    files = {d["@id"]: d for d in doc["distribution"]}
    record_sets = {r["@id"]: r for r in doc["recordSet"]}
    assert manifest["croissant"]["sha256"] == hashlib.sha256((release / "croissant.json").read_bytes()).hexdigest()
    for s in manifest["splits"]:
        for f in s["files"]:
            assert files[f["path"]]["sha256"] == hashlib.sha256((release / f["path"]).read_bytes()).hexdigest()
            assert files[f["path"]]["contentUrl"] == f["path"]
        rs = record_sets[f"{s['config']}_{s['name']}"]
        feats = session_features() if s["config"] == "default" else trajectory_features()
        assert [f["name"] for f in rs["field"]] == list(feats)
        assert [f["name"] for f in rs["field"]] == pq.read_schema(release / s["files"][0]["path"]).names
        assert f"{s['rows']} rows" in rs["description"]
    assert len(record_sets) == len(manifest["splits"])
    rai = doc["rai:dataCollection"]
    assert manifest["provenance"]["recipe"]["sha256"] in rai and "select=3" in rai and "target" in rai
    assert doc["citeAs"].startswith("@misc{slinko2026taskflow")


def test_mlcroissant_reads_the_records(release, tmp_path):
    """Records through mlcroissant (top-level columns and one nesting level: its reader cannot descend into a
    list inside a list of structs), equal to the parquet rows."""
    copy = tmp_path / "rel"
    shutil.copytree(release, copy)
    doc = json.loads((copy / "croissant.json").read_text())
    rs = next(r for r in doc["recordSet"] if r["@id"] == "default_qa_random_sol")
    keep = {"instance_id", "n_turns", "turns"}
    rs["field"] = [f for f in rs["field"] if f["name"] in keep]
    for f in rs["field"]:
        if f["name"] == "turns":
            f["subField"] = [x for x in f["subField"] if x["name"] in ("turn_index", "kind", "text")]
    doc["recordSet"] = [rs]
    (copy / "croissant.json").write_text(json.dumps(doc))
    records = list(mlc.Dataset(jsonld=str(copy / "croissant.json")).records(record_set="default_qa_random_sol"))
    rows = pq.read_table(copy / "data/qa_random_sol-00000-of-00001.parquet").to_pylist()
    assert len(records) == len(rows)
    for rec, row in zip(records, rows):
        assert rec["default_qa_random_sol/instance_id"].decode() == row["instance_id"]
        assert rec["default_qa_random_sol/n_turns"] == row["n_turns"]
        assert [t["default_qa_random_sol/turns/text"].decode() for t in rec["default_qa_random_sol/turns"]] == \
            [t["text"] for t in row["turns"]]


def test_verify_regenerates_it(release, tmp_path):
    copy = tmp_path / "rel"
    shutil.copytree(release, copy)
    assert verify_release(copy).ok
    raw = (copy / "croissant.json").read_bytes()
    (copy / "croissant.json").write_bytes(raw.replace(b"croissant-test", b"croissant-tesT", 1))
    errors = [str(e) for e in verify_release(copy).errors]
    assert any("croissant.json" in e and "sha256 differs" in e for e in errors), errors
    assert any("differs from the one regenerated" in e for e in errors), errors
