"""Stage ``proofs``: every candidate question's proof script run in a sandbox (builder.proofs).

Wall-clock durations are measured facts of one run, not of the inputs: two builds of the same
inputs would differ only by them. They are moved out of the reports that go into the release
(set to null) into ``_volatile/proof_timings.jsonl`` (kept out of the content hash and shown in
the build report), so release hashes are reproducible.
"""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

from swe_taskflow.jsonl import read_jsonl, write_json, write_jsonl

from .common import need_module, read_pool, read_tasks
from .repos import materialize

VOLATILE_KEYS = ("duration_s",)


def resolved_sandbox(recipe) -> str:
    """The sandbox ``auto`` picks on this machine now (part of the stage key: docker and bwrap differ)."""
    if not recipe.proofs.enabled or recipe.questions.mode == "none":
        return "none"
    try:
        run = need_module("builder.proofs.run", "issue 5, proofs")
        return run.resolve_sandbox(recipe.proofs.sandbox)
    except Exception as exc:  # noqa: BLE001 - planning must not fail; running reports it
        return f"unavailable: {type(exc).__name__}"


def build_images(recipe, tasks) -> dict:
    """Build (or reuse) the local image of every bundled task among ``tasks``: tag -> image id."""
    from builder.bundled import bundled_tasks
    from builder.bundled.image import build_task_image

    return {b.task.image_name: build_task_image(b.task, b.files)["image_id"] for b in bundled_tasks(recipe, tasks)}


def strip_volatile(report: dict | None, qid: str) -> tuple[dict | None, dict]:
    if report is None:
        return None, {}
    report = dict(report)
    timing = {"question_id": qid}
    for key in VOLATILE_KEYS:
        if key in report:
            timing[key] = report[key]
            report[key] = None
    if report.get("status") == "timeout" and "after" in str(report.get("reason", "")):
        # "wall-clock limit reached after 30.2s": the measured time moves out, the verdict stays.
        timing["reason"] = report["reason"]
        limit = (report.get("limits") or {}).get("timeout_s")
        report["reason"] = "wall-clock limit reached" + (f" ({limit}s limit)" if limit is not None else "")
    runs = dict(report.get("runs") or {})
    for name in ("base", "patched"):
        run = runs.get(name)
        if isinstance(run, dict):
            run = dict(run)
            for key in VOLATILE_KEYS:
                if key in run:
                    timing[f"{name}.{key}"] = run[key]
                    run[key] = None
            runs[name] = run
    if runs:
        report["runs"] = runs
    return report, timing


def _watch(stop: threading.Event, cache_dir: Path, ctx, base: int) -> None:
    """Move the progress display as the proofs runner writes finished reports into its cache."""
    while not stop.wait(0.5):
        n = len(list(cache_dir.glob("*.json"))) - base
        if n > ctx.progress.done:
            ctx.progress.advance(n - ctx.progress.done)


def run(ctx) -> None:
    pool_path = ctx.input("questions") / "pool.jsonl"
    items = read_pool(pool_path)
    ctx.progress.set_total(len(items))
    sec = ctx.recipe.proofs
    if not items or not sec.enabled:
        rows = [{**q.to_dict(), "reason": "proofs disabled" if items else ""} for q in items]
        write_jsonl(ctx.out / "pool_validated.jsonl", rows)
        ctx.progress.advance(len(items))
        ctx.summary.update(enabled=bool(sec.enabled), by_status={}, sandbox="none")
        return
    proofs = need_module("builder.proofs.pool", "issue 5, proofs")
    run_mod = need_module("builder.proofs.run", "issue 5, proofs")
    kind = run_mod.resolve_sandbox(sec.sandbox)
    tasks = {t.instance_id: t for t in read_tasks(ctx.input("ingest"))}
    asked = [tasks[iid] for iid in sorted({q.instance_id for q in items})]
    repos_dir, repos_info = materialize(ctx.recipe, ctx.cache.root, asked)
    images = build_images(ctx.recipe, asked) if kind == "docker" and not sec.image else {}
    # The proofs runner reads a task's gold patch, repository name and image from a tasks file.
    tasks_rows = [{"instance_id": t.instance_id, "repo": t.repo, "image_name": t.image_name,
                   "patch": t.patch if sec.gold_patch else ""} for t in asked]
    work = ctx.out / "_volatile"
    work.mkdir()
    write_jsonl(work / "proof_tasks.jsonl", tasks_rows)
    cache_dir = ctx.cache.root / "items" / "proofs"
    cache_dir.mkdir(parents=True, exist_ok=True)
    base = len(list(cache_dir.glob("*.json")))
    stop = threading.Event()
    watcher = threading.Thread(target=_watch, args=(stop, cache_dir, ctx, base), daemon=True)
    watcher.start()
    try:
        summary = proofs.validate_pool(pool_path, repos_dir, work / "pool_raw.jsonl", image=sec.image or None,
                                       sandbox=kind,
                                       jobs=sec.jobs, cache_dir=cache_dir, tasks_path=work / "proof_tasks.jsonl",
                                       timeout_s=sec.timeout_s, progress=False)
    finally:
        stop.set()
        watcher.join()
    rows, timings = [], []
    for _, row in read_jsonl(work / "pool_raw.jsonl"):
        row["proof_report"], timing = strip_volatile(row.get("proof_report"), row["question_id"])
        rows.append(row)
        timings.append(timing)
    write_jsonl(ctx.out / "pool_validated.jsonl", rows)
    write_jsonl(work / "proof_timings.jsonl", timings)
    (work / "pool_raw.jsonl").unlink()
    ctx.progress.done = 0
    ctx.progress.advance(len(rows), failed=sum(1 for r in rows if r["status"] != "accepted"))
    write_json(ctx.out / "repos.json", repos_info)
    used = sorted({(r.get("proof_report") or {}).get("image") or "" for r in rows} - {""})
    ctx.summary.update(enabled=True, sandbox=kind, image=", ".join(used), images_built=images,
                       accepted=summary.get("accepted", 0), rejected=summary.get("rejected", 0),
                       error=summary.get("error", 0), by_status=dict(sorted(summary.get("by_status", {}).items())),
                       rejected_by_cause=dict(sorted(summary.get("rejected_by_cause", {}).items())),
                       rejected_before_proof=summary.get("not_run", 0),
                       rejected_by_reason=dict(sorted(Counter(r["reason"] for r in rows
                                                              if r["status"] != "accepted").items())),
                       gold_patch=bool(sec.gold_patch), repos=repos_info.get("kind"))
