"""Stage ``report``: the build report (builder.report.build_report) from the other stages' outputs."""

from __future__ import annotations

import json

from swe_taskflow.jsonl import read_jsonl
from swe_taskflow.target import load_target

from .write import condition_files, split_rules


def _summary(ctx, stage: str) -> dict:
    path = ctx.input(stage) / "summary.json"
    return json.loads(path.read_text()) if path.exists() else {}


def _llm_usage(ctx) -> dict:
    usage: dict = {}
    for stage in ("split", "questions", "augment"):
        if stage not in ctx.inputs:
            continue
        path = ctx.input(stage) / "_volatile" / "llm_usage.json"
        if path.exists():
            for name, u in json.loads(path.read_text()).items():
                usage[f"{stage}/{name}"] = u
    return usage


def run(ctx) -> None:
    from builder.report.build_report import ReportData, render

    recipe = ctx.recipe
    source = [[m["intent"] for m in obj["messages"]]
              for _, obj in read_jsonl(ctx.input("classify_prompts") / "source_sessions.jsonl")]
    conditions, turn_refs = {}, {}
    for cond, path in condition_files(ctx).items():
        sessions = [obj["session"]["turns"] for _, obj in read_jsonl(path) if obj.get("session")]
        conditions[cond] = [[t["intent"] for t in turns] for turns in sessions]
        turn_refs[cond] = [[(t["kind"], t.get("question_id"), t["intent"]) for t in turns] for turns in sessions]
    labels = {obj["question_id"]: {k: obj.get(k) for k in ("declared_intent", "classified_intent")}
              for _, obj in read_jsonl(ctx.input("classify_turns") / "pool_labelled.jsonl")}
    ingest, split, proofs = _summary(ctx, "ingest"), _summary(ctx, "split"), _summary(ctx, "proofs")
    questions = _summary(ctx, "questions")
    turns = _summary(ctx, "classify_turns")
    assemble, write = _summary(ctx, "assemble"), _summary(ctx, "write")
    counts = {
        "Tasks": {**ingest.get("by_status", {}), **{f"malformed: {k}": v for k, v in
                                                     ingest.get("malformed_reasons", {}).items()}},
        "Splits": {**{f"status {k}": v for k, v in split.get("by_status", {}).items()},
                   **{f"violation {k}": v for k, v in split.get("violations", {}).items()}},
        "Split reasons (tasks kept single-turn)": split.get("reasons", {}),
        "Evaluation-context checks": {"mode": split.get("context_checks", "off"),
                                      "ok splits failing them (kept single-turn)": split.get("context_failed", 0),
                                      "FAIL_TO_PASS tests tied to no turn (scored at the last checkpoint only)":
                                          split.get("tests_unattributed", 0)},
        "Questions": {"candidates": questions.get("candidates", 0),
                      "not used: task not in this build": questions.get("unknown_task", 0),
                      "accepted": proofs.get("accepted", 0), "rejected": proofs.get("rejected", 0),
                      "infrastructure error": proofs.get("error", 0),
                      **{f"rejected: {k}": v for k, v in proofs.get("rejected_by_reason", {}).items()},
                      "rejected proofs by cause: output drift (passed before and after the gold patch, "
                      "different output)": proofs.get("rejected_by_cause", {}).get("output-drift", 0),
                      "rejected proofs by cause: failure (a run failed, before or after the gold patch)":
                          proofs.get("rejected_by_cause", {}).get("failure", 0),
                      "rejected before any proof ran (generation checks)": proofs.get("rejected_before_proof", 0)},
        "Trajectories (questions.mode = generate)": questions.get("trajectories", {}) or "none",
        "Turn intents": {"texts classified": turns.get("texts", 0), "issue texts": turns.get("issue_texts", 0),
                         "question texts": turns.get("question_texts", 0),
                         "question intents from": turns.get("question_intents", "classify"),
                         "questions whose label equals the pool's declared intent":
                             turns.get("questions_matching_declared_intent", 0)},
        "Proof sandbox": {"sandbox": proofs.get("sandbox", "none"), "image": proofs.get("image", ""),
                          "gold patch re-run": proofs.get("gold_patch"), "repositories": proofs.get("repos")},
        "Rows per condition (released)": write.get("rows", {}),
        "Condition row status": assemble.get("row_status", {}),
        "Sessions not written (no turn)": write.get("sessions_not_written", {}) or "none",
    }
    qrows = write.get("question_rows") or {}
    if qrows:
        counts["Rows carrying questions, per condition"] = {
            c: f"{n} of {qrows.get('rows', {}).get(c, '?')}" for c, n in qrows.get("rows_with_questions", {}).items()}
        counts["Questions by task (" + qrows.get("rule", "") + ")"] = {
            **{f"{t['instance_id']} ({t['repo']}, {t['provenance']})":
               f"{t['accepted']} accepted of {t['candidates']}" for t in qrows.get("tasks_with_candidates", [])},
            **{f"tasks without questions: {k}": v for k, v in qrows.get("tasks_without_questions", {}).items()}}
    select_report = ctx.input("select") / "select_report.json"
    stages = []
    for name, path in ctx.inputs.items():
        rec = json.loads((path / ".stage.json").read_text())
        stages.append({"stage": name, "key": rec["key"], "output_hash": rec["output_hash"]})
    notes = []
    selection = json.loads(select_report.read_text()) if select_report.exists() else {}
    augmentations = {"stage": _summary(ctx, "augment") if "augment" in ctx.inputs else {},
                     "tfas": selection.get("with_and_without_augmentations", []),
                     "disagreements": turns.get("augment_disagreements", {}),
                     "intents": turns.get("augment_intents", "declared")}
    from builder.report.question_intents import compare

    target = load_target(ctx.input("select") / "target.json")
    data = ReportData(
        title=f"{recipe.release.name} {recipe.release.version}",
        release={"name": recipe.release.name, "version": recipe.release.version,
                 "release_id": write.get("release_id", "")},
        target=target, source_sessions=source, conditions=conditions,
        counts=counts, selection=selection, augmentations=augmentations,
        llm=_llm_usage(ctx), verify=json.loads((ctx.input("verify") / "verify.json").read_text()),
        stages=stages, notes=notes, split_rules=split_rules(recipe),
        question_intents=compare(target, turn_refs, labels, recipe.classifier.question_intents))
    ctx.progress.set_total(len(conditions) + 2)
    render(data, ctx.out / "report")
    ctx.progress.advance(len(conditions) + 2)
    ctx.summary.update(pictures=len(conditions) + 2)
