"""Stage ``assemble``: the sessions of every fixed condition (swe_taskflow.conditions)."""

from __future__ import annotations

from collections import Counter

from swe_taskflow.candidates import build_materials
from swe_taskflow.conditions import FIXED_CONDITIONS, assemble
from swe_taskflow.jsonl import read_jsonl, write_json, write_jsonl

from .common import read_pool, read_splits


def materials_and_intents(ctx):
    """Task materials (splits + accepted questions, relabelled) and the text -> intent map."""
    splits = read_splits(ctx.input("split"))
    pool = read_pool(ctx.input("classify_turns") / "pool_labelled.jsonl")
    materials, pool_summary = build_materials(splits, pool)
    intents = {obj["text"]: obj["intent"] for _, obj in read_jsonl(ctx.input("classify_turns") / "intents.jsonl")}
    return materials, intents, pool_summary


def run(ctx) -> None:
    materials, intents, pool_summary = materials_and_intents(ctx)
    wanted = [c for c in ctx.recipe.conditions.names if c in FIXED_CONDITIONS]
    ctx.progress.set_total(len(wanted))
    rows = assemble(materials, intents, conditions=wanted, seed=ctx.recipe.conditions.seed)
    statuses = {}
    for cond in wanted:
        write_jsonl(ctx.out / "conditions" / f"{cond}.jsonl", (r.to_dict() for r in rows[cond]))
        statuses[cond] = dict(sorted(Counter(r.status for r in rows[cond]).items()))
        ctx.progress.advance(failed=int(all(r.session is None for r in rows[cond])))
    write_json(ctx.out / "pool_summary.json", pool_summary.to_dict())
    ctx.summary.update(conditions=wanted, row_status=statuses, pool=pool_summary.to_dict())
