"""The typed outputs and summaries of every pipeline stage: what one stage hands the next.

Each stage's ``Outputs`` names its results and the file each lives in (builder.pipeline.artifacts);
its ``summary`` is a typed record of counts the build report, the manifest and ``build.json`` show.
They live here, outside ``stages/``, because a stage consumes other stages' outputs and must not
import its siblings. A summary field left ``None`` is omitted from ``summary.json``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swe_taskflow.schema import QAItem, SplitResult, Task

from .artifacts import copied_file, document, folder, records, row_map, rows, text

Json = dict[str, Any]


@dataclass
class IngestSummary:
    tasks: int | None = None
    by_status: dict[str, int] | None = None
    malformed_reasons: dict[str, int] | None = None


@dataclass
class IngestOutputs:
    tasks: list[Task] = records("tasks.jsonl", Task)
    provenance: Json | None = document("provenance.json")
    summary: IngestSummary = field(default_factory=IngestSummary)


@dataclass
class ClassifyPromptsSummary:
    intents: dict[str, int] | None = None
    classifier: Json | None = None


@dataclass
class ClassifyPromptsOutputs:
    #: One single-message session per task: ``{"session_id", "messages": [{"intent", "confidence"}]}``.
    source_sessions: list[Json] = rows("source_sessions.jsonl")
    summary: ClassifyPromptsSummary = field(default_factory=ClassifyPromptsSummary)


@dataclass
class SplitSummary:
    splitter: Json | None = None
    context_checks: str | None = None
    context_failed: int | None = None
    tests_unattributed: int | None = None
    by_status: dict[str, int] | None = None
    reasons: dict[str, int] | None = None
    violations: dict[str, int] | None = None


@dataclass
class SplitOutputs:
    splits: list[SplitResult] = records("splits.jsonl", SplitResult)
    #: Per ok split, its evaluation-context report (``instance_id`` + swe_taskflow.context_checks fields).
    context: list[Json] = rows("context.jsonl")
    llm_usage: Json | None = document("llm_usage.json", volatile=True)
    summary: SplitSummary = field(default_factory=SplitSummary)


@dataclass
class QuestionsSummary:
    mode: str | None = None
    candidates: int | None = None
    unknown_task: int | None = None
    by_pool: dict[str, int] | None = None
    trajectories: dict[str, int] | None = None


@dataclass
class QuestionsOutputs:
    pool: list[QAItem] = records("pool.jsonl", QAItem)
    #: Pool rows naming a task not in this build (status rejected, reason unknown-task).
    unknown_task: list[Json] = rows("unknown_task.jsonl")
    #: questions.mode = generate: per task, its trajectory and whether questions were mined.
    trajectories: list[Json] | None = rows("trajectories.jsonl", optional=True)
    llm_usage: Json | None = document("llm_usage.json", volatile=True)
    summary: QuestionsSummary = field(default_factory=QuestionsSummary)


@dataclass
class ProofsSummary:
    enabled: bool | None = None
    sandbox: str | None = None
    image: str | None = None
    image_id: str | None = None
    images_built: dict[str, str] | None = None
    accepted: int | None = None
    rejected: int | None = None
    error: int | None = None
    by_status: dict[str, int] | None = None
    rejected_by_cause: dict[str, int] | None = None
    rejected_before_proof: int | None = None
    rejected_by_reason: dict[str, int] | None = None
    gold_patch: bool | None = None
    repos: str | None = None


@dataclass
class ProofsOutputs:
    #: Every candidate with its proof report (durations moved to ``timings``), status and reason.
    validated: list[QAItem] = records("pool_validated.jsonl", QAItem)
    repos: Json | None = document("repos.json")
    timings: list[Json] | None = rows("proof_timings.jsonl", volatile=True, optional=True)
    summary: ProofsSummary = field(default_factory=ProofsSummary)


@dataclass
class AugmentSummary:
    enabled: bool | None = None
    kinds: list[str] | None = None
    writer: Json | None = None
    sandbox: Json | None = None
    items: int | None = None
    by_kind_status: dict[str, dict[str, int]] | None = None
    rejected: list[Json] | None = None
    not_proposed: dict[str, dict[str, int]] | None = None
    not_tried_after_acceptance: dict[str, int] | None = None
    unknown_task_specs: list[Any] | None = None


@dataclass
class AugmentOutputs:
    items: list[QAItem] = records("items.jsonl", QAItem)
    timings: list[Json] | None = rows("check_timings.jsonl", volatile=True, optional=True)
    llm_usage: Json | None = document("llm_usage.json", volatile=True)
    summary: AugmentSummary = field(default_factory=AugmentSummary)


@dataclass
class StressSummary:
    enabled: bool | None = None
    writer: Json | None = None
    sandbox: Json | None = None
    items: int | None = None
    by_kind_status: dict[str, dict[str, int]] | None = None
    rejected: list[Json] | None = None
    rows: dict[str, int] | None = None
    unknown_task_specs: list[Any] | None = None


@dataclass
class StressOutputs:
    items: list[QAItem] = records("items.jsonl", QAItem)
    #: One record per slice: its split, kind, draw, the items tried and the rows chosen (builder.turns.slices).
    slices: list[Json] = rows("slices.jsonl")
    timings: list[Json] | None = rows("check_timings.jsonl", volatile=True, optional=True)
    llm_usage: Json | None = document("llm_usage.json", volatile=True)
    summary: StressSummary = field(default_factory=StressSummary)


@dataclass
class ClassifyTurnsSummary:
    texts: int | None = None
    issue_texts: int | None = None
    question_texts: int | None = None
    augment_texts: int | None = None
    augment_intents: str | None = None
    augment_disagreements: Json | None = None
    intents: dict[str, int] | None = None
    question_intents: str | None = None
    questions_matching_declared_intent: int | None = None
    classifier: Json | None = None


@dataclass
class ClassifyTurnsOutputs:
    #: ``{"text", "kind", "intent", "confidence"}`` per distinct turn text.
    intents: list[Json] = rows("intents.jsonl")
    #: Questions and augmentation items (QAItem fields) with ``declared_intent`` and ``classified_intent``.
    labelled: list[Json] = rows("pool_labelled.jsonl")
    summary: ClassifyTurnsSummary = field(default_factory=ClassifyTurnsSummary)


@dataclass
class AssembleSummary:
    conditions: list[str] | None = None
    row_status: dict[str, dict[str, int]] | None = None
    pool: Json | None = None


@dataclass
class AssembleOutputs:
    #: Split name -> its ConditionRow dicts (swe_taskflow.conditions).
    conditions: dict[str, list[Json]] = row_map("conditions")
    pool_summary: Json | None = document("pool_summary.json")
    summary: AssembleSummary = field(default_factory=AssembleSummary)


@dataclass
class SelectSummary:
    selected: bool | None = None
    target: str | None = None
    score: dict[str, float] | None = None
    config_text: str | None = None
    constraints: Json | None = None
    sessions_by_questions: Json | None = None
    placement: Json | None = None
    questions_by_slot: Json | None = None


@dataclass
class SelectOutputs:
    target: Path | None = copied_file("target.json")
    #: ``{"tfas_optimized": ConditionRow dicts}`` when the recipe asks for the selection.
    conditions: dict[str, list[Json]] = row_map("conditions")
    selection: list[Json] | None = rows("selection.jsonl", optional=True)
    report: Json | None = document("select_report.json")
    summary: SelectSummary = field(default_factory=SelectSummary)


@dataclass
class WriteSummary:
    rows: dict[str, int] | None = None
    sessions_not_written: dict[str, dict[str, int]] | None = None
    question_rows: Json | None = None
    release_id: str | None = None
    #: What the build did not run and why (the manifest's provenance.not_run); None when it ran everything.
    not_run: list[str] | None = None


@dataclass
class WriteOutputs:
    release: Path | None = folder("release")
    summary: WriteSummary = field(default_factory=WriteSummary)


@dataclass
class VerifySummary:
    ok: bool | None = None
    rows: int | None = None
    splits: int | None = None


@dataclass
class VerifyOutputs:
    report: Json | None = document("verify.json")
    table: str | None = text("verify.txt")
    summary: VerifySummary = field(default_factory=VerifySummary)


@dataclass
class ReportSummary:
    pictures: int | None = None


@dataclass
class ReportOutputs:
    report: Path | None = folder("report")
    summary: ReportSummary = field(default_factory=ReportSummary)


@dataclass(frozen=True)
class StageRef:
    """A finished upstream stage as the runner recorded it: its cache key and content hash."""

    key: str
    output_hash: str
