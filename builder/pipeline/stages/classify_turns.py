"""Stage ``classify_turns``: one intent per distinct turn text any condition can use.

Issue texts (originals, split parts, merged parts) and question texts are labelled by the same
classifier as every other corpus (paper Appendix A), so a benchmark's Task Flow is measured the
way the target's was. A question keeps both its pool's declared intent (``declared_intent``) and its
label (``classified_intent``); ``classifier.question_intents`` says which one its turns carry
(``declared`` by default: the paper adds repository questions as the explain intent).
"""

from __future__ import annotations

import dataclasses
from collections import Counter

from swe_taskflow.candidates import build_materials
from swe_taskflow.jsonl import write_jsonl

from .common import label, read_pool, read_splits


def run(ctx) -> None:
    splits = read_splits(ctx.input("split"))
    pool = read_pool(ctx.input("proofs") / "pool_validated.jsonl")
    materials, _ = build_materials(splits, pool)
    texts: dict[str, str] = {}
    for m in materials:  # every backbone's texts: swe_taskflow.conditions wants an intent for each
        for t in m.issue_texts():
            texts.setdefault(t, "issue")
    for q in pool:
        if q.question.strip():        # a record of a task no question was mined for has no text
            texts.setdefault(q.question, "qa")
    order = list(texts)
    preds = label(ctx, order)
    by_text = dict(zip(order, preds))
    write_jsonl(ctx.out / "intents.jsonl",
                ({"text": t, "kind": texts[t], "intent": p.intent, "confidence": round(p.confidence, 4)}
                 for t, p in zip(order, preds)))
    declared = ctx.recipe.classifier.question_intents == "declared"
    labelled = []
    for q in pool:
        got = by_text[q.question].intent if q.question in by_text else q.intent
        row = (q if declared else dataclasses.replace(q, intent=got)).to_dict()
        row["declared_intent"] = q.intent
        row["classified_intent"] = got
        labelled.append(row)
    write_jsonl(ctx.out / "pool_labelled.jsonl", labelled)
    ctx.summary.update(
        texts=len(order), issue_texts=sum(1 for k in texts.values() if k == "issue"),
        question_texts=sum(1 for k in texts.values() if k == "qa"),
        intents=dict(sorted(Counter(p.intent for p in preds).items())),
        question_intents=ctx.recipe.classifier.question_intents,
        questions_matching_declared_intent=sum(1 for q in pool if q.question in by_text
                                               and by_text[q.question].intent == q.intent))
