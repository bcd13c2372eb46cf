"""Validate a question pool: every row's proof, in parallel, resumable, nothing dropped.

:func:`validate_pool` takes typed items and returns typed results (the build's proofs stage calls it);
:func:`validate_pool_file` is the same over JSONL files (``swe-taskflow proofs validate``).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from swe_taskflow.errors import ConfigError, InputError, SandboxError
from swe_taskflow.jsonl import read_jsonl, read_records, write_jsonl
from swe_taskflow.progress import progress_bar
from swe_taskflow.proofs import INFRA_ERROR, PASSED, ProofReport, infrastructure_report, rejection_cause
from swe_taskflow.safepath import inside
from swe_taskflow.schema import QAItem

from swe_taskflow import hygiene
from ..json_cache import JsonCache
from .config import ProofConfig
from .run import cache_key, image_identity, resolve_sandbox, run_proof
from .gitsafe import tree_hash


def _cached(cache: JsonCache | None, key: str) -> ProofReport | None:
    """The finished report of ``key`` (:func:`cache_key`), None when absent or damaged (then recomputed)."""
    doc = cache.get(key) if cache is not None and key else None
    try:
        return None if doc is None else ProofReport.from_dict(doc, where=str(cache.path(key)))
    except (ValueError, InputError):
        return None


def repo_for(repos_dir: Path, instance_id: str, repo_name: str | None) -> Path | None:
    """The repository folder of a question: ``repos_dir/<instance_id>`` if that folder exists, else
    ``repos_dir/<owner>__<name>`` (the repo name from the tasks file, else the instance id's ``owner__name-NNN``
    prefix). Both names come from data: one that leaves ``repos_dir`` (absolute, ``..``, a link out) raises
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


@dataclass(frozen=True)
class ProofTask:
    """What a proof needs from its task: the repository name (folder lookup), the image to run in
    (Docker, when no image is forced) and the gold patch to re-run after (empty: none)."""

    repo: str = ""
    image_name: str = ""
    patch: str = ""
    #: The commit the repository must be at (checked by the harbor sandbox in the task's image; "" unchecked).
    base_commit: str = ""


@dataclass
class PoolSummary:
    """Counts of one validation (``rejected_by_cause``: output-drift / failure, see
    :func:`swe_taskflow.proofs.rejection_cause`; ``not_run``: rejected before any proof ran)."""

    total: int = 0
    accepted: int = 0
    rejected: int = 0
    error: int = 0
    cached: int = 0
    by_status: dict[str, int] = field(default_factory=dict)
    rejected_by_cause: dict[str, int] = field(default_factory=dict)
    not_run: int = 0
    sandbox: str = ""
    image: str = ""
    image_id: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class PoolResult:
    """Every input item, in order, with its ``proof_report``, ``status`` and ``reason``; and the counts."""

    items: list[QAItem]
    summary: PoolSummary


@dataclass(frozen=True)
class _Outcome:
    """One item's proof: its report (None when the item was refused before any sandbox) and whether cached."""

    report: ProofReport | None
    cached: bool = False
    refused: str = ""


class _Images:
    """(sandbox, image, id, digest) per image name, memoized; an image that cannot be resolved raises
    its SandboxError again on every lookup."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._seen: dict[str | None, tuple[str, str, str, str] | SandboxError] = {}
        self._lock = threading.Lock()

    def get(self, name: str | None) -> tuple[str, str, str, str]:
        with self._lock:
            if name not in self._seen:
                try:
                    self._seen[name] = (self.kind, *image_identity(self.kind, name))
                except SandboxError as exc:
                    self._seen[name] = exc
            got = self._seen[name]
        if isinstance(got, SandboxError):
            raise got
        return got


#: How a pool row says it is broken on purpose (the example's three: "a deliberately failing candidate:
#: its proof must be rejected"): its free-text ``note``, which QAItem does not keep.
DELIBERATE = re.compile(r"\bdeliberately (failing|broken)\b", re.IGNORECASE)


def deliberately_failing(pool_paths: Sequence[str | os.PathLike]) -> set[str]:
    """Question ids whose pool row's ``note`` says its proof is meant to fail. For display only: the
    build's progress says such failures were expected; nothing stored or released depends on it."""
    return {row.get("question_id") for path in pool_paths for _, row in read_jsonl(path)
            if DELIBERATE.search(str(row.get("note") or ""))}


def _rejected_before_proof(item: QAItem) -> bool:
    return item.status == "rejected" and item.proof_report is None


def _prove(item: QAItem, task: ProofTask, *, repos_dir: Path, image: str | None, images: _Images,
           cache: JsonCache | None, config: ProofConfig) -> _Outcome:
    """One item's proof: refused (a folder outside repos_dir), an infrastructure report, a cached or a fresh one."""
    kind = images.kind
    # --image wins; else (docker) the task's own image_name; else the local test image
    wanted = image or (task.image_name if kind == "docker" else None) or None
    try:
        resolved = images.get(wanted)
    except SandboxError as exc:
        return _Outcome(infrastructure_report(str(exc), sandbox=kind, image=wanted or "", limits=config.limits()))
    try:
        repo = repo_for(repos_dir, item.instance_id, task.repo or None)
    except InputError as exc:   # the row names a folder outside repos_dir: rejected, never mounted
        return _Outcome(None, refused=f"refused: {exc.field}: {exc.message} ({exc.actual!r})")
    if repo is None:
        return _Outcome(infrastructure_report(f"no repository folder for {item.instance_id} under {repos_dir}",
                                              sandbox=kind, image=resolved[1], limits=config.limits()))
    if not item.proof_script.strip():
        from swe_taskflow.proofs import ProofFacts, RunFacts

        facts = ProofFacts(base=RunFacts(not_run="empty proof script"))
        return _Outcome(ProofReport.from_facts(facts, sandbox=kind, image=resolved[1], image_id=resolved[2],
                                               image_digest=resolved[3], limits=config.limits()))
    patch = task.patch or None
    try:
        key = cache_key(item.proof_script, resolved[2], tree_hash(repo), patch, config, kind)
    except SandboxError:
        key = ""
    hit = _cached(cache, key)
    if hit is not None:
        return _Outcome(hit, cached=True)
    report = run_proof(repo, item.proof_script, image=resolved[1], sandbox=kind, timeout_s=config.timeout_s,
                       gold_patch=patch, config=config, _resolved=resolved)
    if cache is not None and report.cache_key and report.status != INFRA_ERROR:   # infrastructure errors: never
        cache.put(report.cache_key, report.to_dict())
    return _Outcome(report)


def _judge(item: QAItem, outcome: _Outcome | None, summary: PoolSummary) -> QAItem:
    """The item with its verdict (accepted / rejected / error, and why), counted into ``summary``."""
    def bump(counts: dict[str, int], key: str) -> None:
        counts[key] = counts.get(key, 0) + 1

    if outcome is None:                       # rejected before any proof: kept with its own reason
        summary.rejected += 1
        summary.not_run += 1
        return item
    report = outcome.report
    if report is None:                        # names a folder outside repos_dir: refused, never mounted
        summary.rejected += 1
        bump(summary.by_status, "refused")
        return dataclasses.replace(item, proof_report=None, status="rejected", reason=outcome.refused)
    status = "accepted" if report.status == PASSED else "error" if report.status == INFRA_ERROR else "rejected"
    cause, _ = rejection_cause(report)
    reason = report.status
    if report.status == "patch-mismatch":
        reason += ": output drift" if cause == "output-drift" else ": failed after the gold patch"
    if cause:
        bump(summary.rejected_by_cause, cause)
    setattr(summary, status, getattr(summary, status) + 1)
    summary.cached += int(outcome.cached)
    bump(summary.by_status, report.status)
    return dataclasses.replace(item, proof_report=report.to_dict(), status=status, reason=reason)


def _check_jobs(jobs: int) -> None:
    if int(jobs) < 1:
        raise ConfigError("jobs must be at least 1", field="jobs", actual=jobs)


def _prove_on_harbor(items: Sequence[QAItem], todo: Sequence[int], tasks: Mapping[str, ProofTask], repos_dir: Path,
                     image: str | None, images: _Images, cache: JsonCache | None, config: ProofConfig,
                     harbor: Mapping[str, Any], on_done: Callable[[int, _Outcome], None]) -> None:
    """The harbor sandbox: items grouped by task, one environment per task (builder.proofs.harbor_runner)."""
    from . import harbor_runner as hr

    environment = harbor.get("environment") or hr.DEFAULT_ENVIRONMENT
    sandbox = hr.sandbox_name(environment)
    work: dict[str, tuple[hr.HarborTask, list[hr.HarborItem]]] = {}
    image_ids: dict[str, str] = {}
    for i in todo:
        item, task = items[i], tasks.get(items[i].instance_id, ProofTask())
        wanted = image or task.image_name or None
        try:
            _, name, img_id, _ = images.get(wanted)
        except SandboxError as exc:
            on_done(i, _Outcome(infrastructure_report(str(exc), sandbox=sandbox, image=wanted or "",
                                                      limits=config.limits())))
            continue
        image_ids[name] = img_id
        try:
            repo = repo_for(repos_dir, item.instance_id, task.repo or None)
        except InputError as exc:
            on_done(i, _Outcome(None, refused=f"refused: {exc.field}: {exc.message} ({exc.actual!r})"))
            continue
        # the task's own image holds its repository (repo_path); a forced image gets the host checkout
        upload = str(repo.resolve()) if (image or not task.image_name) and repo is not None else ""
        if not upload and not task.image_name:
            on_done(i, _Outcome(infrastructure_report(f"no repository folder for {item.instance_id} under {repos_dir}",
                                                      sandbox=sandbox, image=name, limits=config.limits())))
            continue
        try:
            tree = tree_hash(repo) if repo is not None else f"image:{img_id or name}"
        except SandboxError:
            tree = f"image:{img_id or name}"
        key = cache_key(item.proof_script, img_id, tree, task.patch or None, config, sandbox)
        hit = _cached(cache, key)
        if hit is not None:
            on_done(i, _Outcome(hit, cached=True))
            continue
        group = f"{item.instance_id}@{name}"
        entry = work.setdefault(group, (hr.HarborTask(
            key=item.instance_id, image=name, upload=upload, repo_path=harbor.get("repo_path") or hr.DEFAULT_REPO_PATH,
            base_commit="" if upload else task.base_commit,
            expected_tree=tree if repo is not None and not upload and not tree.startswith("image:") else ""), []))
        entry[1].append(hr.HarborItem(i, item.proof_script, task.patch, key))
    if not work:
        return

    def done(i: int, report: ProofReport) -> None:
        if cache is not None and report.cache_key and report.status != INFRA_ERROR:
            cache.put(report.cache_key, report.to_dict())
        on_done(i, _Outcome(report))

    backend = harbor.get("backend") or hr.WorkerBackend(environment, harbor.get("environment_kwargs"))
    try:
        hr.prove_tasks([work[k] for k in sorted(work)], backend, config, sandbox=sandbox, image_ids=image_ids,
                       scheduling=hr.Scheduling(concurrency=int(harbor.get("concurrency") or 4)), on_done=done,
                       progress=harbor.get("progress"))
    finally:
        if harbor.get("backend") is None:
            backend.close()


def validate_pool(items: Sequence[QAItem], repos_dir: str | os.PathLike, *,
                  tasks: Mapping[str, ProofTask] | None = None, image: str | None = None, sandbox: str = "auto",
                  jobs: int = 2, cache_dir: str | os.PathLike | None = None, config: ProofConfig | None = None,
                  timeout_s: float | None = None,
                  on_item: Callable[[QAItem], None] | None = None,
                  harbor: Mapping[str, Any] | None = None) -> PoolResult:
    """Run every item's proof and return each item with ``proof_report``, ``status`` and ``reason``.

    accepted = proof passed; rejected = a failed proof (reason = its status, and for ``patch-mismatch``
    whether the output drifted or the run after the patch failed); error = the sandbox could not judge
    (infrastructure-error). An item already rejected before any proof ran (by generation checks) is kept
    as it is: no proof can accept it. ``tasks`` (by instance id) gives each proof its repository name,
    image and gold patch. ``jobs`` bounds the sandboxes at once; ``on_item`` is called with each judged
    item as its proof finishes (progress). ``harbor`` (sandbox ``harbor``): ``environment``,
    ``environment_kwargs``, ``concurrency`` (environments at once; ``jobs`` is not used there).
    """
    _check_jobs(jobs)
    config = config or ProofConfig()
    if timeout_s is not None:
        config = dataclasses.replace(config, timeout_s=float(timeout_s))
    images = _Images(resolve_sandbox(sandbox))
    try:
        _, image_name, img_id, _ = images.get(image)
    except SandboxError:
        image_name, img_id = image or "", ""
    summary = PoolSummary(total=len(items), sandbox=images.kind, image=image_name, image_id=img_id)
    if images.kind == "harbor":
        from .harbor_runner import DEFAULT_ENVIRONMENT, sandbox_name

        summary.sandbox = sandbox_name((harbor or {}).get("environment") or DEFAULT_ENVIRONMENT)
    tasks = tasks or {}
    cache = None if cache_dir is None else JsonCache(cache_dir)
    judged: list[QAItem] = list(items)
    todo = [i for i, item in enumerate(items) if not _rejected_before_proof(item)]

    def prove(i: int) -> _Outcome:
        try:
            return _prove(items[i], tasks.get(items[i].instance_id, ProofTask()), repos_dir=Path(repos_dir),
                          image=image, images=images, cache=cache, config=config)
        except SandboxError as exc:
            return _Outcome(infrastructure_report(str(exc), sandbox=images.kind, image=image_name,
                                                  limits=config.limits()))

    def done(i: int, outcome: _Outcome) -> None:
        judged[i] = _judge(items[i], outcome, summary)
        if on_item is not None:
            on_item(judged[i])

    if images.kind == "harbor":
        _prove_on_harbor(items, todo, tasks, Path(repos_dir), image, images, cache, config, harbor or {}, done)
    else:
        hygiene.run_threads([functools.partial(prove, i) for i in todo], int(jobs), lambda k, got: done(todo[k], got))
    for i, item in enumerate(items):
        if _rejected_before_proof(item):
            _judge(item, None, summary)
    return PoolResult(judged, summary)


def _load_tasks(tasks_path: str | os.PathLike | None) -> dict[str, ProofTask]:
    if tasks_path is None:
        return {}
    tasks: dict[str, ProofTask] = {}
    for lineno, obj in read_jsonl(tasks_path):
        if "instance_id" not in obj:
            raise InputError("missing field", path=str(tasks_path), row=lineno, field="instance_id")
        tasks[obj["instance_id"]] = ProofTask(repo=obj.get("repo") or "", image_name=obj.get("image_name") or "",
                                              patch=obj.get("patch") or "", base_commit=obj.get("base_commit") or "")
    return tasks


def validate_pool_file(pool_path, repos_dir, out_path, *, tasks_path=None, progress: bool = True,
                       **kwargs: Any) -> dict[str, Any]:
    """:func:`validate_pool` over files: the pool JSONL in, the validated pool JSONL out, the counts returned.

    ``tasks_path``: Task JSONL whose ``patch`` is the gold patch, ``repo`` names the repository folder
    and ``image_name`` (Docker, without ``image``) the image to run in.
    """
    _check_jobs(kwargs.get("jobs", 2))
    items: list[QAItem] = read_records(pool_path, QAItem, unique="question_id")
    tasks = _load_tasks(tasks_path)
    with progress_bar(len(items), desc="proofs", unit="q", enabled=bool(progress)) as advance:
        result = validate_pool(items, repos_dir, tasks=tasks, on_item=lambda _: advance(), **kwargs)
    write_jsonl(out_path, (q.to_dict() for q in result.items))
    return result.summary.to_dict()
