"""`evaluate import` results: keyed by what ran, written whole or not at all, saying what happened.

Job folders are hand-written (tests/support/harbor_jobs.py) against the hand-written fixture release."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from builder.cli import main as cli_main
from builder.evaluation.export import export_harbor
from tests.support.harbor_fixture import exported_fixture_release
from tests.support.harbor_jobs import edit_result, write_trial

CONDITION = "qa_last"


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return exported_fixture_release(tmp_path_factory.mktemp("eval-results"), CONDITION)


@pytest.fixture
def world(base, tmp_path):
    rel, ds = base
    release = tmp_path / "release"
    shutil.copytree(rel, release)
    return {"tmp": tmp_path, "release": release, "ds": ds}


def _job(world, name, **kw):
    job = world["tmp"] / "jobs" / name
    for k in range(2):
        write_trial(job, world["ds"] / f"fixture__harbor-{k}", f"fixture__harbor-{k}__{name}", **kw)
    return job


def _run(world, capsys, jobs, *extra, out=None):
    args = ["evaluate", "import", *map(str, jobs), "--release", str(world["release"])]
    if out is not None:
        args += ["--out", str(out)]
    code = cli_main([*args, *extra])
    return code, capsys.readouterr()


def _traj_rows(release: Path) -> list[dict]:
    return [r for f in sorted((release / "trajectories").glob("*.parquet")) for r in pq.read_table(f).to_pylist()]


def test_two_agents_with_one_model_never_merge(world, capsys):
    a = _job(world, "a", agent="agent-a", model="gpt-x")
    b = _job(world, "b", agent="agent-b", model="gpt-x", resolved=0.0)
    code, cap = _run(world, capsys, [a, b], out=world["tmp"] / "r")
    assert code == 0, cap.err
    doc = json.loads((world["tmp"] / "r" / "results.json").read_text())
    groups = {g["agent"]: g for g in doc["groups"]}
    assert groups["agent-a"]["resolve_rate"]["mean"] == 1.0 and groups["agent-b"]["resolve_rate"]["mean"] == 0.0
    labels = sorted({r["model"] for r in _traj_rows(world["release"])})
    assert len(labels) == 2 and labels[0].startswith("agent-a/gpt-x#") and labels[1].startswith("agent-b/gpt-x#")


def test_agent_settings_are_part_of_what_ran(world, capsys):
    a = _job(world, "a", kwargs={"step_limit": 5})
    b = _job(world, "b", kwargs={"step_limit": 50}, resolved=0.0)
    c = _job(world, "c", kwargs={"step_limit": 5}, resolved=0.0)   # the same runner again: a second run
    code, cap = _run(world, capsys, [a, b, c], "--no-trajectories", out=world["tmp"] / "r")
    assert code == 0, cap.err
    doc = json.loads((world["tmp"] / "r" / "results.json").read_text())
    assert len(doc["groups"]) == 2
    five = next(g for g in doc["groups"] if g["trials"] == 4)
    assert five["runs"] == 2 and five["jobs"] == ["a", "c"]
    assert (five["resolve_rate"]["min"], five["resolve_rate"]["max"]) == (0.0, 1.0)
    assert next(t for t in doc["trials"] if t["job"] == "c")["run"] == 1     # runs follow the command line


def test_out_may_be_empty_and_a_second_run_replaces_it(world, capsys):
    job = _job(world, "a")
    out = world["tmp"] / "results"
    out.mkdir()
    code, cap = _run(world, capsys, [job], "--no-trajectories", out=out)
    assert code == 0, cap.err
    first = (out / "results.json").read_text()
    code, cap = _run(world, capsys, [job], "--no-trajectories", out=out)
    assert code == 0, cap.err
    assert (out / "results.json").read_text() == first          # same inputs, same results
    assert sorted(p.name for p in out.parent.iterdir() if p.name.startswith(".")) == []


def test_a_foreign_non_empty_out_is_refused_with_why(world, capsys):
    job = _job(world, "a")
    out = world["tmp"] / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    code, cap = _run(world, capsys, [job], out=out)
    assert code == 2 and "not empty" in cap.err
    assert [p.name for p in out.iterdir()] == ["notes.txt"]
    results = world["tmp"] / "r"                    # an earlier results folder with a file of the user's in it
    assert _run(world, capsys, [job], "--no-trajectories", out=results)[0] == 0
    (results / "notes.txt").write_text("mine")
    code, cap = _run(world, capsys, [job], "--no-trajectories", out=results)
    assert code == 2 and "not empty" in cap.err and (results / "notes.txt").read_text() == "mine"


def test_a_failed_import_leaves_nothing_behind(world, capsys):
    job = _job(world, "a")
    out = world["tmp"] / "r"
    assert _run(world, capsys, [job], out=out)[0] == 0
    before = (out / "results.json").read_text()
    manifests = sorted(p.read_bytes() for p in (world["release"] / "manifests").glob("*.json"))
    for t in job.iterdir():        # new verdicts, but the trajectories are already there: the import fails late
        edit_result(t, lambda d: d["step_results"][0]["verifier_result"]["rewards"].update(resolved=0.0))
    code, cap = _run(world, capsys, [job], out=out)
    assert code == 2 and "already in the release" in cap.err
    assert (out / "results.json").read_text() == before
    assert sorted(p.name for p in out.iterdir()) == sorted(json.loads(before)["plots"] + ["results.json"])
    assert [p.name for p in out.parent.iterdir() if p.name.startswith(".")] == []
    assert sorted(p.read_bytes() for p in (world["release"] / "manifests").glob("*.json")) == manifests


def test_trial_errors_are_said_on_the_summary_line(world, capsys):
    job = _job(world, "a")
    t = next(job.iterdir())
    edit_result(t, lambda d: d.update(exception_info={"exception_type": "AgentTimeoutError",
                                                      "exception_message": "late", "exception_traceback": "",
                                                      "occurred_at": "2026-01-01T00:00:00Z"}))
    code, cap = _run(world, capsys, [job], "--no-trajectories", out=world["tmp"] / "r")
    assert code == 0, cap.err
    line = next(x for x in cap.out.splitlines() if x.startswith(CONDITION))
    assert "errors 1" in line


def test_several_jobs_default_results_folder_is_not_inside_a_job(world, capsys, monkeypatch):
    from builder.cli.evaluate import default_out
    a, b = _job(world, "a"), _job(world, "b", agent="other")
    assert default_out([str(a)]) == str(a / "swe-taskflow")
    monkeypatch.chdir(world["tmp"])
    code, cap = _run(world, capsys, [a, b], "--no-trajectories")
    assert code == 0, cap.err
    assert (world["tmp"] / "swe-taskflow-results" / "results.json").is_file()
    assert not (a / "swe-taskflow").exists() and not (b / "swe-taskflow").exists()


def test_results_label_per_turn_figures_and_draw_the_plots(world, capsys):
    job = _job(world, "a")
    code, cap = _run(world, capsys, [job], "--no-trajectories", out=world["tmp"] / "r")
    assert code == 0, cap.err
    doc = json.loads((world["tmp"] / "r" / "results.json").read_text())
    g = doc["groups"][0]
    assert [(t["turn_index"], t["kind"], t["label"]) for t in g["answer_accuracy_by_turn"]] == [(3, "qa", "turn 4 (qa)")]
    assert g["answer_accuracy_by_kind"]["qa"]["verdicts"] == {"unjudged": 2}    # no judge: no accuracy, not 0
    assert g["answer_accuracy_by_kind"]["qa"]["mean"] is None
    assert [p["turn_index"] for p in g["checkpoint_points"]] == [None, 0, 1, 2]
    assert set(doc["plots"]) >= {"resolve.png", "checkpoints.png", "accuracy_by_kind.png", "accuracy_vs_resolve.png"}
    for name in doc["plots"]:
        assert (world["tmp"] / "r" / name).stat().st_size > 5000


def test_tokens_and_cost_relative_to_single_prompt(base, tmp_path, capsys):
    rel, _ = base
    release = tmp_path / "release"
    shutil.copytree(rel, release)
    jobs = []
    for cond, tokens in (("single_prompt", 100), ("split_prompt", 250)):
        export_harbor(release, cond, tmp_path / f"ds-{cond}")
        job = tmp_path / "jobs" / cond
        for k in range(2):
            write_trial(job, tmp_path / f"ds-{cond}" / f"fixture__harbor-{k}", f"t{k}", tokens=tokens, cost=0.5)
        jobs.append(str(job))
    code = cli_main(["evaluate", "import", *jobs, "--release", str(release), "--out", str(tmp_path / "r"),
                     "--no-trajectories"])
    assert code == 0, capsys.readouterr().err
    doc = json.loads((tmp_path / "r" / "results.json").read_text())
    rel_rows = {r["condition"]: r for r in doc["relative_to_single_prompt"]}
    assert rel_rows["single_prompt"]["tokens_ratio"] == 1.0
    # split_prompt: 3 issue steps of 250+1 tokens against single_prompt's 1 step of 100+1
    assert rel_rows["split_prompt"]["tokens_ratio"] == pytest.approx(3 * 251 / 101)
    assert rel_rows["split_prompt"]["cost_ratio"] == pytest.approx(3.0)
    assert "cost.png" in doc["plots"]
