"""Stage ``classify_prompts``: the source benchmark's Task Flow (one single-message session per task)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..stage_data import ClassifyPromptsOutputs as Outputs, ClassifyPromptsSummary as Summary, IngestOutputs
from .common import label


@dataclass(frozen=True)
class Inputs:
    ingest: IngestOutputs


def run(inputs: Inputs, ctx) -> Outputs:
    tasks = [t for t in inputs.ingest.tasks if t.status == "ok"]
    preds, info = label(ctx, [t.original_prompt for t in tasks])
    rows = [{"session_id": t.instance_id, "messages": [{"intent": p.intent, "confidence": round(p.confidence, 4)}]}
            for t, p in zip(tasks, preds)]
    return Outputs(source_sessions=rows,
                   summary=Summary(intents=dict(sorted(Counter(p.intent for p in preds).items())), classifier=info))
