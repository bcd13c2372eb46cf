"""Trajectories: real mini-swe-agent files and a hand-written ATIF file, bound to split and row hashes."""

from __future__ import annotations

import gzip
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from builder.cli import main as cli_main
from builder.release import write_release
from tests.support.synthetic import small_release_splits, uniform_target
from builder.release.messages import source_messages
from builder.release.trajectories import add_trajectories, import_trajectories, read_trajectory
from builder.release.writer import PARQUET_OPTIONS
from swe_taskflow.errors import InputError
from swe_taskflow.hashing import canonical_sha256
from swe_taskflow.manifest import load_manifest
from swe_taskflow.schema import Task
from swe_taskflow.verify import verify_release

N = 1


@pytest.fixture(scope="module")
def traj_files(trajectory_file):
    """One real mini-swe-agent trajectory, committed (tests/fixtures/mini-swe-agent/)."""
    return [trajectory_file]


def _task(iid: str) -> Task:
    text = (f"[hand-written] Stand-in issue for {iid}.\n\n[hand-written] Second paragraph.\n\n"
            "[hand-written] Third paragraph.")
    return Task(instance_id=iid, source="princeton-nlp/SWE-bench_Verified", source_revision="hand-written",
                repo=iid.split("__")[0] + "/" + iid.split("__")[1].rsplit("-", 1)[0], base_commit="0" * 40,
                original_prompt=text, extra={"provenance": "hand-written"})


@pytest.fixture
def release(tmp_path, traj_files):
    ids = [f.name.removesuffix(".traj.json.gz") for f in traj_files]
    uniform_target(tmp_path / "target.json")
    write_release(tmp_path / "rel", name="traj", version="v1", splits=small_release_splits([_task(i) for i in ids]),
                  target_path=tmp_path / "target.json", provenance={"source": {"benchmark": "hand-written"}},
                  repo_id="org/traj")
    return tmp_path / "rel"


def test_mini_swe_agent_costs_and_tokens(traj_files):
    for f in traj_files:
        doc = json.loads(gzip.decompress(f.read_bytes()))
        t = read_trajectory(f)
        assert t["instance_id"] == doc["instance_id"]
        assert t["cost_usd"] == doc["info"]["model_stats"]["instance_cost"]
        assert t["api_calls"] == doc["info"]["model_stats"]["api_calls"]
        usage = [((m.get("extra") or {}).get("response") or {}).get("usage") or {} for m in doc["messages"]]
        assert t["tokens_in"] == sum(u.get("prompt_tokens", 0) for u in usage) > 0
        assert t["tokens_out"] == sum(u.get("completion_tokens", 0) for u in usage) > 0
        assert t["exit_status"] == doc["info"]["exit_status"]


def test_import_binds_and_verifies(release, traj_files, tmp_path, monkeypatch):
    import datasets
    rows = import_trajectories(release, traj_files, condition="split_prompt", run=1)
    manifest = add_trajectories(release, rows)
    report = verify_release(release)
    assert report.ok, [str(e) for e in report.errors]
    entry = manifest.split("trajectories", "split_prompt")
    assert entry.rows == N
    split_rows = pq.read_table(release / manifest.split("default", "split_prompt").files[0].path).to_pylist()
    row_of = {r["instance_id"]: r["row_sha256"] for r in split_rows}
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    ds = datasets.load_dataset(str(release), "trajectories", split="split_prompt", cache_dir=str(tmp_path / "c"))
    for r in ds:
        assert r["split_sha256"] == manifest.split("default", "split_prompt").sha256
        assert r["row_sha256"] == row_of[r["instance_id"]]
        assert r["model"] == "google/gemini-3-pro-preview" and r["run"] == 1
        src = json.loads(gzip.decompress(next(f for f in traj_files if f.name.startswith(r["instance_id"])).read_bytes()))
        assert source_messages(r["trajectory_format"], r["messages"]) == src["messages"]
        assert [m["role"] for m in r["messages"]] == [m["role"] for m in src["messages"]]
        assert [m["content"] for m in r["messages"]] == [m["content"] for m in src["messages"]]
        usage = [((m.get("extra") or {}).get("response") or {}).get("usage") or {} for m in src["messages"]]
        assert [m["prompt_tokens"] for m in r["messages"]] == [u.get("prompt_tokens") for u in usage]
    # the session splits did not change when trajectories were added
    assert "trajectories" in (release / "README.md").read_text()
    again = import_trajectories(release, traj_files[:1], condition="split_prompt", run=1)
    with pytest.raises(InputError, match="already in the release.*--replace replaces it"):   # the CLI's flag
        add_trajectories(release, again)


def test_trajectory_bound_to_another_split_fails_verify(release, traj_files):
    add_trajectories(release, import_trajectories(release, traj_files, condition="single_prompt"))
    manifest, _ = load_manifest(release / "manifests/traj-v1.json")
    path = release / manifest.split("trajectories", "single_prompt").files[0].path
    table = pq.read_table(path)
    rows = table.to_pylist()
    rows[0]["split_sha256"] = manifest.split("default", "split_prompt").sha256
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path, **PARQUET_OPTIONS)
    errs = [str(e) for e in verify_release(release).errors]
    assert any("trajectory is bound to another split hash" in e and path.name in e for e in errs), errs


def test_atif_and_errors(release, traj_files, tmp_path, capsys):
    iid = traj_files[0].name.removesuffix(".traj.json.gz")
    atif = {"schema_version": "ATIF-v1.4", "session_id": "hand-written-1",
            "agent": {"name": "hand-written-agent", "version": "0", "model_name": "example-model"},
            "notes": "hand-written fixture, not a real agent run",
            "steps": [{"step_id": 1, "source": "user", "message": "[hand-written] fix it"},
                      {"step_id": 2, "source": "agent", "message": "[hand-written] done",
                       "metrics": {"prompt_tokens": 120, "completion_tokens": 30, "cost_usd": 0.002}},
                      {"step_id": 3, "source": "agent", "message": "[hand-written] really done",
                       "metrics": {"prompt_tokens": 200, "completion_tokens": 10, "cost_usd": 0.003}}],
            "extra": {"instance_id": iid, "exit_status": "Submitted"}}
    f = tmp_path / "run.json"
    f.write_text(json.dumps(atif))
    t = read_trajectory(f)
    assert (t["tokens_in"], t["tokens_out"], t["api_calls"]) == (320, 40, 2)
    assert t["cost_usd"] == pytest.approx(0.005) and t["model"] == "example-model"
    assert cli_main(["trajectories", "import", str(release), str(f), "--condition", "qa_only_sol"]) == 0
    assert verify_release(release).ok
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**atif, "extra": {"instance_id": "not-in-release"}}))
    with pytest.raises(InputError, match="not in split") as e:
        import_trajectories(release, [other], condition="qa_only_sol")
    assert str(other) in str(e.value)
    assert cli_main(["trajectories", "import", str(release), str(f), "--condition", "nope"]) == 2
    assert "unknown split" in capsys.readouterr().err
    broken = tmp_path / "broken.traj.json"
    broken.write_text("{not json")
    with pytest.raises(InputError, match="broken.traj.json"):
        read_trajectory(broken)


def test_trajectory_hash_is_its_canonical_json(release, traj_files):
    manifest = add_trajectories(release, import_trajectories(release, traj_files[:1], condition="split_prompt"))
    path = release / manifest.split("trajectories", "split_prompt").files[0].path
    row = pq.read_table(path).to_pylist()[0]
    assert row["trajectory_sha256"] == canonical_sha256({k: v for k, v in row.items() if k != "trajectory_sha256"})


def test_a_refused_import_names_what_it_found_and_never_says_expected_none(release, tmp_path, capsys):
    doc = {"schema_version": "ATIF-v1.4", "agent": {"name": "hand-written", "version": "0", "model_name": "m"},
           "steps": [{"step_id": 1, "source": "user", "message": "[hand-written]"}],
           "extra": {"instance_id": "not-in-release"}}
    f = tmp_path / "stray.json"
    f.write_text(json.dumps(doc))
    assert cli_main(["trajectories", "import", str(release), str(f), "--condition", "split_prompt"]) == 2
    err = capsys.readouterr().err
    assert "not in split 'split_prompt'" in err and "got 'not-in-release'" in err and str(f) in err
    assert "expected None" not in err and "--condition" in err
