"""Stage ``questions``: the candidate repository questions, from pools or mined by an LLM."""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass

from ... import llm, qa
from ...proofs.pool import repo_for
from swe_taskflow.errors import ConfigError, InputError, ReplayMissError
from swe_taskflow.jsonl import read_records
from swe_taskflow.schema import QAItem

from ..repos import materialize
from ..stage_data import IngestOutputs, QuestionsOutputs as Outputs, QuestionsSummary as Summary


@dataclass(frozen=True)
class Inputs:
    ingest: IngestOutputs


def _from_pools(recipe, task_ids: set[str]) -> tuple[list[QAItem], list[QAItem]]:
    items, unknown = [], []
    for pool in recipe.questions.pools:
        for q in read_records(recipe.resolve(pool.path), QAItem, unique="question_id"):
            q = dataclasses.replace(q, pool=pool.name, status="candidate", reason="", proof_report=None)
            (items if q.instance_id in task_ids else unknown).append(q)
    return items, unknown


def _generate(ctx, tasks) -> Outputs:
    """Mine questions from each task's solving trajectory; a task without one, or whose run did not solve
    it, gets one rejected record saying why (and a row in ``trajectories``).

    Offline (backend ``replay``) a task whose request has no recorded reply gets one rejected
    ``no-recorded-reply`` record naming the stage and request key, and the build goes on: nothing is
    invented for it, and the report counts such tasks. Without ``[repos]`` questions are mined from the
    trajectory alone (``repo_checked`` false in each generator record) and stay unproved."""
    sec = ctx.recipe.questions
    backend = llm.backend_from(sec.llm, ctx.recipe.resolve)
    has_repos = bool(ctx.recipe.repos.path or ctx.recipe.repos.bundled)
    repos_dir = materialize(ctx.recipe, ctx.work, tasks)[0] if has_repos else None
    traj_dir = ctx.recipe.resolve(sec.trajectories)
    resolved = qa.load_resolved(ctx.recipe.resolve(sec.resolved)) if sec.resolved else {}
    items, status_rows = [], []
    ctx.progress.set_total(len(tasks))
    for task in tasks:
        traj = qa.find_trajectory(traj_dir, task.instance_id)
        if traj is None:
            got = [qa.skipped_task(task.instance_id, "no-trajectory", f"no trajectory in {sec.trajectories}")]
        else:
            try:
                repo = repo_for(repos_dir, task.instance_id, task.repo) if repos_dir is not None else None
            except InputError:   # a name that would leave repos_dir: no repository to read
                repo = None
            try:
                got = qa.generate_questions(task, traj, repo, backend, max_questions=sec.max_questions,
                                            resolved=resolved.get(task.instance_id))
            except ReplayMissError as exc:   # replay only: no recorded reply, so no question (never invented)
                got = [qa.skipped_task(task.instance_id, "no-recorded-reply",
                                      f"{exc.message} in {sec.llm.responses}")]   # recipe-relative: no host path
        skipped = len(got) == 1 and qa.skip_kind(got[0]) is not None
        status_rows.append({"instance_id": task.instance_id, "trajectory": traj.name if traj else None,
                            "resolved": resolved.get(task.instance_id),
                            "status": "skipped" if skipped else "mined",
                            "reason": got[0].reason if skipped else ""})
        items.extend(dataclasses.replace(q, pool=q.pool or "generated") for q in got)
        ctx.progress.advance(failed=int(skipped))
    trajectories = dict(sorted(Counter(
        r["reason"].split(":")[0] if r["status"] == "skipped" else "mined" for r in status_rows).items()))
    return Outputs(pool=items, trajectories=status_rows, llm_usage=backend.ledger.to_dict(),
                   summary=Summary(trajectories=trajectories))


def run(inputs: Inputs, ctx) -> Outputs:
    tasks = [t for t in inputs.ingest.tasks if t.status == "ok"]
    mode = ctx.recipe.questions.mode
    unknown: list[QAItem] = []
    if mode == "none":
        out = Outputs()
    elif mode == "pool":
        items, unknown = _from_pools(ctx.recipe, {t.instance_id for t in tasks})
        out = Outputs(pool=items)
        ctx.progress.set_total(len(items) + len(unknown))
        ctx.progress.advance(len(items) + len(unknown), failed=len(unknown))
    else:
        out = _generate(ctx, tasks)
    seen: set[str] = set()
    for q in out.pool:
        if q.question_id in seen:
            raise ConfigError("duplicate question id across pools", field="question_id", actual=q.question_id)
        seen.add(q.question_id)
    out.unknown_task = [{**q.to_dict(), "status": "rejected", "reason": "unknown-task"} for q in unknown]
    out.summary = dataclasses.replace(out.summary, mode=mode, candidates=len(out.pool), unknown_task=len(unknown),
                                      by_pool=dict(sorted(Counter(q.pool for q in out.pool).items())))
    return out
