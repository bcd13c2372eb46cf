"""Stage ``augment``: execute, debug, planning and review turns, generated and checked at creation.

Text-only kinds (planning) run for every task with an ok split and a gold patch; sandbox kinds
(execute, debug, review) for tasks whose repository is available here and that have a test command,
in the proof sandbox (docker in the task's own image, bubblewrap otherwise). Every item, accepted or
not, is written with its checks and reason (``items.jsonl``); wall-clock durations move to
``_volatile`` like the proofs stage's.
"""

from __future__ import annotations

from pathlib import Path

from swe_taskflow.jsonl import write_json, write_jsonl

from .common import need_module, read_splits, read_tasks
from .proofs import strip_volatile

SANDBOX_KINDS = ("execute", "debug", "review")


def _writer(ctx):
    sec = ctx.recipe.augmentations
    aug = need_module("builder.augment", "issue 16, augmentations")
    if sec.writer != "llm":
        return aug.get_writer("template"), None
    llm = need_module("builder.llm", "issue 4, generation")
    store = llm.ResponseStore(str(ctx.recipe.resolve(sec.responses))) if sec.responses else None
    backend = llm.get_backend(sec.llm, store=store, **({"model": sec.model} if sec.model else {}))
    return aug.get_writer("llm", llm=backend), backend


def sandbox_setup(ctx, tasks) -> tuple[object | None, dict[str, Path], dict[str, str], dict]:
    """(sandbox, repos by instance id, images by instance id, info) for the tasks sandbox kinds can use:
    those with a test command whose repository is here (a bundled one, or a checkout under repos.path)."""
    from dataclasses import replace

    from builder.augment.sandbox import DEFAULT_CONFIG, Sandbox
    from swe_taskflow.verify_reprove import find_repo

    from .proofs import build_images
    from .repos import materialize

    want = [t for t in tasks if t.test_command]
    if not want or not ctx.recipe.proofs.enabled or not (ctx.recipe.repos.bundled or ctx.recipe.repos.path):
        return None, {}, {}, {"sandbox": "none", "tasks": 0}
    root, info = materialize(ctx.recipe, ctx.cache.root, want)
    repos = {t.instance_id: p for t in want
             if (p := find_repo(root, {"instance_id": t.instance_id, "repo": t.repo})) is not None}
    if not repos:
        return None, {}, {}, {"sandbox": "none", "tasks": 0, "repos": info.get("kind")}
    sec = ctx.recipe.augmentations
    sandbox = Sandbox(ctx.recipe.proofs.sandbox, image=ctx.recipe.proofs.image or None,
                      config=replace(DEFAULT_CONFIG, timeout_s=float(sec.timeout_s)))
    built = {}
    if sandbox.kind == "docker" and not sandbox.image:
        built = build_images(ctx.recipe, [t for t in want if t.instance_id in repos])
    images = {t.instance_id: sandbox.image_for(t.image_name) or "" for t in want if t.instance_id in repos}
    missing = sorted(i for i, img in images.items() if sandbox.kind == "docker" and not img)
    if missing:   # no image of its own and none configured: the project's small test image
        from builder.proofs.image import build_test_image

        test_image = build_test_image()["tag"]
        images.update({i: test_image for i in missing})
    return sandbox, repos, images, {**sandbox.info, "tasks": len(repos), "repos": info.get("kind"),
                                    "images": dict(sorted(images.items())), "images_built": built}


def run(ctx) -> None:
    sec = ctx.recipe.augmentations
    out_items = ctx.out / "items.jsonl"
    if not sec.kinds and not sec.specs:
        write_jsonl(out_items, [])
        ctx.summary.update(enabled=False)
        return
    aug = need_module("builder.augment", "issue 16, augmentations")
    tasks = [t for t in read_tasks(ctx.input("ingest")) if t.status == "ok"]
    splits = {s.instance_id: s for s in read_splits(ctx.input("split"))}
    hand = []
    for f in sec.specs:
        hand += aug.read_specs(ctx.recipe.resolve(f), pool=Path(f).stem)
    writer, backend = _writer(ctx)
    needs_sandbox = any(k in SANDBOX_KINDS for k in sec.kinds) or any(s.kind in SANDBOX_KINDS for s in hand)
    sandbox, repos, images, sb_info = sandbox_setup(ctx, tasks) if needs_sandbox else (None, {}, {}, {"sandbox": "none"})
    ctx.progress.set_total(len(tasks))
    config = aug.ProposeConfig(kinds=tuple(sec.kinds), per_kind=sec.per_kind, review_attempts=sec.review_attempts,
                               seed=ctx.recipe.conditions.seed)
    items, summary = aug.augment_tasks(tasks, splits, writer=writer, sandbox=sandbox, repos=repos, images=images,
                                       config=config, hand_specs=hand, progress=lambda n: ctx.progress.advance(n))
    rows, timings = [], []
    for item in items:
        row = item.to_dict()
        row["proof_report"], timing = strip_volatile(row.get("proof_report"), item.question_id)
        rows.append(row)
        if timing.get("duration_s") is not None:
            timings.append(timing)
    write_jsonl(out_items, rows)
    write_jsonl(ctx.out / "_volatile" / "check_timings.jsonl", timings)
    if backend is not None:
        write_json(ctx.out / "_volatile" / "llm_usage.json", backend.ledger.to_dict())
    ctx.summary.update(enabled=True, kinds=list(sec.kinds), writer=dict(writer.info), sandbox=sb_info,
                       **{k: v for k, v in summary.items() if k != "sandbox"})
