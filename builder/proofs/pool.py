"""Validate a question pool: every row's proof, in parallel, resumable, nothing dropped.

Repository lookup for a question: ``repos_dir/<instance_id>`` if that folder exists, else
``repos_dir/<repo with "/" replaced by "__">`` (the repo name comes from the tasks file, or from the
instance id's ``owner__name-NNN`` prefix when no tasks file is given).
"""

from __future__ import annotations

import json
import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Mapping

from swe_taskflow.errors import InputError, SandboxError
from swe_taskflow.jsonl import read_jsonl, read_records, write_jsonl
from swe_taskflow.proofs import INFRA_ERROR, PASSED, ProofReport, infrastructure_report, rejection_cause
from swe_taskflow.safepath import inside
from swe_taskflow.schema import QAItem

from .. import hygiene
from .config import ProofConfig
from .run import cache_key, image_identity, resolve_sandbox, run_proof
from .treehash import tree_hash


class ProofCache:
    """Finished reports keyed by :func:`cache_key`; infrastructure errors are never cached."""

    def __init__(self, cache_dir: str | os.PathLike | None) -> None:
        self.dir = None if cache_dir is None else Path(cache_dir)
        if self.dir is not None:
            self.dir.mkdir(parents=True, exist_ok=True)

    def get(self, key: str) -> ProofReport | None:
        if self.dir is None or not key:
            return None
        path = self.dir / f"{key}.json"
        if not path.exists():
            return None
        try:
            return ProofReport.from_dict(json.loads(path.read_text(encoding="utf-8")), where=str(path))
        except (ValueError, InputError):
            return None   # a damaged entry is recomputed

    def put(self, key: str, report: ProofReport) -> None:
        if self.dir is None or not key or report.status == INFRA_ERROR:
            return
        from swe_taskflow.jsonl import write_json

        write_json(self.dir / f"{key}.json", report.to_dict())


def repo_for(repos_dir: Path, instance_id: str, repo_name: str | None) -> Path | None:
    """The documented lookup: ``<instance_id>`` first, then ``<owner>__<name>``.

    Both names come from data: one that leaves ``repos_dir`` (absolute, ``..``, a link out) raises
    InputError naming the field, so a row can never choose which host folder a sandbox mounts.
    """
    direct = inside(repos_dir, instance_id, field="instance_id")
    if direct.is_dir():
        return direct
    if not repo_name:
        m = re.match(r"^(?:instance_)?([\w.-]+?)__([\w.-]+?)-", instance_id)
        repo_name = f"{m.group(1)}/{m.group(2)}" if m else None
    if repo_name:
        cand = inside(repos_dir, repo_name.replace("/", "__"), field="repo")
        if cand.is_dir():
            return cand
    return None


def _load_tasks(tasks_path: str | os.PathLike | None) -> dict[str, Mapping[str, Any]]:
    if tasks_path is None:
        return {}
    tasks: dict[str, Mapping[str, Any]] = {}
    for lineno, obj in read_jsonl(tasks_path):
        if "instance_id" not in obj:
            raise InputError("missing field", path=str(tasks_path), row=lineno, field="instance_id")
        tasks[obj["instance_id"]] = obj
    return tasks


def _rejected_before_proof(item: QAItem) -> bool:
    return item.status == "rejected" and item.proof_report is None


def validate_pool(pool_path, repos_dir, out_path, *, image: str | None = None, sandbox: str = "auto",
                  jobs: int = 2, cache_dir=None, tasks_path=None, config: ProofConfig | None = None,
                  timeout_s: float | None = None, progress: bool = True) -> dict[str, Any]:
    """Run every question's proof and write the pool back with ``proof_report``, ``status`` and ``reason``.

    accepted = proof passed; rejected = a failed proof (reason = its status, and for ``patch-mismatch``
    whether the output drifted or the run after the patch failed); error = the sandbox could not judge
    (infrastructure-error). A row already rejected before any proof ran (by generation checks) is kept
    as it is: no proof can accept it. With ``tasks_path`` (Task JSONL) a task's ``patch`` is the
    gold patch, its ``repo`` names the repository folder and (Docker, without ``image``) its
    ``image_name`` is the image to run in. ``jobs`` bounds the containers at once.
    Returns ``{"total", "accepted", "rejected", "error", "cached", "by_status", "rejected_by_cause",
    "not_run", "sandbox"}`` (``rejected_by_cause``: output-drift / failure, see
    :func:`swe_taskflow.proofs.rejection_cause`).
    """
    if int(jobs) < 1:
        from swe_taskflow.errors import ConfigError

        raise ConfigError("jobs must be at least 1", field="jobs", actual=jobs)
    config = config or ProofConfig()
    if timeout_s is not None:
        from dataclasses import replace

        config = replace(config, timeout_s=float(timeout_s))
    repos_dir = Path(repos_dir)
    items: list[QAItem] = read_records(pool_path, QAItem, unique="question_id")
    tasks = _load_tasks(tasks_path)
    kind = resolve_sandbox(sandbox)
    identities: dict[str, tuple[str, str, str, str] | str] = {}
    id_lock = threading.Lock()

    def identity(name: str | None) -> tuple[str, str, str, str] | str:
        """(sandbox, image, id, digest) for an image, or the infrastructure error saying why not; memoized."""
        with id_lock:
            if name not in identities:
                try:
                    identities[name] = (kind, *image_identity(kind, name))
                except SandboxError as exc:
                    identities[name] = str(exc)
            return identities[name]

    default = identity(image)
    image_name, img_id = (default[1], default[2]) if isinstance(default, tuple) else (image or "", "")
    cache = ProofCache(cache_dir)

    refused: dict[str, str] = {}

    def one(item: QAItem) -> tuple[ProofReport | None, bool]:
        task = tasks.get(item.instance_id, {})
        # --image wins; else (docker) the task's own image_name; else the local test image
        wanted = image or (task.get("image_name") if kind == "docker" else None) or None
        resolved = identity(wanted) if wanted != image else default
        if isinstance(resolved, str):
            return infrastructure_report(resolved, sandbox=kind, image=wanted or image_name,
                                         limits=config.limits()), False
        try:
            repo = repo_for(repos_dir, item.instance_id, task.get("repo"))
        except InputError as exc:   # the row names a folder outside --repos: rejected, never mounted
            refused[item.question_id] = f"refused: {exc.field}: {exc.message} ({exc.actual!r})"
            return None, False
        if repo is None:
            return infrastructure_report(f"no repository folder for {item.instance_id} under {repos_dir}",
                                         sandbox=kind, image=resolved[1], limits=config.limits()), False
        if not item.proof_script.strip():
            from swe_taskflow.proofs import ProofFacts, RunFacts

            facts = ProofFacts(base=RunFacts(not_run="empty proof script"))
            return ProofReport.from_facts(facts, sandbox=kind, image=resolved[1], image_id=resolved[2],
                                          image_digest=resolved[3], limits=config.limits()), False
        patch = task.get("patch") or None
        try:
            key = cache_key(item.proof_script, resolved[2], tree_hash(repo), patch, config, kind)
        except SandboxError:
            key = ""
        hit = cache.get(key)
        if hit is not None:
            return hit, True
        report = run_proof(repo, item.proof_script, image=resolved[1], sandbox=kind, timeout_s=config.timeout_s,
                           gold_patch=patch, config=config, _resolved=resolved)
        cache.put(report.cache_key, report)
        return report, False

    from tqdm import tqdm

    results: list[tuple[ProofReport, bool] | None] = [None] * len(items)
    todo = [i for i, item in enumerate(items) if not _rejected_before_proof(item)]
    pool = ThreadPoolExecutor(max_workers=int(jobs))
    try:
        with tqdm(total=len(todo), desc="proofs", unit="q", disable=not progress or None) as bar:
            futures = {pool.submit(one, items[i]): i for i in todo}
            from concurrent.futures import as_completed

            for fut in as_completed(futures):
                i = futures[fut]
                try:
                    results[i] = fut.result()
                except SandboxError as exc:
                    results[i] = (infrastructure_report(str(exc), sandbox=kind, image=image_name,
                                                        limits=config.limits()), False)
                bar.update(1)
    except BaseException:   # Ctrl-C, SIGTERM: stop the running sandboxes now, start no other
        hygiene.kill_active()
        pool.shutdown(wait=True, cancel_futures=True)
        hygiene.CANCELLED.clear()
        raise
    pool.shutdown(wait=True)
    rows = []
    summary: dict[str, Any] = {"total": len(items), "accepted": 0, "rejected": 0, "error": 0, "cached": 0,
                               "by_status": {}, "rejected_by_cause": {}, "not_run": 0, "sandbox": kind,
                               "image": image_name, "image_id": img_id}
    for item, res in zip(items, results):
        if res is None:                       # rejected before any proof: kept with its own reason
            rows.append(item.to_dict())
            summary["rejected"] += 1
            summary["not_run"] += 1
            continue
        report, was_cached = res
        if report is None:                    # names a folder outside --repos: refused, never mounted
            rows.append({**item.to_dict(), "proof_report": None, "status": "rejected",
                         "reason": refused[item.question_id]})
            summary["rejected"] += 1
            summary["by_status"]["refused"] = summary["by_status"].get("refused", 0) + 1
            continue
        status = "accepted" if report.status == PASSED else "error" if report.status == INFRA_ERROR else "rejected"
        row = item.to_dict()
        cause, where = rejection_cause(report)
        reason = report.status
        if report.status == "patch-mismatch":
            reason += ": output drift" if cause == "output-drift" else ": failed after the gold patch"
        if cause:
            summary["rejected_by_cause"][cause] = summary["rejected_by_cause"].get(cause, 0) + 1
        row.update(proof_report=report.to_dict(), status=status, reason=reason)
        rows.append(row)
        summary[status] += 1
        summary["cached"] += int(was_cached)
        summary["by_status"][report.status] = summary["by_status"].get(report.status, 0) + 1
    write_jsonl(out_path, rows)
    return summary
