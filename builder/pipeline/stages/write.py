"""Stage ``write``: release rows for every condition, written as a release folder (builder.release)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass

from ...qa import skip_kind
from ...release import write_release
from swe_taskflow.turns.kinds import SANDBOX_KINDS
from swe_taskflow.errors import InputError
from swe_taskflow.hashing import file_sha256
from swe_taskflow.rows import build_row
from swe_taskflow.schema import Session

from ..materials import condition_rows, labelled_items
from ..recipe import split_rules
from ..stage_data import (AssembleOutputs, AugmentOutputs, ClassifyTurnsOutputs, IngestOutputs, ProofsOutputs,
                          QuestionsOutputs, SelectOutputs, SplitOutputs, StressOutputs, WriteOutputs as Outputs,
                          WriteSummary as Summary)


@dataclass(frozen=True)
class Inputs:
    ingest: IngestOutputs
    split: SplitOutputs
    questions: QuestionsOutputs
    proofs: ProofsOutputs
    augment: AugmentOutputs
    stress: StressOutputs
    classify_turns: ClassifyTurnsOutputs
    assemble: AssembleOutputs
    select: SelectOutputs


def provenance(inputs: Inputs, ctx) -> dict:
    """The manifest's provenance: source, recipe, models and prompts, seeds, selection rules, stage hashes."""
    recipe = ctx.recipe
    classifier = inputs.classify_turns.summary.classifier or {}
    splitter = inputs.split.summary.splitter or {}
    proofs = inputs.proofs.summary
    return {
        "source": inputs.ingest.provenance,
        "recipe": {"file": recipe.path.name, "sha256": file_sha256(recipe.path), "content": recipe.raw},
        "models": {
            "classifier": classifier,
            "splitter": splitter,
            "questions": {"mode": recipe.questions.mode, "pools": [p.name for p in recipe.questions.pools],
                          "llm": recipe.questions.llm.backend or None,
                          "model": recipe.questions.llm.model or None},
            "proofs": {k: getattr(proofs, k) for k in ("sandbox", "image", "image_id", "gold_patch", "repos")},
        },
        "prompts": {"splitter": splitter.get("prompt_sha256"), "classifier": classifier.get("prompt_sha256")},
        "seeds": {"conditions": recipe.conditions.seed, "select": recipe.select.seed},
        "selection": split_rules(recipe),
        "pipeline": {name: ref.output_hash for name, ref in ctx.upstream.items()},
    }


def question_rows(inputs: Inputs, recipe, out_splits: dict[str, list]) -> dict:
    """Which rows carry questions and why the others carry none, as data (the card and report render it).

    A question belongs to the one task whose repository it is about (its pool row names that task);
    every other task carries none: no candidate names it, or every candidate was rejected.
    """
    tasks = {t.instance_id: t for t in inputs.ingest.tasks}
    by_task: dict[str, dict] = {}
    mined_none: dict[str, str] = {}
    for q in inputs.proofs.validated:
        kind = skip_kind(q)
        if kind is not None:   # generate mode: no question was mined for the task (the record says why)
            mined_none[q.instance_id] = kind
            continue
        entry = by_task.setdefault(q.instance_id, {"candidates": 0, "accepted": 0, "rejected_by_reason": {}})
        entry["candidates"] += 1
        if q.status == "accepted":
            entry["accepted"] += 1
        else:
            reasons = entry["rejected_by_reason"]
            reasons[q.reason or q.status] = reasons.get(q.reason or q.status, 0) + 1
    with_questions, without = [], {"no candidate question names the task": 0, "every candidate was rejected": 0}
    for iid, task in tasks.items():
        entry = by_task.get(iid)
        if entry is None:
            why = (f"no question mined ({mined_none[iid]})" if iid in mined_none
                   else "no candidate question names the task")
            without[why] = without.get(why, 0) + 1
            continue
        if entry["accepted"] == 0:
            without["every candidate was rejected"] += 1
        with_questions.append({"instance_id": iid, "repo": task.repo, "base_commit": task.base_commit,
                               "image_name": task.image_name, "source": task.source,
                               "provenance": str(task.extra.get("provenance") or task.source), **entry})
    names = recipe.pool_names()   # the pool tfas_optimized draws from: conditions.pool, else the first
    return {"pool": recipe.conditions.pool or (names[0] if names else None),
            "rule": "a question is attached only to the task whose repository it is about, and proved in that "
                    "repository at its base_commit",
            "tasks": len(tasks), "tasks_with_candidates": with_questions,
            "tasks_without_questions": {k: v for k, v in without.items() if v},
            "rows_with_questions": {c: sum(1 for r in rows if r["questions"]) for c, rows in out_splits.items()},
            "rows": {c: len(rows) for c, rows in out_splits.items()}}


def not_run(inputs: Inputs, recipe) -> list[str]:
    """What this build did not run, and why, in plain words for the card and report (empty when it ran all)."""
    out = []
    if not recipe.proofs.enabled and recipe.questions.mode != "none":
        out.append("proofs: not run (`proofs.enabled = false`: no checkout or image of the tasks on the build "
                   "machine); no question is validated, so none is accepted")
    skipped = Counter((r.get("reason") or "").split(":")[0] for r in inputs.questions.trajectories or []
                      if r.get("status") == "skipped")
    if skipped.get("no-recorded-reply"):
        out.append(f"question generation: {skipped['no-recorded-reply']} solving trajectories have no recorded "
                   f"reply in the replay store (`questions.llm = {recipe.questions.llm.backend}`); no question was invented "
                   f"for them")
    aug = inputs.augment.summary
    sandbox_kinds = sorted(set(aug.kinds or ()) & set(SANDBOX_KINDS))
    if aug.enabled and sandbox_kinds and (aug.sandbox or {}).get("sandbox") == "none":
        out.append(f"augmentation checks that run code ({', '.join(sandbox_kinds)}): not run (no task checkout or "
                   f"image on the build machine); none of these turns was proposed")
    return out


#: The conditions whose session is a task's "real session" for a stress turn, in order of preference.
STRESS_BASES = ("split_prompt", "single_prompt")


def _slice_record(sl: dict, items: dict) -> dict:
    """A slice as the manifest records it: the chosen tasks and items, and the items tried by status."""
    tried = Counter(items[q].status for q in sl["tried"])
    return {**{k: v for k, v in sl.items() if k not in ("rule", "chosen")},
            "chosen": [c["instance_id"] for c in sl["chosen"]],
            "chosen_items": [c["question_id"] for c in sl["chosen"]],
            "items": {"accepted": tried["accepted"], "rejected": tried["rejected"] + tried["error"]}}


def stress_rows(inputs: Inputs, tasks, splits) -> tuple[dict[str, list], dict]:
    """Each slice's rows (the task's own session with the slice's turn placed in it) and the manifest's
    ``stress`` record; ({}, {}) without slices."""
    from swe_taskflow.turns.stress import stress_session

    slices = inputs.stress.slices or []
    if not slices:
        return {}, {}
    items = {q.question_id: q for q in inputs.stress.items}
    bases: dict[str, dict] = {}
    for cond in reversed(STRESS_BASES):
        for obj in inputs.assemble.conditions.get(cond, []):
            if obj.get("session") is not None:
                bases[obj["session"]["instance_id"]] = obj["session"]
    out: dict[str, list] = {}
    for sl in slices:
        rows = []
        for n, pick in enumerate(sl["chosen"]):
            iid, item = pick["instance_id"], items[pick["question_id"]]
            where = f"{sl['split']} stress rows"
            if iid not in bases:
                raise InputError("no session of the task to place the stress turn in", path=where, row=n,
                                 field="instance_id", actual=iid, hint="build split_prompt or single_prompt")
            session = stress_session(Session.from_dict(bases[iid], where=where, row=n), item, sl["split"])
            rows.append(build_row(tasks[iid], session, splits.get(iid), {item.question_id: item}, where=where, row=n))
        out[sl["split"]] = rows
    status = Counter((q.kind, q.status) for q in inputs.stress.items)
    record = {"slices": [_slice_record(sl, items) for sl in slices], "rule": slices[0]["rule"],
              "items": [{"kind": k, "status": st, "count": c} for (k, st), c in sorted(status.items())],
              "rejected": [{"question_id": q.question_id, "kind": q.kind, "pool": q.pool, "reason": q.reason}
                           for q in inputs.stress.items if q.status != "accepted"]}
    return out, record


def run(inputs: Inputs, ctx) -> Outputs:
    recipe = ctx.recipe
    tasks = {t.instance_id: t for t in inputs.ingest.tasks}
    splits = {s.instance_id: s for s in inputs.split.splits}
    questions = {q.question_id: q for q in labelled_items(inputs.classify_turns.labelled)}
    files = condition_rows(recipe, inputs.assemble.conditions, inputs.select.conditions)
    pool_of = {s.split: s.pool for s in recipe.splits()}
    ctx.progress.set_total(len(files))
    out_splits: dict[str, list] = {}
    skipped: dict[str, dict[str, int]] = {}
    for cond, cond_rows in files.items():
        where = f"{cond} condition rows"
        rows = []
        for n, obj in enumerate(cond_rows, start=1):
            if obj.get("session") is None:  # e.g. qa_only for a task without questions: counted, not written
                skipped.setdefault(cond, {}).setdefault(obj.get("status", "?"), 0)
                skipped[cond][obj.get("status", "?")] += 1
                continue
            session = Session.from_dict(obj["session"], where=where, row=n)
            if pool_of[cond] is not None:
                # A split is built from one pool: its rows name it even where a task got no question from it.
                session = dataclasses.replace(session, question_pool=pool_of[cond])
            iid = session.instance_id
            rows.append(build_row(tasks[iid], session, splits.get(iid), questions, where=where, row=n))
        out_splits[cond] = rows
        ctx.progress.advance()
    stress, stress_record = stress_rows(inputs, tasks, splits)
    prov = provenance(inputs, ctx)
    prov["question_rows"] = question_rows(inputs, recipe, out_splits)
    if stress_record:   # only with slices: a recipe without [stress] writes the manifest it always wrote
        prov["stress"] = stress_record
    else:
        prov["pipeline"].pop("stress", None)
    out_splits.update(stress)
    if missing := not_run(inputs, recipe):   # only when something was not run: other manifests unchanged
        prov["not_run"] = missing
    manifest = write_release(ctx.folder("release"), name=recipe.release.name, version=recipe.release.version,
                             splits=out_splits, target_path=inputs.select.target, provenance=prov,
                             repo_id=recipe.release.repo_id or None, license=recipe.release.license,
                             description=recipe.release.description)
    return Outputs(release=ctx.folder("release"), summary=Summary(
        rows={c: len(r) for c, r in out_splits.items()}, sessions_not_written=skipped,
        question_rows=prov["question_rows"], release_id=getattr(manifest, "release_id", ""),
        not_run=prov.get("not_run")))
