"""Writing a release: round trip through datasets.load_dataset offline, hashes, card, determinism."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import numpy as np
import pytest
import rfc8785

from builder.release import write_release
from tests.support.synthetic import hand_written_tasks, small_release_splits, tasks_from_pro_jsonl, uniform_target
from swe_taskflow.errors import InputError, VerifyError
from swe_taskflow.features import schema_differences, session_features
from swe_taskflow.manifest import load_manifest
from swe_taskflow.taxonomy import RETAINED
from swe_taskflow.verify import verify_release

PROVENANCE = {"source": {"benchmark": "ScaleAI/SWE-bench_Pro", "revision": "public-731",
                         "files": {"pro_public_sample.jsonl": "tests/fixtures/swe-bench-pro"}},
              "recipe": {"name": "test", "conditions": ["single_prompt", "split_prompt"]},
              "models": {"splitter": {"name": "paragraph-split", "revision": "1"}},
              "prompts": {}, "seeds": {"assembly": 0}, "package": {"name": "swe-taskflow", "version": "test",
                                                                    "git_commit": None, "git_dirty": None}}


@pytest.fixture(scope="module")
def tasks(pro_sample):
    """4 real SWE-Bench Pro tasks (committed fixture rows) and 3 hand-written ones."""
    return tasks_from_pro_jsonl(pro_sample, 4) + hand_written_tasks()


@pytest.fixture(scope="module")
def built(tmp_path_factory, tasks):
    root = tmp_path_factory.mktemp("rel")
    target = root / "target.json"
    uniform_target(target)
    splits = small_release_splits(tasks, seed=3)
    manifest = write_release(root / "release", name="taskflow-test", version="v0.1", splits=splits,
                             target_path=target, provenance=PROVENANCE, repo_id="org/taskflow-test")
    return root / "release", splits, manifest, target


def _independent_tfas(target_path: Path, rows) -> float:
    """TFAS by a separate plain-Python implementation of the paper's definitions."""
    tgt = json.loads(target_path.read_text())
    bins = ["1", "2", "3", "4", "5", "6-10", "11+"]
    L = [0.0] * 7
    T = {k: 0.0 for k in RETAINED}
    R: dict[tuple[str, str], float] = {}
    for r in rows:
        n = len(r["turns"])
        L[bins.index(str(n) if n <= 5 else ("6-10" if n <= 10 else "11+"))] += 1
        seq = [t["intent"] for t in r["turns"] if t["intent"] in RETAINED]
        for s in seq:
            T[s] += 1
        if seq:
            path = ["START", *seq, "END"]
            for a, b in zip(path, path[1:]):
                R[(a, b)] = R.get((a, b), 0) + 1
    src, dst = tgt["transition_sources"], tgt["transition_targets"]
    q_r = [R.get((a, b), 0.0) for a in src for b in dst]

    def jsd(p, q):
        p = [x / sum(p) for x in p]
        q = [x / sum(q) for x in q]
        m = [(a + b) / 2 for a, b in zip(p, q)]
        kl = lambda x, y: sum(a * math.log2(a / b) for a, b in zip(x, y) if a > 0)  # noqa: E731
        return (kl(p, m) + kl(q, m)) / 2

    s_l = 1 - jsd(tgt["P_L"], L)
    s_t = 1 - jsd(tgt["P_T"], [T[k] for k in RETAINED])
    s_r = 1 - jsd([x for row in tgt["P_R"] for x in row], q_r)
    return 100 * (s_l * s_t * s_r) ** (1 / 3)


def test_round_trip_load_dataset_offline(built, monkeypatch, tmp_path):
    import datasets
    folder, splits, manifest, _ = built
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    for name, rows in splits.items():
        ds = datasets.load_dataset(str(folder), "default", split=name, cache_dir=str(tmp_path / "cache"))
        assert ds.num_rows == len(rows)
        assert ds.features == session_features()
        loaded = ds.to_list()
        assert loaded == rows                                     # every row, every field, in order
        # recompute with rfc8785 + hashlib directly (not through swe_taskflow.hashing)
        recomputed = [hashlib.sha256(rfc8785.dumps({k: v for k, v in r.items() if k != "row_sha256"})).hexdigest()
                      for r in loaded]
        assert recomputed == [r["row_sha256"] for r in loaded]
        split_hash = hashlib.sha256("".join(h + "\n" for h in recomputed).encode()).hexdigest()
        entry = manifest.split("default", name)
        assert split_hash == entry.sha256 and len(loaded) == entry.rows
        for f in entry.files:
            assert hashlib.sha256((folder / f.path).read_bytes()).hexdigest() == f.sha256


def test_manifest_records_what_the_issue_lists(built):
    folder, splits, manifest, target = built
    doc = json.loads((folder / "manifests/taskflow-test-v0.1.json").read_text())
    assert doc["format"] == "swe-taskflow/manifest" and doc["format_version"] == 2
    for key in ("source", "recipe", "models", "prompts", "seeds"):
        assert key in doc["provenance"]
    recipe = dict(PROVENANCE["recipe"])
    assert doc["provenance"]["recipe"]["sha256"] == hashlib.sha256(rfc8785.dumps(recipe)).hexdigest()
    assert doc["target"]["sha256"] == hashlib.sha256(target.read_bytes()).hexdigest()
    assert doc["readme"]["sha256"] == hashlib.sha256((folder / "README.md").read_bytes()).hexdigest()
    qids = {q["question_id"]: q["proof_report_sha256"] for rows in splits.values() for r in rows for q in r["questions"]}
    assert doc["questions"] == qids and len(qids) > 0
    for s in doc["splits"]:
        assert set(s["tfas"]) == {"tfas", "S_L", "S_T", "S_R"}
        assert s["schema_sha256"] and s["files"] and s["rows"] == len(splits[s["name"]])
    assert set(doc["package"]) >= {"version", "git_commit", "git_dirty"}


def test_tfas_matches_an_independent_implementation(built):
    folder, splits, manifest, target = built
    for name, rows in splits.items():
        assert manifest.split("default", name).tfas["tfas"] == pytest.approx(_independent_tfas(target, rows), abs=1e-9)


def test_card_declares_configs_features_tfas_and_hidden_columns(built):
    from swe_taskflow.verify_checks import read_front_matter
    folder, splits, manifest, _ = built
    text = (folder / "README.md").read_text()
    meta = read_front_matter(text, where="README.md")
    assert meta["license"] == "mit" and "swe-taskflow" in meta["tags"]
    files = {d["split"]: d["path"] for d in meta["configs"][0]["data_files"]}
    assert files == {n: f"data/{n}-00000-of-00001.parquet" for n in splits}
    info = meta["dataset_info"]
    assert {s["name"]: s["num_examples"] for s in info["splits"]} == {n: len(r) for n, r in splits.items()}
    for name in splits:
        t = manifest.split("default", name).tfas
        assert f"| `{name}` |" in text and f"{t['tfas']:.2f}" in text
        assert f'load_dataset("org/taskflow-test", split="{name}")' in text
    for hidden in ("reference_answer", "proof_script", "proof_report"):
        assert hidden in text.split("## What the evaluated agent must not see")[1]


def test_two_writes_are_byte_identical(built, tmp_path):
    folder, splits, manifest, target = built
    again = write_release(tmp_path / "again", name="taskflow-test", version="v0.1", splits=splits,
                          target_path=target, provenance=PROVENANCE, repo_id="org/taskflow-test")
    a = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    b = {p.relative_to(tmp_path / "again").as_posix(): p.read_bytes() for p in (tmp_path / "again").rglob("*")
         if p.is_file()}
    assert a == b
    assert again.to_dict() == manifest.to_dict()


def test_written_release_verifies(built):
    report = verify_release(built[0])
    assert report.ok, [str(e) for e in report.errors]
    assert report.rows == sum(len(r) for r in built[1].values())


def test_rows_share_source_task_hash_across_conditions(built):
    _, splits, _, _ = built
    by_cond = {name: [r["source_task_sha256"] for r in rows] for name, rows in splits.items()}
    first = next(iter(by_cond.values()))
    assert all(v == first for v in by_cond.values())
    assert len(set(first)) == len(first)


def test_writer_refuses_tampered_rows_and_wrong_tfas(built, tmp_path):
    _, splits, _, target = built
    rows = [dict(r) for r in splits["single_prompt"]]
    rows[0]["original_prompt"] += " edited"
    with pytest.raises(InputError, match="row hash does not match"):
        write_release(tmp_path / "a", name="t", version="v1", splits={"single_prompt": rows}, target_path=target,
                      provenance=PROVENANCE)
    with pytest.raises(VerifyError, match="TFAS given for split 'single_prompt'"):
        write_release(tmp_path / "b", name="t", version="v1", splits={"single_prompt": splits["single_prompt"]},
                      target_path=target, provenance=PROVENANCE,
                      tfas={"single_prompt": {"tfas": 50.0, "S_L": 0.5, "S_T": 0.5, "S_R": 0.5}})
    with pytest.raises(Exception, match="not valid on the Hub"):
        write_release(tmp_path / "c", name="t", version="v1", splits={"QA-first": splits["single_prompt"]},
                      target_path=target, provenance=PROVENANCE)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_schema_check_catches_what_datasets_would_cast_silently(tmp_path):
    import pyarrow as pa
    feats = session_features()
    schema = feats.arrow_schema
    bad = schema.set(schema.get_field_index("n_turns"), pa.field("n_turns", pa.float64()))
    diffs = schema_differences(feats, bad)
    assert diffs == ["column 'n_turns' has type double in the file, declared int64"]
    nested = schema.set(schema.get_field_index("turns"), pa.field("turns", pa.list_(pa.struct(
        [pa.field("turn_index", pa.int32()), *[f for f in schema.field("turns").type.value_type][1:]]))))
    assert any("turns" in d for d in schema_differences(feats, nested))
    assert schema_differences(feats, schema.remove(0)) == ["column 'instance_id' is declared but missing from the file"]


def test_manifest_loads_and_round_trips(built):
    folder, _, manifest, _ = built
    loaded, raw = load_manifest(folder / manifest.path_in_release)
    assert loaded.to_bytes() == raw
    assert np.isclose(loaded.split("default", "split_prompt").tfas["S_L"], manifest.split("default", "split_prompt").tfas["S_L"])


def test_real_proof_report_round_trips_losslessly(tmp_path, monkeypatch):
    """A swe_taskflow.proofs.ProofReport (killed run: exit code None) survives write + load_dataset."""
    import datasets
    from swe_taskflow.features import join_proof_report
    from swe_taskflow.proofs import ProofReport
    from swe_taskflow.rows import build_row
    from swe_taskflow.schema import QAItem, Session, Turn
    task = hand_written_tasks()[0]
    report = ProofReport(status="timeout", reason="hand-written fixture", sandbox="bwrap", image="host",
                         exit_codes=(0, None), commands=(("sh", "-c", "grep -n x"),), duration_s=1.25,
                         limits={"memory_mb": 512}, runs={"base": {"note": "hand-written"}, "patched": None})
    q = QAItem(question_id="q1", instance_id=task.instance_id, question="[hand-written] q?",
               reference_answer="[hand-written] a", proof_report=report.to_dict(), generator={"provenance": "hand-written"})
    row = build_row(task, Session(task.instance_id, "qa_only", (Turn(0, "qa", q.question, "question", (), "q1"),),
                                  question_pool="sol"), None, [q])
    uniform_target(tmp_path / "t.json")
    write_release(tmp_path / "r", name="pr", version="v1", splits={"qa_only_sol": [row]}, target_path=tmp_path / "t.json",
                  provenance={})
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    loaded = datasets.load_dataset(str(tmp_path / "r"), split="qa_only_sol", cache_dir=str(tmp_path / "c"))[0]
    stored = loaded["questions"][0]["proof_report"]
    assert stored["exit_codes"] == [0, None] and stored["status"] == "timeout"
    assert join_proof_report(stored) == json.loads(json.dumps(report.to_dict()))
    assert loaded == row and verify_release(tmp_path / "r").ok
