"""What a build did not run is said in the manifest (provenance.not_run), the card and the report; a build that ran
everything gets no such key, so other releases are unchanged."""

from __future__ import annotations

from types import SimpleNamespace

from builder.pipeline.stage_data import AugmentSummary
from builder.pipeline.stages.write import not_run, question_rows
from builder.qa import skipped_task
from swe_taskflow.schema import QAItem, Task


def _recipe(proofs=True, mode="generate", llm="replay"):
    return SimpleNamespace(proofs=SimpleNamespace(enabled=proofs), questions=SimpleNamespace(mode=mode, llm=SimpleNamespace(backend=llm)),
                           conditions=SimpleNamespace(pool="generated"), pool_names=lambda: ["generated"])


def _inputs(trajectories, augment, validated=(), tasks=()):
    return SimpleNamespace(questions=SimpleNamespace(trajectories=trajectories),
                           augment=SimpleNamespace(summary=augment), proofs=SimpleNamespace(validated=list(validated)),
                           ingest=SimpleNamespace(tasks=list(tasks)))


def test_offline_verified_build_names_each_part_not_run():
    traj = [{"instance_id": "a", "status": "skipped", "reason": "no-recorded-reply: no recorded response ..."},
            {"instance_id": "b", "status": "skipped", "reason": "no-trajectory: none"},
            {"instance_id": "c", "status": "mined", "reason": ""}]
    aug = AugmentSummary(enabled=True, kinds=["execute", "planning", "review"], sandbox={"sandbox": "none"})
    lines = not_run(_inputs(traj, aug), _recipe(proofs=False))
    assert len(lines) == 3
    assert lines[0].startswith("proofs: not run") and "none is accepted" in lines[0]
    assert lines[1].startswith("question generation: 1 solving trajectories have no recorded reply")
    assert "execute, review" in lines[2] and "not run" in lines[2]


def test_a_build_that_ran_everything_has_nothing_to_say():
    aug = AugmentSummary(enabled=True, kinds=["execute"], sandbox={"sandbox": "docker"})
    assert not_run(_inputs([], aug), _recipe(mode="pool")) == []
    assert not_run(_inputs([], AugmentSummary(enabled=False)), _recipe(proofs=False, mode="none")) == []


def test_tasks_with_no_mined_question_are_counted_by_why_not_listed_as_candidates():
    tasks = [Task(instance_id=i, source="s", source_revision="", repo="o/r", base_commit="c", original_prompt="p",
                  problem_statement="p") for i in ("a", "b", "c")]
    validated = [skipped_task("a", "no-recorded-reply", "no recorded response"),
                 skipped_task("b", "no-trajectory", "none"),
                 QAItem(question_id="c::q1", instance_id="c", question="Where?", reference_answer="x.py",
                        status="rejected", reason="proof failed")]
    qr = question_rows(_inputs([], AugmentSummary(), validated, tasks), _recipe(), {})
    assert [t["instance_id"] for t in qr["tasks_with_candidates"]] == ["c"]
    assert qr["tasks_without_questions"] == {"every candidate was rejected": 1,
                                             "no question mined (no-recorded-reply)": 1,
                                             "no question mined (no-trajectory)": 1}
