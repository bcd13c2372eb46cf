"""The build's ``questions`` stage in ``generate`` mode: every task gets a trajectory status, and a run
that did not solve its task is never sent to the model."""

from __future__ import annotations

import json
from types import SimpleNamespace

from builder.pipeline.recipe import load_recipe
from builder.pipeline.stage_data import IngestOutputs
from builder.pipeline.stages import questions
from swe_taskflow.schema import Task


class _Progress:
    done = failed = total = 0

    def set_total(self, n):
        self.total = n

    def advance(self, n=1, *, failed=0):
        self.done += n
        self.failed += failed


def _traj(path, iid, exit_status):
    """Hand-written trajectories in mini-swe-agent's layout (not real runs)."""
    path.write_text(json.dumps({"instance_id": iid, "trajectory_format": "mini-swe-agent-1",
                                "info": {"exit_status": exit_status, "submission": "diff --git a/x b/x\n"},
                                "messages": [{"role": "user", "content": "<pr_description>x</pr_description>"}]}))


def test_generate_mode_skips_unsolved_and_missing_trajectories_with_a_reason(tmp_path):
    (tmp_path / "repos" / "o__r").mkdir(parents=True)
    (tmp_path / "repos" / "o__r" / "x.py").write_text("X = 1\n")
    trajs = tmp_path / "trajs"
    trajs.mkdir()
    _traj(trajs / "a__a-1.traj.json", "a__a-1", "LimitsExceeded")
    _traj(trajs / "b__b-2.traj.json", "b__b-2", "Submitted")
    (tmp_path / "results.json").write_text(json.dumps({"b__b-2": False}))
    (tmp_path / "store").mkdir()
    recipe = tmp_path / "r.toml"
    recipe.write_text('[release]\nname = "x"\nversion = "1"\n[source]\nspec = "tasks.jsonl"\n'
                      '[questions]\nmode = "generate"\ntrajectories = "trajs"\nresolved = "results.json"\n'
                      '[questions.llm]\nbackend = "replay"\nmodel = "m"\nresponses = "store"\n[repos]\npath = "repos"\n')
    tasks = [Task(instance_id=i, source="x", source_revision="", repo="o/r", base_commit="", original_prompt="p",
                  problem_statement="p") for i in ("a__a-1", "b__b-2", "c__c-3")]
    ctx = SimpleNamespace(name="questions", recipe=load_recipe(recipe), progress=_Progress(), work=tmp_path / "work")
    # an LLM call would be a replay miss: none is made
    out = questions.run(questions.Inputs(ingest=IngestOutputs(tasks=tasks)), ctx)
    status = {r["instance_id"]: r for r in out.trajectories}
    assert {k: v["status"] for k, v in status.items()} == {"a__a-1": "skipped", "b__b-2": "skipped", "c__c-3": "skipped"}
    assert "LimitsExceeded" in status["a__a-1"]["reason"]
    assert "did not resolve" in status["b__b-2"]["reason"] and status["b__b-2"]["resolved"] is False
    assert status["c__c-3"]["reason"].startswith("no-trajectory")
    assert sorted(q.question_id for q in out.pool) == ["a__a-1::trajectory-not-solving",
                                                       "b__b-2::trajectory-not-solving", "c__c-3::no-trajectory"]
    assert all(q.status == "rejected" for q in out.pool)
    assert out.summary.trajectories == {"no-trajectory": 1, "trajectory-not-solving": 2}
    assert ctx.progress.failed == 3


def test_replay_without_a_recorded_reply_records_the_task_and_goes_on(tmp_path, trajectory_file):
    """Offline generate mode (the Verified recipe): a real solving trajectory whose request the store does not
    hold gets one rejected ``no-recorded-reply`` record naming the stage (nothing invented), and no ``[repos]``
    is needed to mine from a trajectory."""
    from pathlib import Path

    from builder.sources import load_tasks
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "swe-bench-verified" / "verified_sample.jsonl"
    tasks = [t for t in load_tasks(str(fixture)).tasks if t.instance_id in ("astropy__astropy-12907",
                                                                            "django__django-12419")]
    trajs = tmp_path / "trajs"
    trajs.mkdir()
    (trajs / trajectory_file.name).write_bytes(trajectory_file.read_bytes())
    (tmp_path / "results.json").write_text(json.dumps({"instances": [
        {"instance_id": "astropy__astropy-12907", "resolved": True},
        {"instance_id": "django__django-12419", "resolved": False}]}))
    (tmp_path / "store").mkdir()
    recipe = tmp_path / "r.toml"
    recipe.write_text('[release]\nname = "x"\nversion = "1"\n[source]\nspec = "tasks.jsonl"\n'
                      '[questions]\nmode = "generate"\ntrajectories = "trajs"\nresolved = "results.json"\n'
                      '[questions.llm]\nbackend = "replay"\nmodel = "m"\nresponses = "store"\n[proofs]\nenabled = false\n')
    ctx = SimpleNamespace(name="questions", recipe=load_recipe(recipe), progress=_Progress(), work=tmp_path / "work")
    out = questions.run(questions.Inputs(ingest=IngestOutputs(tasks=tasks)), ctx)
    status = {r["instance_id"]: r for r in out.trajectories}
    assert status["astropy__astropy-12907"]["status"] == "skipped"
    reason = status["astropy__astropy-12907"]["reason"]
    assert reason.startswith("no-recorded-reply: no recorded response for stage 'qa.generate'") and "in store" in reason
    assert str(tmp_path) not in reason   # the recipe's relative store path, no host path
    assert status["django__django-12419"]["reason"].startswith("no-trajectory")
    assert [(q.question_id, q.status, q.question) for q in out.pool] == [
        ("astropy__astropy-12907::no-recorded-reply", "rejected", ""),
        ("django__django-12419::no-trajectory", "rejected", "")]
    assert out.summary.trajectories == {"no-recorded-reply": 1, "no-trajectory": 1}
    assert out.llm_usage == {} or all(v.get("calls", 0) == 0 for v in out.llm_usage.values())
