"""Two question pools in one build (the paper's release layout): one split per QA condition and pool,
named ``<condition>_<pool>``, each built from its own pool only; ``tfas_optimized`` from the selection
pool with the ``paper`` preset. Uses the example's tasks, its hand-written task and questions (the pool is
split in two into tmp_path; every question is about ``swe-taskflow__ticketdesk-1``) and a real proof sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builder.pipeline.build import build
from swe_taskflow.jsonl import read_jsonl, write_jsonl

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "builder" / "data" / "example"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pools_build(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pools")
    pool = [obj for _, obj in read_jsonl(DATA / "pool.jsonl")]
    write_jsonl(tmp / "sol.jsonl", pool[0::2])
    write_jsonl(tmp / "terra.jsonl", pool[1::2])
    with_questions = list(dict.fromkeys(q["instance_id"] for q in pool))[:4]
    without = next(obj["instance_id"] for _, obj in read_jsonl(DATA / "tasks.jsonl")
                   if obj["instance_id"] not in {q["instance_id"] for q in pool})
    ids = ", ".join(f'"{i}"' for i in [*with_questions, without])
    recipe = tmp / "recipe.toml"
    recipe.write_text(f"""
[release]
name = "swe-taskflow-pools-test"
version = "0.0.1"
[source]
spec = "{DATA / 'tasks.jsonl'}"
source = "swe-bench-pro"
instance_ids = [{ids}]
[classifier]
name = "embedded"
device = "cpu"
[questions]
mode = "pool"
[[questions.pools]]
name = "sol"
path = "sol.jsonl"
[[questions.pools]]
name = "terra"
path = "terra.jsonl"
[repos]
bundled = "{DATA / 'repo'}"
bundled_repo = "swe-taskflow/ticketdesk"
[proofs]
timeout_s = 30
gold_patch = false
[conditions]
pool = "sol"
pools = ["sol", "terra"]
[select]
preset = "paper"
restarts = 4
min_placement_share = 0.0
""")
    return build(recipe, tmp / "out", quiet=True), tmp, pool


def test_twelve_splits_each_from_its_own_pool(pools_build):
    outcome, tmp, pool = pools_build
    manifest = json.loads(next((outcome.out / "release" / "manifests").glob("*.json")).read_text())
    splits = {s["name"]: s for s in manifest["splits"] if s["config"] == "default"}
    expected = ["single_prompt", "split_prompt", "split_prompt_concat",
                *[f"{c}_{p}" for c in ("qa_first", "qa_last", "qa_random", "qa_only") for p in ("sol", "terra")],
                "tfas_optimized"]
    assert sorted(splits) == sorted(expected)
    assert splits["qa_first_terra"]["condition"] == "qa_first" and splits["qa_first_terra"]["question_pool"] == "terra"
    assert splits["tfas_optimized"]["question_pool"] == "sol" and splits["split_prompt"]["question_pool"] is None
    pool_of = {q["question_id"]: q_pool for q_pool, qs in (("sol", pool[0::2]), ("terra", pool[1::2]))
               for q in qs}
    conditions = outcome.out / "cache" / "stages"
    for name, spec in splits.items():
        rows = [obj for path in conditions.glob(f"*/*/conditions/{name}.jsonl") for _, obj in read_jsonl(path)]
        assert rows, name
        qids = [t["question_id"] for r in rows if r["session"] for t in r["session"]["turns"] if t["kind"] == "qa"]
        if spec["question_pool"]:
            assert qids and all(pool_of[q] == spec["question_pool"] for q in qids), name
        else:
            assert not qids, name


def test_selection_config_is_reported_beside_every_tfas(pools_build):
    outcome, _, _ = pools_build
    md = (outcome.out / "report" / "report.md").read_text()
    assert "TFAS-optimized, preset paper (overridden: min_placement_share=0.0, restarts=4)" in md
    assert "fixed: every question of the task, then the 3 issue turns; question pool terra" in md
    assert "QA turn intents: declared vs classified" in md
    card = (outcome.out / "release" / "README.md").read_text()
    assert "| candidate selection |" in card and "preset paper (overridden: min_placement_share=0.0, restarts=4)" in card
    sel = json.loads((outcome.out / "report" / "report.json").read_text())["selection"]
    assert sel["preset"] == "paper"
    assert all(c["achieved"] >= c["bound"] for c in sel["constraints"].values())
    assert sel["constraints"]["full_split"]["bound"] == sel["tasks"]     # every task keeps its 3 issue turns


def test_verify_prints_the_selection_beside_each_tfas(pools_build, capsys):
    from builder.cli import main

    outcome, _, _ = pools_build
    assert main(["verify", str(outcome.out / "release")]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    i = next(k for k, line in enumerate(lines) if " tfas_optimized " in line)
    assert lines[i + 1].strip().startswith(
        "selection: TFAS-optimized, preset paper (overridden: min_placement_share=0.0, restarts=4)")
    assert "selection: fixed: the task's questions only; question pool terra" in out
