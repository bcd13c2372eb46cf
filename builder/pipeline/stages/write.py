"""Stage ``write``: release rows for every condition, written as a release folder (builder.release)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from swe_taskflow.jsonl import read_jsonl
from swe_taskflow.schema import QAItem, Session

from ..hashing import sha256_file
from .common import need_module, read_splits, read_tasks


def condition_files(ctx) -> dict[str, Path]:
    """Split name -> its ConditionRow JSONL, in the recipe's order."""
    found = {p.stem: p for p in (ctx.input("assemble") / "conditions").glob("*.jsonl")}
    found.update({p.stem: p for p in (ctx.input("select") / "conditions").glob("*.jsonl")})
    return {s.split: found[s.split] for s in ctx.recipe.splits() if s.split in found}


def split_rules(recipe) -> dict[str, str]:
    """Split -> how its candidates were selected (printed beside every TFAS: report, card)."""
    from swe_taskflow.select_config import describe_split

    from ..recipe_augment import selection_config

    return {s.split: describe_split(s.condition, pool=s.pool, seed=recipe.conditions.seed,
                                    config=selection_config(recipe)) for s in recipe.splits()}


def provenance(ctx) -> dict:
    recipe = ctx.recipe
    summaries = {name: json.loads((path / "summary.json").read_text()) for name, path in ctx.inputs.items()
                 if (path / "summary.json").exists()}
    proofs = summaries.get("proofs", {})
    return {
        "source": json.loads((ctx.input("ingest") / "provenance.json").read_text()),
        "recipe": {"file": recipe.path.name, "sha256": sha256_file(recipe.path), "content": recipe.raw},
        "models": {
            "classifier": summaries.get("classify_turns", {}).get("classifier", {}),
            "splitter": summaries.get("split", {}).get("splitter", {}),
            "questions": {"mode": recipe.questions.mode, "pools": [p.name for p in recipe.questions.pools],
                          "llm": recipe.questions.llm or None, "model": recipe.questions.model or None},
            "proofs": {k: proofs.get(k) for k in ("sandbox", "image", "image_id", "gold_patch", "repos")},
        },
        "prompts": {"splitter": summaries.get("split", {}).get("splitter", {}).get("prompt_sha256"),
                    "classifier": summaries.get("classify_turns", {}).get("classifier", {}).get("prompt_sha256")},
        "seeds": {"conditions": recipe.conditions.seed, "select": recipe.select.seed},
        "selection": split_rules(recipe),
        "pipeline": {name: json.loads((path / ".stage.json").read_text())["output_hash"]
                     for name, path in ctx.inputs.items() if (path / ".stage.json").exists()},
    }


def question_rows(ctx, out_splits: dict[str, list]) -> dict:
    """Which rows carry questions and why the others carry none, as data (the card and report render it).

    A question belongs to the one task whose repository it is about (its pool row names that task);
    every other task carries none: no candidate names it, or every candidate was rejected.
    """
    tasks = {t.instance_id: t for t in read_tasks(ctx.input("ingest"))}
    by_task: dict[str, dict] = {}
    for _, q in read_jsonl(ctx.input("proofs") / "pool_validated.jsonl"):
        entry = by_task.setdefault(q["instance_id"], {"candidates": 0, "accepted": 0, "rejected_by_reason": {}})
        entry["candidates"] += 1
        if q["status"] == "accepted":
            entry["accepted"] += 1
        else:
            reasons = entry["rejected_by_reason"]
            reasons[q["reason"] or q["status"]] = reasons.get(q["reason"] or q["status"], 0) + 1
    with_questions, without = [], {"no candidate question names the task": 0, "every candidate was rejected": 0}
    for iid, task in tasks.items():
        entry = by_task.get(iid)
        if entry is None:
            without["no candidate question names the task"] += 1
            continue
        if entry["accepted"] == 0:
            without["every candidate was rejected"] += 1
        with_questions.append({"instance_id": iid, "repo": task.repo, "base_commit": task.base_commit,
                               "image_name": task.image_name, "source": task.source,
                               "provenance": str(task.extra.get("provenance") or task.source), **entry})
    names = ctx.recipe.pool_names()   # the pool tfas_optimized draws from: conditions.pool, else the first
    return {"pool": ctx.recipe.conditions.pool or (names[0] if names else None),
            "rule": "a question is attached only to the task whose repository it is about, and proved in that "
                    "repository at its base_commit",
            "tasks": len(tasks), "tasks_with_candidates": with_questions,
            "tasks_without_questions": {k: v for k, v in without.items() if v},
            "rows_with_questions": {c: sum(1 for r in rows if r["questions"]) for c, rows in out_splits.items()},
            "rows": {c: len(rows) for c, rows in out_splits.items()}}


def run(ctx) -> None:
    rows_mod = need_module("swe_taskflow.rows", "issue 6, releases")
    release = need_module("builder.release", "issue 6, releases")
    tasks = {t.instance_id: t for t in read_tasks(ctx.input("ingest"))}
    splits = {s.instance_id: s for s in read_splits(ctx.input("split"))}
    questions = {}
    for n, obj in read_jsonl(ctx.input("classify_turns") / "pool_labelled.jsonl"):
        questions[obj["question_id"]] = QAItem.from_dict(obj, row=n)
    files = condition_files(ctx)
    pool_of = {s.split: s.pool for s in ctx.recipe.splits()}
    ctx.progress.set_total(len(files))
    out_splits: dict[str, list] = {}
    skipped: dict[str, dict[str, int]] = {}
    for cond, path in files.items():
        rows = []
        for n, obj in read_jsonl(path):
            if obj.get("session") is None:  # e.g. qa_only for a task without questions: counted, not written
                skipped.setdefault(cond, {}).setdefault(obj.get("status", "?"), 0)
                skipped[cond][obj.get("status", "?")] += 1
                continue
            session = Session.from_dict(obj["session"], where=str(path), row=n)
            if pool_of[cond] is not None:
                # A split is built from one pool: its rows name it even where a task got no question from it.
                session = dataclasses.replace(session, question_pool=pool_of[cond])
            iid = session.instance_id
            rows.append(rows_mod.build_row(tasks[iid], session, splits.get(iid), questions, where=str(path), row=n))
        out_splits[cond] = rows
        ctx.progress.advance()
    target = ctx.input("select") / "target.json"
    prov = provenance(ctx)
    prov["question_rows"] = question_rows(ctx, out_splits)
    manifest = release.write_release(ctx.out / "release", name=ctx.recipe.release.name,
                                     version=ctx.recipe.release.version, splits=out_splits,
                                     target_path=target, provenance=prov,
                                     repo_id=ctx.recipe.release.repo_id or None,
                                     license=ctx.recipe.release.license,
                                     description=ctx.recipe.release.description)
    ctx.summary.update(rows={c: len(r) for c, r in out_splits.items()}, sessions_not_written=skipped,
                       question_rows=prov["question_rows"],
                       release_id=getattr(manifest, "release_id", ""))
