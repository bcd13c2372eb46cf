"""Stage ``augment``: execute, debug, planning and review turns, generated and checked at creation.

Text-only kinds (planning) run for every task with an ok split and a gold patch; sandbox kinds
(execute, debug, review) for tasks whose repository is available here and that have a test command,
in the proof sandbox (docker in the task's own image, bubblewrap otherwise). Every item, accepted or
not, is kept with its checks and reason; wall-clock durations move to the volatile ``timings`` like
the proofs stage's.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from builder import augment, llm
from builder.augment.sandbox import DEFAULT_CONFIG, CheckSandbox
from builder.proofs.image import build_test_image
from swe_taskflow.verify_reprove import find_repo

from ..repos import build_images, materialize
from ..stage_data import AugmentOutputs as Outputs
from ..stage_data import AugmentSummary as Summary
from ..stage_data import IngestOutputs, SplitOutputs
from ..volatile import strip_volatile

SANDBOX_KINDS = ("execute", "debug", "review")


@dataclass(frozen=True)
class Inputs:
    ingest: IngestOutputs
    split: SplitOutputs


def _writer(recipe):
    sec = recipe.augmentations
    if sec.writer != "llm":
        return augment.get_writer("template"), None
    store = llm.ResponseStore(str(recipe.resolve(sec.responses))) if sec.responses else None
    backend = llm.get_backend(sec.llm, store=store, **({"model": sec.model} if sec.model else {}))
    return augment.get_writer("llm", llm=backend), backend


def sandbox_setup(ctx, tasks) -> tuple[object | None, dict[str, Path], dict[str, str], dict]:
    """(sandbox, repos by instance id, images by instance id, info) for the tasks sandbox kinds can use:
    those with a test command whose repository is here (a bundled one, or a checkout under repos.path)."""
    recipe = ctx.recipe
    want = [t for t in tasks if t.test_command]
    if not want or not recipe.proofs.enabled or not (recipe.repos.bundled or recipe.repos.path):
        return None, {}, {}, {"sandbox": "none", "tasks": 0}
    root, info = materialize(recipe, ctx.work, want)
    repos = {t.instance_id: p for t in want
             if (p := find_repo(root, {"instance_id": t.instance_id, "repo": t.repo})) is not None}
    if not repos:
        return None, {}, {}, {"sandbox": "none", "tasks": 0, "repos": info.get("kind")}
    sandbox = CheckSandbox(recipe.proofs.sandbox, image=recipe.proofs.image or None,
                           config=dataclasses.replace(DEFAULT_CONFIG, timeout_s=float(recipe.augmentations.timeout_s)),
                           environment=recipe.proofs.environment, environment_kwargs=recipe.proofs.environment_kwargs)
    built = {}
    if sandbox.kind in ("docker", "harbor") and not sandbox.image:
        built = build_images(recipe, [t for t in want if t.instance_id in repos])
    images = {t.instance_id: sandbox.image_for(t.image_name) or "" for t in want if t.instance_id in repos}
    missing = sorted(i for i, img in images.items() if sandbox.kind in ("docker", "harbor") and not img)
    if missing:   # no image of its own and none configured: the project's small test image
        test_image = build_test_image()["tag"]
        images.update({i: test_image for i in missing})
    return sandbox, repos, images, {**sandbox.info, "tasks": len(repos), "repos": info.get("kind"),
                                    "images": dict(sorted(images.items())), "images_built": built}


def run(inputs: Inputs, ctx) -> Outputs:
    sec = ctx.recipe.augmentations
    if not sec.kinds and not sec.specs:
        return Outputs(summary=Summary(enabled=False))
    tasks = [t for t in inputs.ingest.tasks if t.status == "ok"]
    splits = {s.instance_id: s for s in inputs.split.splits}
    hand = []
    for f in sec.specs:
        hand += augment.read_specs(ctx.recipe.resolve(f), pool=Path(f).stem)
    writer, backend = _writer(ctx.recipe)
    needs_sandbox = any(k in SANDBOX_KINDS for k in sec.kinds) or any(s.kind in SANDBOX_KINDS for s in hand)
    sandbox, repos, images, sb_info = sandbox_setup(ctx, tasks) if needs_sandbox else (None, {}, {}, {"sandbox": "none"})
    ctx.progress.set_total(len(tasks))
    config = augment.ProposeConfig(kinds=tuple(sec.kinds), per_kind=sec.per_kind,
                                   review_attempts=sec.review_attempts, seed=ctx.recipe.conditions.seed)
    try:
        items, summary = augment.augment_tasks(tasks, splits, writer=writer, sandbox=sandbox, repos=repos,
                                               images=images, config=config, hand_specs=hand,
                                               progress=lambda n: ctx.progress.advance(n))
    finally:   # harbor: every environment and the worker stopped, also on an error or an interrupt
        if sandbox is not None:
            sandbox.close()
    kept, timings = [], []
    for item in items:
        report, timing = strip_volatile(item.proof_report, item.question_id)
        kept.append(dataclasses.replace(item, proof_report=report))
        if timing.get("duration_s") is not None:
            timings.append(timing)
    return Outputs(items=kept, timings=timings,
                   llm_usage=backend.ledger.to_dict() if backend is not None else None,
                   summary=Summary(enabled=True, kinds=list(sec.kinds), writer=dict(writer.info), sandbox=sb_info,
                                   **{k: v for k, v in summary.items() if k != "sandbox"}))
