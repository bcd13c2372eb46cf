"""Stage ``assemble``: the sessions of every fixed condition (swe_taskflow.conditions)."""

from __future__ import annotations

from collections import Counter

from swe_taskflow.candidates import build_materials
from swe_taskflow.conditions import FIXED_CONDITIONS, assemble
from swe_taskflow.jsonl import read_jsonl, write_json, write_jsonl

from .common import read_pool, read_splits


def materials_and_intents(ctx, pool_name: str | None = None):
    """Task materials (splits + accepted questions of ``pool_name``, relabelled; every pool when None) and
    the text -> intent map."""
    splits = read_splits(ctx.input("split"))
    pool = read_pool(ctx.input("classify_turns") / "pool_labelled.jsonl")
    if pool_name is not None:   # augmentation items belong to no question pool: the selection may use them all
        pool = [q for q in pool if q.pool == pool_name or q.kind != "qa"]
    materials, pool_summary = build_materials(splits, pool)
    intents = {obj["text"]: obj["intent"] for _, obj in read_jsonl(ctx.input("classify_turns") / "intents.jsonl")}
    return materials, intents, pool_summary


def run(ctx) -> None:
    specs = [s for s in ctx.recipe.splits() if s.condition in FIXED_CONDITIONS]
    ctx.progress.set_total(len(specs))
    statuses, pools = {}, {}
    for spec in specs:
        if spec.pool not in pools:
            pools[spec.pool] = materials_and_intents(ctx, spec.pool)
        materials, intents, _ = pools[spec.pool]
        rows = assemble(materials, intents, conditions=[spec.condition], seed=ctx.recipe.conditions.seed)[spec.condition]
        write_jsonl(ctx.out / "conditions" / f"{spec.split}.jsonl", (r.to_dict() for r in rows))
        statuses[spec.split] = dict(sorted(Counter(r.status for r in rows).items()))
        ctx.progress.advance(failed=int(all(r.session is None for r in rows)))
    summaries = {str(p): v[2].to_dict() for p, v in pools.items() if p is not None}
    write_json(ctx.out / "pool_summary.json", summaries)
    ctx.summary.update(conditions=[s.split for s in specs], row_status=statuses, pool=summaries)
