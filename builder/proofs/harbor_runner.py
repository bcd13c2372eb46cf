"""The ``harbor`` sandbox: proofs on Harbor environments, one environment per task image, many tasks at once.

Harbor needs Python >= 3.12 and lives in its own venv; the builder drives a worker there
(:mod:`swe_taskflow_harbor.proof_worker`, JSON lines over a pipe; docs/proofs.md says why) through a
:class:`Backend`. The scheduling is the builder's and is the same for every backend (the worker, or
the simulated one of ``tests/support/harbor_sim.py`` that benchmarks/scale_bench.py measures): a bounded
pool over tasks (:func:`prove_tasks`), each task's environment started once and retried on a fresh one
(:class:`TaskEnvironment`), every item reported exactly once, reports cached under a key computed before
any environment starts, and an interrupt closing the worker's input (it then stops every environment it
started). Callers that prove one script at a time keep a :class:`HarborSession`. docs/proofs.md ("The
harbor sandbox") describes each of these.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import itertools
import json
import os
import subprocess
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, Sequence

from swe_taskflow.errors import SandboxError
from swe_taskflow.hashing import sha256_hex
from swe_taskflow.proofs import PASSED, ProofFacts, ProofReport, RunFacts, classify_run, infrastructure_report

from swe_taskflow import hygiene
from ..resources import builder_path
from .config import ProofConfig, cache_key   # the key run_proof gives, so the reports are the same
from .script import captures, owner_write_refused, run_facts, script_command

#: Where the ``builder`` package (and the ``swe_taskflow_harbor`` plugins beside it) is imported from: the
#: worker's PYTHONPATH, and the default place of ``.harbor-venv`` in a source checkout.
ROOT = builder_path().resolve().parent
#: The project's Harbor environment on the local Docker daemon (network none, owner-labelled).
DEFAULT_ENVIRONMENT = "swe_taskflow_harbor.environment:DockerEnvironment"
#: Where SWE-Bench Pro images (and the bundled example's) hold the repository at its base commit.
DEFAULT_REPO_PATH = "/app"


class EnvironmentFailed(Exception):
    """An environment could not start or died: infrastructure, retried, never a verdict on a proof."""


class Backend(Protocol):
    """Starts, uses and stops environments (the worker, or a simulation)."""

    def start(self, task: "HarborTask") -> tuple[str, str, str]: ...   # (handle, pristine tree hash, HEAD or "")

    def run(self, env: str, script: str, patch: str, config: ProofConfig) -> dict[str, Any]: ...

    def stop(self, env: str) -> None: ...


@dataclass(frozen=True)
class HarborTask:
    """One task's environment: its image, where the repository lives in it (or a host folder to upload)."""

    key: str
    image: str
    repo_path: str = DEFAULT_REPO_PATH
    upload: str = ""
    #: What the environment's repository must be: its commit (the task's base_commit; "" unchecked) and its
    #: tree hash (the host checkout's when there is one; "" unchecked). A mismatch is an infrastructure error
    #: of every item of the task, not retried: another start gives the same image.
    base_commit: str = ""
    expected_tree: str = ""


@dataclass(frozen=True)
class HarborItem:
    """One proof of a task: the script, the gold patch ("" none) and the key its report is cached under.

    ``config``: this item's limits when they differ from the batch's (``verify --reprove`` re-runs each proof
    with the limits its report records). ``applied``: a patch applied before the item's only run (an
    augmentation check on the patched repository, ``CheckSandbox.run_patched``), as the host applies one to a
    patched copy; the report is then that run's, with no run after a gold patch.
    """

    index: int
    script: str
    patch: str
    cache_key: str
    config: ProofConfig | None = None
    applied: str = ""


@dataclass
class Progress:
    """What a build shows while the stage runs (and the scale benchmark prints)."""

    environments_running: int = 0
    environments_started: int = 0
    start_failures: int = 0
    retries: int = 0
    items_done: int = 0
    items_total: int = 0
    infra_failures: int = 0
    t0: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def bump(self, **counts: int) -> None:
        with self.lock:
            for k, v in counts.items():
                setattr(self, k, getattr(self, k) + v)

    def line(self) -> str:
        """The counts and the seconds left at the rate so far ("?" before the first item)."""
        done = self.items_done
        eta = (time.monotonic() - self.t0) / done * (self.items_total - done) if done else None
        return (f"environments running {self.environments_running}, items {self.items_done}/{self.items_total}, "
                f"infrastructure failures {self.infra_failures}, retries {self.retries}, "
                f"left ~{'?' if eta is None else f'{eta:.0f} s'}")


# ---------------------------------------------------------------------------------------------- worker


def harbor_python() -> Path:
    """The Harbor venv's interpreter (``SWE_TASKFLOW_HARBOR_VENV``, default ``.harbor-venv``)."""
    venv = Path(os.environ.get("SWE_TASKFLOW_HARBOR_VENV") or ROOT / ".harbor-venv")
    return venv / "bin" / "python"


def harbor_available() -> bool:
    return harbor_python().exists()


def worker_command(python: Path) -> list[str]:
    """The worker's command line: ``-P`` keeps the caller's folder off ``sys.path`` (Harbor's Python is >= 3.12),
    so an environment named ``module:Class`` is never a ``module.py`` of the folder an auditor stands in."""
    return [str(python), "-P", "-m", "swe_taskflow_harbor.proof_worker"]


def worker_env() -> dict[str, str]:
    """The worker's environment: the project first on ``PYTHONPATH``, no empty or relative entry (one would be the
    working folder again)."""
    extra = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and os.path.isabs(p)]
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *extra]), "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "HARBOR_TELEMETRY": "0"}


class WorkerBackend:
    """The worker in Harbor's venv, one per build; requests are answered concurrently (by ``id``)."""

    def __init__(self, environment: str = DEFAULT_ENVIRONMENT, environment_kwargs: Mapping[str, Any] | None = None,
                 python: Path | None = None) -> None:
        python = python or harbor_python()
        if not python.exists():
            raise SandboxError(f"the harbor sandbox needs Harbor's venv: {python} does not exist",
                               hint="make harbor-venv, or set SWE_TASKFLOW_HARBOR_VENV")
        self.environment = environment
        self.kwargs = dict(environment_kwargs or {})
        # its own session: a Ctrl-C of the build reaches the worker as end of input, never half-way
        self.proc = subprocess.Popen(worker_command(python), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=worker_env(), cwd=str(ROOT), text=True, start_new_session=True)
        self._ids = itertools.count(1)
        self._waiting: dict[int, Future] = {}
        self._lock = threading.Lock()
        ready = self.proc.stdout.readline()
        if not ready:
            raise SandboxError("the Harbor proof worker did not start", hint=f"run {python} -m "
                               "swe_taskflow_harbor.proof_worker to see why")
        threading.Thread(target=self._read, daemon=True).start()
        self._handle = hygiene.register(self.close)

    def _read(self) -> None:
        for line in self.proc.stdout:
            msg = json.loads(line)
            with self._lock:
                fut = self._waiting.pop(msg.get("id"), None)
            if fut is not None:
                fut.set_result(msg)
        with self._lock:   # the worker is gone: nobody waits forever
            for fut in self._waiting.values():
                fut.set_result({"ok": False, "error": "the Harbor proof worker exited"})
            self._waiting.clear()

    def request(self, op: str, failed: str = "", **body: Any) -> dict[str, Any]:
        """The worker's answer to ``op``; with ``failed``, one that is not ok raises EnvironmentFailed."""
        fut: Future = Future()
        with self._lock:
            rid = next(self._ids)
            self._waiting[rid] = fut
            try:
                self.proc.stdin.write(json.dumps({"id": rid, "op": op, **body}) + "\n")
                self.proc.stdin.flush()
            except (BrokenPipeError, ValueError, OSError):
                self._waiting.pop(rid, None)
                fut.set_result({"ok": False, "error": "the Harbor proof worker exited"})
        got = fut.result()
        if failed and not got.get("ok"):
            raise EnvironmentFailed(got.get("error") or failed)
        return got

    def start(self, task: HarborTask) -> tuple[str, str, str]:
        got = self.request("start", "the environment did not start", environment=self.environment,
                           kwargs=self.kwargs, image=task.image, repo_path=task.repo_path, upload=task.upload,
                           label=task.key)
        return got["env"], got["tree"], got.get("head") or ""

    def run(self, env: str, script: str, patch: str, config: ProofConfig) -> dict[str, Any]:
        return self.request("run", "the environment failed", env=env, script=script, patch=patch,
                            limits=config.limits())

    def stop(self, env: str) -> None:
        self.request("stop", env=env)

    def close(self) -> None:
        """End of input: the worker stops every environment it started, then exits."""
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
            try:
                self.proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        hygiene.unregister(self._handle)


# ---------------------------------------------------------------------------------------------- one run


def facts_of(got: dict[str, Any], config: ProofConfig, command: Sequence[str] = ()) -> RunFacts:
    """The worker's answer as the same facts a docker run gives (bounded capture, tree hashes from inside)."""
    if got.get("infra_error"):
        return RunFacts(infra_error=got["infra_error"])
    out, err = captures(config)
    out.feed(base64.b64decode(got["stdout"]))
    err.feed(base64.b64decode(got["stderr"]))
    facts = run_facts(out, err, exit_code=got["exit_code"], timed_out=bool(got["timed_out"]), oom_killed=False,
                      duration_s=float(got.get("duration_s") or 0.0), command=tuple(command),
                      excerpt_chars=config.excerpt_chars, write_refused=owner_write_refused)
    return replace(facts, tree_sha_before=got.get("tree_before") or "", tree_sha_after=got.get("tree_after") or "",
                   infra_error="" if got.get("tree_before") and got.get("tree_after") else
                   "hashing the repository in the environment failed")


def prove_in(backend: Backend, env: str, item: HarborItem, config: ProofConfig, *, sandbox: str, image: str,
             image_id: str) -> ProofReport:
    """One item in a started environment: the base run, and with a gold patch the run after it."""
    config = item.config or config
    command = script_command(item.script)   # as the worker runs it (and docker would)
    got = backend.run(env, item.script, item.applied, config)
    if got.get("patch_error"):   # the patch of an ``applied`` item: as the host's patched copy reports it
        return infrastructure_report(f"gold patch: {got['patch_error']}", sandbox=sandbox, image=image,
                                     limits=config.limits())
    base = facts_of(got, config, command)
    patched, patch_error = None, ""
    if item.patch and classify_run(base)[0] == PASSED:
        got = backend.run(env, item.script, item.patch, config)
        if got.get("patch_error"):
            patch_error = got["patch_error"]
        else:
            patched = facts_of(got, config, command)
    return ProofReport.from_facts(
        ProofFacts(base=base, patched=patched, patch_error=patch_error), sandbox=sandbox, image=image,
        image_id=image_id, gold_patch_sha256=sha256_hex(item.patch.encode()) if item.patch else "",
        limits=config.limits(), cache_key=item.cache_key)


# ---------------------------------------------------------------------------------------------- the pool


@dataclass(frozen=True)
class Scheduling:
    concurrency: int = 4
    retries: int = 3
    backoff_s: float = 2.0


class TaskEnvironment:
    """One task's environment, started on first use and kept for every run of the task until :meth:`close`.

    The one place an environment's life is decided, for the pool and for :class:`HarborSession`: it is
    started again, with backoff, up to ``scheduling.retries`` times (the attempts are the task's, not the
    item's); an image whose repository is not the task's (commit or tree) is not retried: another start
    gives the same image.
    """

    def __init__(self, backend: Backend, task: HarborTask, scheduling: Scheduling, *, sandbox: str,
                 image_id: str, bump: Callable[..., None], sleep: Callable[[float], None] = time.sleep) -> None:
        self.backend, self.task, self.scheduling = backend, task, scheduling
        self.sandbox, self.image_id, self.bump, self.sleep = sandbox, image_id, bump, sleep
        self.env: str | None = None
        self.attempts = 0
        self.last_error = ""
        self.wrong = ""

    def _open(self) -> str | None:
        """The running environment, started (again) while attempts are left; None when they are spent."""
        while self.env is None and self.attempts <= self.scheduling.retries:
            if self.attempts:
                self.bump(retries=1)
                self.sleep(self.scheduling.backoff_s * 2 ** (self.attempts - 1))
            self.attempts += 1
            try:
                env, tree, head = self.backend.start(self.task)
            except EnvironmentFailed as exc:
                self.bump(start_failures=1)
                self.last_error = f"the environment did not start: {exc}"
                continue
            self.env = env
            self.bump(environments_running=1, environments_started=1)
            task = self.task
            self.wrong = (f"the repository at {task.repo_path} in {task.image} is at commit {head or 'none'}, not "
                          f"the task's base_commit {task.base_commit}" if task.base_commit and head != task.base_commit
                          else f"the repository in {task.image} has tree {tree}, not the checkout's "
                               f"{task.expected_tree}" if task.expected_tree and tree != task.expected_tree else "")
        return self.env

    def failure(self, config: ProofConfig) -> ProofReport:
        """An item that will not run (attempts spent, or interrupted): an infrastructure failure, never lost."""
        self.bump(infra_failures=1)
        why = f"{self.last_error or 'interrupted'} (after {self.scheduling.retries + 1} attempts)"
        return infrastructure_report(why, sandbox=self.sandbox, image=self.task.image, limits=config.limits())

    def prove(self, item: HarborItem, config: ProofConfig) -> ProofReport:
        """``item`` from a clean state in this task's environment (started, or started again, as needed)."""
        while True:
            env = self._open()
            if env is None:
                return self.failure(item.config or config)
            if self.wrong:
                self.bump(infra_failures=1)
                return infrastructure_report(self.wrong, sandbox=self.sandbox, image=self.task.image,
                                             limits=(item.config or config).limits())
            try:
                return prove_in(self.backend, env, item, config, sandbox=self.sandbox, image=self.task.image,
                                image_id=self.image_id)
            except EnvironmentFailed as exc:   # it died: the item runs again on a fresh one
                self.last_error = f"the environment failed: {exc}"
                self.close()

    def close(self) -> None:
        """Stop the environment (if one runs); a later :meth:`prove` starts another."""
        env, self.env = self.env, None
        if env is None:
            return
        self.bump(environments_running=-1)
        with contextlib.suppress(EnvironmentFailed):
            self.backend.stop(env)


def prove_tasks(work: Sequence[tuple[HarborTask, Sequence[HarborItem]]], backend: Backend, config: ProofConfig, *,
                sandbox: str, image_ids: Mapping[str, str], scheduling: Scheduling = Scheduling(),
                on_done: Callable[[int, ProofReport], None], progress: Progress | None = None,
                sleep: Callable[[float], None] = time.sleep) -> Progress:
    """Prove every item of every task; ``on_done(index, report)`` exactly once per item, whatever fails."""
    progress = progress or Progress()
    progress.items_total += sum(len(items) for _, items in work)
    stopping = threading.Event()
    bump = progress.bump

    def one_task(task: HarborTask, items: Sequence[HarborItem]) -> None:
        te = TaskEnvironment(backend, task, scheduling, sandbox=sandbox, image_id=image_ids.get(task.image, ""),
                             bump=bump, sleep=sleep)
        left = list(items)
        try:
            while left and not stopping.is_set():
                report = te.prove(left[0], config)
                on_done(left.pop(0).index, report)
                bump(items_done=1)
        finally:
            te.close()
        for item in left:   # interrupted: never lost, an infrastructure failure distinct from a failed proof
            on_done(item.index, te.failure(item.config or config))
            bump(items_done=1)

    # Ctrl-C, SIGTERM: start nothing more; the worker stops every environment it started
    hygiene.run_threads([functools.partial(one_task, task, items) for task, items in work if items],
                        max(1, int(scheduling.concurrency)), lambda _i, _r: None, stopping)
    return progress


def run_once(repo: Path, script: str, *, image: str, config: ProofConfig) -> RunFacts:
    """The :class:`builder.proofs.run.Sandbox` seam: ``script`` once against the host folder ``repo``
    (uploaded into one environment of ``image``), tree hashes from inside the environment."""
    backend = WorkerBackend()
    try:
        env, _, _ = backend.start(HarborTask(key=Path(repo).name, image=image, upload=str(Path(repo).resolve())))
        try:
            return facts_of(backend.run(env, script, "", config), config, script_command(script))
        finally:
            backend.stop(env)
    except EnvironmentFailed as exc:
        return RunFacts(infra_error=f"harbor: {exc}")
    finally:
        backend.close()


def sandbox_name(environment: str) -> str:
    """What a report records: ``harbor:<environment>``."""
    return f"harbor:{environment}"


@dataclass(frozen=True)
class ProofCall:
    """One proof for :meth:`HarborSession.prove_batch`: what ``run_proof`` takes, the image already resolved."""

    repo: Path
    script: str
    image: str
    image_id: str
    config: ProofConfig
    gold_patch: str = ""


#: A session's environments are retried once, after 1 s: its callers (a check, an auditor's re-run) wait on it.
SESSION_SCHEDULING = Scheduling(concurrency=1, retries=1, backoff_s=1.0)


class HarborSession:
    """Harbor environments kept open across calls: one per task (image + host checkout) for all its proofs.

    For the callers that prove one script at a time (the augmentation checks, ``run_proof``, ``verify
    --reprove``): starting an environment per script costs a worker, a start and an upload each time. Each
    proof runs from the worker's clean state, so the evidence is what one environment per proof gives; the
    uploaded tree must be the host checkout's (else every proof of the task is an infrastructure error).

    At most ``max_open`` environments stay open (the least recently used is stopped first); :meth:`release`
    stops them when a caller is done with its task, :meth:`close` (or leaving the ``with`` block, also on an
    error or a KeyboardInterrupt) stops them and the worker. :meth:`prove_batch` proves independent proofs
    through the pool. Not thread-safe: one caller at a time.
    """

    def __init__(self, environment: str = DEFAULT_ENVIRONMENT, environment_kwargs: Mapping[str, Any] | None = None,
                 *, backend: Backend | None = None, scheduling: Scheduling = SESSION_SCHEDULING,
                 max_open: int = 1) -> None:
        self.environment = environment
        self.kwargs = dict(environment_kwargs or {})
        self.sandbox = sandbox_name(environment)
        self.scheduling = scheduling
        self.max_open = max(1, int(max_open))
        self.progress = Progress()
        self._backend, self._owns_backend = backend, backend is None
        self._open: dict[tuple[str, str], TaskEnvironment] = {}   # insertion order = least recently used first
        self._trees: dict[str, str] = {}

    @property
    def backend(self) -> Backend:
        """The worker, started on the first proof (a session that proves nothing starts nothing)."""
        if self._backend is None:
            self._backend = WorkerBackend(self.environment, self.kwargs)
        return self._backend

    def _tree(self, repo: Path) -> str:
        from .gitsafe import tree_hash

        if str(repo) not in self._trees:
            self._trees[str(repo)] = tree_hash(repo)
        return self._trees[str(repo)]

    def _key(self, script: str, image_id: str, tree: str, gold_patch: str, config: ProofConfig) -> str:
        return cache_key(script, image_id, tree, gold_patch or None, config, self.sandbox)

    def _task(self, repo: Path, image: str) -> HarborTask:
        return HarborTask(key=repo.name, image=image, upload=str(repo), expected_tree=self._tree(repo))

    def _checkout(self, repo: str | os.PathLike, image: str, config: ProofConfig) -> tuple[Path, str] | ProofReport:
        """(the resolved checkout, its tree hash), or the infrastructure report of a checkout that is not there."""
        repo = Path(repo).resolve()
        try:
            if not repo.is_dir():
                raise SandboxError(f"repository folder not found: {repo}")
            return repo, self._tree(repo)
        except SandboxError as exc:
            return infrastructure_report(str(exc), sandbox=self.sandbox, image=image, limits=config.limits())

    def prove(self, repo: str | os.PathLike, script: str, *, image: str, image_id: str, config: ProofConfig,
              gold_patch: str = "", applied: str = "") -> ProofReport:
        """``script`` against ``repo`` in the task's open environment (started on its first proof); with
        ``gold_patch`` again after it (as ``run_proof``), with ``applied`` once on the patched repository."""
        checked = self._checkout(repo, image, config)
        if isinstance(checked, ProofReport):
            return checked
        repo, tree = checked
        key = (image, str(repo))
        te = self._open.pop(key, None)
        if te is None:
            te = TaskEnvironment(self.backend, self._task(repo, image), self.scheduling, sandbox=self.sandbox,
                                 image_id=image_id, bump=self.progress.bump)
        self._open[key] = te   # the most recently used last
        while len(self._open) > self.max_open:
            self._open.pop(next(iter(self._open))).close()
        self.progress.bump(items_total=1)
        report = te.prove(HarborItem(0, script, gold_patch, "" if applied else
                                     self._key(script, image_id, tree, gold_patch, config), applied=applied), config)
        self.progress.bump(items_done=1)
        if applied and report.tree_sha_before:   # keyed by the patched tree, as run_proof on a patched copy
            report = replace(report, cache_key=self._key(script, image_id, report.tree_sha_before, "", config))
        return report

    def prove_batch(self, calls: Sequence[ProofCall], *, concurrency: int = 4) -> list[ProofReport]:
        """Independent proofs, grouped by task: one environment per task through the pool, the reports in order."""
        got: list[ProofReport | None] = [None] * len(calls)
        work: dict[tuple[str, str], tuple[HarborTask, list[HarborItem]]] = {}
        for i, call in enumerate(calls):
            checked = self._checkout(call.repo, call.image, call.config)
            if isinstance(checked, ProofReport):
                got[i] = checked
                continue
            repo, tree = checked
            task, items = work.setdefault((call.image, str(repo)), (self._task(repo, call.image), []))
            items.append(HarborItem(i, call.script, call.gold_patch,
                                    self._key(call.script, call.image_id, tree, call.gold_patch, call.config),
                                    config=call.config))
        if work:
            self.release()   # the pool starts its own environments: nothing of this session stays open beside them
            prove_tasks([work[k] for k in sorted(work)], self.backend, ProofConfig(), sandbox=self.sandbox,
                        image_ids={c.image: c.image_id for c in calls},
                        scheduling=replace(self.scheduling, concurrency=max(1, int(concurrency))),
                        on_done=got.__setitem__, progress=self.progress)
        missing = [i for i, r in enumerate(got) if r is None]
        if missing:   # prove_tasks reports every item exactly once: a gap is a bug, never a silent drop
            raise RuntimeError(f"no report for proofs {missing}")
        return got   # type: ignore[return-value]

    def release(self) -> None:
        """Stop every open environment (a caller done with its task); the worker stays for the next one."""
        while self._open:
            self._open.pop(next(iter(self._open))).close()

    def close(self) -> None:
        """Stop every environment and the worker (also what an interrupt does, through the worker's pipe)."""
        try:
            self.release()
        finally:
            if self._owns_backend and self._backend is not None:
                self._backend.close()
                self._backend = None

    def __enter__(self) -> "HarborSession":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["run_once", "sandbox_name", "Backend", "HarborSession", "ProofCall", "SESSION_SCHEDULING", "TaskEnvironment",
           "DEFAULT_ENVIRONMENT", "DEFAULT_REPO_PATH", "EnvironmentFailed", "HarborItem", "HarborTask", "Progress",
           "Scheduling", "WorkerBackend", "facts_of", "worker_command", "worker_env", "harbor_available", "harbor_python",
           "prove_in", "prove_tasks"]
