"""Stage ``classify_turns``: one intent per distinct turn text any condition can use.

Issue texts (originals, split parts, merged parts) and question texts are labelled by the same
classifier as every other corpus (paper Appendix A), so a benchmark's Task Flow is measured the
way the target's was. A question keeps both its pool's declared intent (``declared_intent``) and its
label (``classified_intent``); ``classifier.question_intents`` says which one its turns carry
(``declared`` by default: the paper adds repository questions as the explain intent).
Augmentation turns (stage ``augment``) declare their kind's intent and are labelled the same way;
``augmentations.intents`` says which one their turns carry, and every disagreement is reported.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass

from swe_taskflow.candidates import build_materials

from ..stage_data import (AugmentOutputs, ClassifyTurnsOutputs as Outputs, ClassifyTurnsSummary as Summary,
                          ProofsOutputs, SplitOutputs)
from .common import label


@dataclass(frozen=True)
class Inputs:
    split: SplitOutputs
    proofs: ProofsOutputs
    augment: AugmentOutputs


def disagreements(items, by_text) -> dict:
    """Per augmentation kind: how many generated texts the classifier labels as the kind's declared intent,
    which other labels it gives, and the items where it disagrees."""
    out: dict = {}
    for q in items:
        if not q.question.strip():
            continue
        got = by_text[q.question].intent
        k = out.setdefault(q.kind, {"texts": 0, "agree": 0, "declared": q.intent, "labels": Counter(), "items": []})
        k["texts"] += 1
        k["agree"] += int(got == q.intent)
        k["labels"][got] += 1
        if got != q.intent:
            k["items"].append({"question_id": q.question_id, "status": q.status, "label": got})
    return {kind: {**v, "labels": dict(sorted(v["labels"].items()))} for kind, v in sorted(out.items())}


def run(inputs: Inputs, ctx) -> Outputs:
    splits = inputs.split.splits
    pool = inputs.proofs.validated
    augments = inputs.augment.items
    materials, _ = build_materials(splits, pool)
    texts: dict[str, str] = {}
    for m in materials:  # every backbone's texts: swe_taskflow.conditions wants an intent for each
        for t in m.issue_texts():
            texts.setdefault(t, "issue")
    for q in pool:
        if q.question.strip():        # a record of a task no question was mined for has no text
            texts.setdefault(q.question, "qa")
    for q in augments:
        if q.question.strip():
            texts.setdefault(q.question, q.kind)
    order = list(texts)
    preds, info = label(ctx, order)
    by_text = dict(zip(order, preds))
    intents = [{"text": t, "kind": texts[t], "intent": p.intent, "confidence": round(p.confidence, 4)}
               for t, p in zip(order, preds)]
    declared = {"qa": ctx.recipe.classifier.question_intents == "declared",
                "augmentation": ctx.recipe.augmentations.intents == "declared"}
    labelled = []
    for q in (*pool, *augments):
        got = by_text[q.question].intent if q.question in by_text else q.intent
        keep = declared["qa" if q.kind == "qa" else "augmentation"]
        row = (q if keep else dataclasses.replace(q, intent=got)).to_dict()
        row["declared_intent"] = q.intent
        row["classified_intent"] = got
        labelled.append(row)
    return Outputs(intents=intents, labelled=labelled, summary=Summary(
        classifier=info, texts=len(order), issue_texts=sum(1 for k in texts.values() if k == "issue"),
        question_texts=sum(1 for k in texts.values() if k == "qa"),
        augment_texts=sum(1 for k in texts.values() if k not in ("qa", "issue")),
        augment_intents=ctx.recipe.augmentations.intents,
        augment_disagreements=disagreements(augments, by_text),
        intents=dict(sorted(Counter(p.intent for p in preds).items())),
        question_intents=ctx.recipe.classifier.question_intents,
        questions_matching_declared_intent=sum(1 for q in pool if q.question in by_text
                                               and by_text[q.question].intent == q.intent)))
