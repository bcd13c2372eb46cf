"""Stage ``questions``: the candidate repository questions, from pools or mined by an LLM."""

from __future__ import annotations

import dataclasses
from collections import Counter

from swe_taskflow.errors import ConfigError, InputError
from swe_taskflow.jsonl import write_json, write_jsonl

from .common import need_module, read_pool, read_tasks
from .repos import materialize


def _from_pools(ctx, task_ids: set[str]):
    items, unknown = [], []
    for pool in ctx.recipe.questions.pools:
        for q in read_pool(ctx.recipe.resolve(pool.path)):
            q = dataclasses.replace(q, pool=pool.name, status="candidate", reason="", proof_report=None)
            (items if q.instance_id in task_ids else unknown).append(q)
    return items, unknown


def _generate(ctx, tasks):
    """Mine questions from each task's solving trajectory; a task without one, or whose run did not solve
    it, gets one rejected record saying why (and a row in ``trajectories.jsonl``)."""
    sec = ctx.recipe.questions
    qa = need_module("builder.qa", "issue 4, generation")
    llm = need_module("builder.llm", "issue 4, generation")
    store = llm.ResponseStore(str(ctx.recipe.resolve(sec.responses))) if sec.responses else None
    backend = llm.get_backend(sec.llm, store=store, **({"model": sec.model} if sec.model else {}))
    from builder.proofs.pool import repo_for

    repos_dir, _ = materialize(ctx.recipe, ctx.cache.root, tasks)
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
                repo = repo_for(repos_dir, task.instance_id, task.repo)
            except InputError:   # a name that would leave repos_dir: no repository to read
                repo = None
            got = qa.generate_questions(task, traj, repo, backend,
                                        max_questions=sec.max_questions, resolved=resolved.get(task.instance_id))
        skipped = len(got) == 1 and got[0].question_id.endswith(("::no-trajectory", "::trajectory-not-solving"))
        status_rows.append({"instance_id": task.instance_id, "trajectory": traj.name if traj else None,
                            "resolved": resolved.get(task.instance_id),
                            "status": "skipped" if skipped else "mined",
                            "reason": got[0].reason if skipped else ""})
        items.extend(dataclasses.replace(q, pool=q.pool or "generated") for q in got)
        ctx.progress.advance(failed=int(skipped))
    write_jsonl(ctx.out / "trajectories.jsonl", status_rows)
    write_json(ctx.out / "_volatile" / "llm_usage.json", backend.ledger.to_dict())
    ctx.summary["trajectories"] = dict(sorted(Counter(
        r["reason"].split(":")[0] if r["status"] == "skipped" else "mined" for r in status_rows).items()))
    return items, []


def run(ctx) -> None:
    tasks = [t for t in read_tasks(ctx.input("ingest")) if t.status == "ok"]
    mode = ctx.recipe.questions.mode
    if mode == "none":
        items, unknown = [], []
    elif mode == "pool":
        items, unknown = _from_pools(ctx, {t.instance_id for t in tasks})
        ctx.progress.set_total(len(items) + len(unknown))
        ctx.progress.advance(len(items) + len(unknown), failed=len(unknown))
    else:
        items, unknown = _generate(ctx, tasks)
    seen: set[str] = set()
    for q in items:
        if q.question_id in seen:
            raise ConfigError("duplicate question id across pools", field="question_id", actual=q.question_id)
        seen.add(q.question_id)
    write_jsonl(ctx.out / "pool.jsonl", (q.to_dict() for q in items))
    write_jsonl(ctx.out / "unknown_task.jsonl",
                ({**q.to_dict(), "status": "rejected", "reason": "unknown-task"} for q in unknown))
    ctx.summary.update(mode=mode, candidates=len(items), unknown_task=len(unknown),
                       by_pool=dict(sorted(Counter(q.pool for q in items).items())))
