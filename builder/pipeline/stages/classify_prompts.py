"""Stage ``classify_prompts``: the source benchmark's Task Flow (one single-message session per task)."""

from __future__ import annotations

from collections import Counter

from swe_taskflow.jsonl import write_jsonl

from .common import label, read_tasks


def run(ctx) -> None:
    tasks = [t for t in read_tasks(ctx.input("ingest")) if t.status == "ok"]
    preds = label(ctx, [t.original_prompt for t in tasks])
    rows = [{"session_id": t.instance_id, "messages": [{"intent": p.intent, "confidence": round(p.confidence, 4)}]}
            for t, p in zip(tasks, preds)]
    write_jsonl(ctx.out / "source_sessions.jsonl", rows)
    ctx.summary["intents"] = dict(sorted(Counter(p.intent for p in preds).items()))
