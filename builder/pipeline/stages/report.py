"""Stage ``report``: the build report (builder.report.build_report) from the other stages' typed outputs."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ...report.build_report import ReportData, render
from ...report.question_intents import compare
from swe_taskflow.target import load_target

from ..materials import condition_rows
from ..recipe import split_rules
from ..stage_data import (AssembleOutputs, AugmentOutputs, ClassifyPromptsOutputs, ClassifyTurnsOutputs, IngestOutputs,
                          ProofsOutputs, QuestionsOutputs, ReportOutputs as Outputs, ReportSummary as Summary,
                          SelectOutputs, SplitOutputs, StressOutputs, VerifyOutputs, WriteOutputs)


@dataclass(frozen=True)
class Inputs:
    """The release and its verification, then every stage whose counts the report shows."""

    write: WriteOutputs
    verify: VerifyOutputs
    select: SelectOutputs
    assemble: AssembleOutputs
    classify_prompts: ClassifyPromptsOutputs
    classify_turns: ClassifyTurnsOutputs
    ingest: IngestOutputs
    split: SplitOutputs
    questions: QuestionsOutputs
    proofs: ProofsOutputs
    augment: AugmentOutputs
    stress: StressOutputs


def _llm_usage(inputs: Inputs) -> dict:
    return {f"{stage}/{name}": u
            for stage, got in (("split", inputs.split.llm_usage), ("questions", inputs.questions.llm_usage),
                               ("augment", inputs.augment.llm_usage), ("stress", inputs.stress.llm_usage))
            for name, u in (got or {}).items()}


def _counts(inputs: Inputs) -> dict:
    """The report's count tables, from the stages' typed summaries."""
    ingest, split, proofs = inputs.ingest.summary, inputs.split.summary, inputs.proofs.summary
    questions, turns = inputs.questions.summary, inputs.classify_turns.summary
    assemble, write = inputs.assemble.summary, inputs.write.summary
    causes = proofs.rejected_by_cause or {}
    counts = {
        "Tasks": {**(ingest.by_status or {}),
                  **{f"malformed: {k}": v for k, v in (ingest.malformed_reasons or {}).items()}},
        "Splits": {**{f"status {k}": v for k, v in (split.by_status or {}).items()},
                   **{f"violation {k}": v for k, v in (split.violations or {}).items()}},
        "Split reasons (tasks kept single-turn)": split.reasons or {},
        "Evaluation-context checks": {"mode": split.context_checks or "off",
                                      "ok splits failing them (kept single-turn)": split.context_failed or 0,
                                      "FAIL_TO_PASS tests tied to no turn (scored at the last checkpoint only)":
                                          split.tests_unattributed or 0},
        "Questions": {"candidates": questions.candidates or 0,
                      "not used: task not in this build": questions.unknown_task or 0,
                      "accepted": proofs.accepted or 0, "rejected": proofs.rejected or 0,
                      "infrastructure error": proofs.error or 0,
                      **{f"rejected: {k}": v for k, v in (proofs.rejected_by_reason or {}).items()},
                      "rejected proofs by cause: output drift (passed before and after the gold patch, "
                      "different output)": causes.get("output-drift", 0),
                      "rejected proofs by cause: failure (a run failed, before or after the gold patch)":
                          causes.get("failure", 0),
                      "rejected before any proof ran (generation checks)": proofs.rejected_before_proof or 0},
        "Trajectories (questions.mode = generate)": questions.trajectories or "none",
        "Turn intents": {"texts classified": turns.texts or 0, "issue texts": turns.issue_texts or 0,
                         "question texts": turns.question_texts or 0,
                         "question intents from": turns.question_intents or "classify",
                         "questions whose label equals the pool's declared intent":
                             turns.questions_matching_declared_intent or 0},
        "Proof sandbox": {"sandbox": proofs.sandbox or "none", "image": proofs.image or "",
                          "gold patch re-run": proofs.gold_patch, "repositories": proofs.repos},
        "Rows per condition (released)": write.rows or {},
        "Condition row status": assemble.row_status or {},
        "Sessions not written (no turn)": write.sessions_not_written or "none",
    }
    qrows = write.question_rows or {}
    if qrows:
        counts["Rows carrying questions, per condition"] = {
            c: f"{n} of {qrows.get('rows', {}).get(c, '?')}" for c, n in qrows.get("rows_with_questions", {}).items()}
        counts["Questions by task (" + qrows.get("rule", "") + ")"] = {
            **{f"{t['instance_id']} ({t['repo']}, {t['provenance']})":
               f"{t['accepted']} accepted of {t['candidates']}" for t in qrows.get("tasks_with_candidates", [])},
            **{f"tasks without questions: {k}": v for k, v in qrows.get("tasks_without_questions", {}).items()}}
    return counts


def run(inputs: Inputs, ctx) -> Outputs:
    recipe = ctx.recipe
    source = [[m["intent"] for m in obj["messages"]] for obj in inputs.classify_prompts.source_sessions]
    conditions, turn_refs = {}, {}
    for cond, cond_rows in condition_rows(recipe, inputs.assemble.conditions, inputs.select.conditions).items():
        sessions = [obj["session"]["turns"] for obj in cond_rows if obj.get("session")]
        conditions[cond] = [[t["intent"] for t in turns] for turns in sessions]
        turn_refs[cond] = [[(t["kind"], t.get("question_id"), t["intent"]) for t in turns] for turns in sessions]
    labels = {obj["question_id"]: {k: obj.get(k) for k in ("declared_intent", "classified_intent")}
              for obj in inputs.classify_turns.labelled}
    turns = inputs.classify_turns.summary
    stages = [{"stage": name, "key": ref.key, "output_hash": ref.output_hash} for name, ref in ctx.upstream.items()]
    selection = inputs.select.report or {}
    augment = {k: v for k, v in dataclasses.asdict(inputs.augment.summary).items() if v is not None}
    augmentations = {"stage": augment, "tfas": selection.get("with_and_without_augmentations", []),
                     "disagreements": turns.augment_disagreements or {},
                     "intents": turns.augment_intents or "declared"}
    target = load_target(inputs.select.target)
    data = ReportData(
        title=f"{recipe.release.name} {recipe.release.version}",
        release={"name": recipe.release.name, "version": recipe.release.version,
                 "release_id": inputs.write.summary.release_id or ""},
        target=target, source_sessions=source, conditions=conditions,
        references=[load_target(recipe.resolve(p)) for p in recipe.target.compare],
        counts=_counts(inputs), selection=selection, augmentations=augmentations,
        llm=_llm_usage(inputs), verify=inputs.verify.report, stages=stages,
        notes=[f"Not run in this build: {line}." for line in inputs.write.summary.not_run or ()],
        split_rules=split_rules(recipe),
        question_intents=compare(target, turn_refs, labels, recipe.classifier.question_intents),
        stress={"summary": {k: v for k, v in dataclasses.asdict(inputs.stress.summary).items() if v is not None},
                "slices": inputs.stress.slices or []})
    ctx.progress.set_total(len(conditions) + 2)
    render(data, ctx.folder("report"))
    ctx.progress.advance(len(conditions) + 2)
    return Outputs(report=ctx.folder("report"), summary=Summary(pictures=len(conditions) + 2))
