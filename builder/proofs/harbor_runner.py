"""The ``harbor`` sandbox: proofs on Harbor environments, one environment per task image, many tasks at once.

Harbor needs Python >= 3.12 and lives in its own venv; the builder drives a worker there
(:mod:`swe_taskflow_harbor.proof_worker`, JSON lines over a pipe; docs/proofs.md says why) through a
:class:`Backend`. The scheduling is the builder's and is the same for every backend (the worker, or
the simulated one of :mod:`.harbor_sim` that benchmarks/scale_bench.py measures):

- a bounded pool over tasks (``concurrency``): each task's environment is started once, every proof of
  the task runs in it from a clean state (the worker resets ``/repo`` and checks its tree hash), then it
  is stopped;
- an environment that fails to start or dies is retried ``retries`` times with exponential backoff, on a
  fresh environment, for the items not yet judged; after that each remaining item gets an
  ``infrastructure-error`` report saying so (never a failed proof, never dropped);
- a finished item's report is cached under a key computed before any environment starts (the host tree
  hash when a checkout exists, else the image), so a rerun resumes where a build stopped, at any
  concurrency; a task whose items are all cached starts no environment;
- an interrupt closes the worker's input: the worker stops and removes every environment it started.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import subprocess
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, Sequence

from swe_taskflow.errors import SandboxError
from swe_taskflow.hashing import sha256_hex
from swe_taskflow.proofs import PASSED, ProofFacts, ProofReport, RunFacts, classify_run, infrastructure_report

from .. import hygiene
from ..resources import builder_path
from .capture import BoundedCapture, run_facts
from .script import owner_write_refused
from .config import ProofConfig
from .script import script_command

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
    """One proof of a task: the script, the gold patch ("" none) and the key its report is cached under."""

    index: int
    script: str
    patch: str
    cache_key: str


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

    def eta_s(self) -> float | None:
        """Seconds left at the rate so far (None before the first item)."""
        if not self.items_done:
            return None
        rate = (time.monotonic() - self.t0) / self.items_done
        return rate * (self.items_total - self.items_done)

    def line(self) -> str:
        eta = self.eta_s()
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
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HARBOR_TELEMETRY": "0"}
        # its own session: a Ctrl-C of the build reaches the worker as end of input, never half-way
        self.proc = subprocess.Popen([str(python), "-m", "swe_taskflow_harbor.proof_worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env, text=True, start_new_session=True)
        self._ids = itertools.count(1)
        self._waiting: dict[int, Future] = {}
        self._lock = threading.Lock()
        ready = self.proc.stdout.readline()
        if not ready:
            raise SandboxError("the Harbor proof worker did not start", hint=f"run {python} -m "
                               "swe_taskflow_harbor.proof_worker to see why")
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
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

    def request(self, op: str, **body: Any) -> dict[str, Any]:
        fut: Future = Future()
        with self._lock:
            rid = next(self._ids)
            self._waiting[rid] = fut
            try:
                self.proc.stdin.write(json.dumps({"id": rid, "op": op, **body}) + "\n")
                self.proc.stdin.flush()
            except (BrokenPipeError, ValueError, OSError):
                self._waiting.pop(rid, None)
                return {"ok": False, "error": "the Harbor proof worker exited"}
        return fut.result()

    def start(self, task: HarborTask) -> tuple[str, str, str]:
        got = self.request("start", environment=self.environment, kwargs=self.kwargs, image=task.image,
                           repo_path=task.repo_path, upload=task.upload, label=task.key)
        if not got.get("ok"):
            raise EnvironmentFailed(got.get("error") or "the environment did not start")
        return got["env"], got["tree"], got.get("head") or ""

    def run(self, env: str, script: str, patch: str, config: ProofConfig) -> dict[str, Any]:
        got = self.request("run", env=env, script=script, patch=patch, limits=config.limits())
        if not got.get("ok"):
            raise EnvironmentFailed(got.get("error") or "the environment failed")
        return got

    def stop(self, env: str) -> None:
        self.request("stop", env=env)

    def close(self) -> None:
        """End of input: the worker stops every environment it started, then exits."""
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
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
    out = BoundedCapture(config.max_output_bytes, keep_head=config.excerpt_chars * 4)
    err = BoundedCapture(config.max_output_bytes, keep_head=0, keep_tail=config.stderr_bytes)
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
    command = script_command(item.script)   # as the worker runs it (and docker would)
    base = facts_of(backend.run(env, item.script, "", config), config, command)
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


def prove_tasks(work: Sequence[tuple[HarborTask, Sequence[HarborItem]]], backend: Backend, config: ProofConfig, *,
                sandbox: str, image_ids: Mapping[str, str], scheduling: Scheduling = Scheduling(),
                on_done: Callable[[int, ProofReport], None], progress: Progress | None = None,
                sleep: Callable[[float], None] = time.sleep) -> Progress:
    """Prove every item of every task; ``on_done(index, report)`` exactly once per item, whatever fails."""
    progress = progress or Progress()
    progress.items_total += sum(len(items) for _, items in work)
    stopping = threading.Event()

    def bump(**counts: int) -> None:
        with progress.lock:
            for k, v in counts.items():
                setattr(progress, k, getattr(progress, k) + v)

    def one_task(task: HarborTask, items: Sequence[HarborItem]) -> None:
        left = list(items)
        image_id = image_ids.get(task.image, "")
        last_error = ""
        for attempt in range(scheduling.retries + 1):
            if not left or stopping.is_set():
                break
            if attempt:
                bump(retries=1)
                sleep(scheduling.backoff_s * 2 ** (attempt - 1))
            try:
                env, tree, head = backend.start(task)
            except EnvironmentFailed as exc:
                bump(start_failures=1)
                last_error = f"the environment did not start: {exc}"
                continue
            bump(environments_running=1, environments_started=1)
            try:
                wrong = (f"the repository at {task.repo_path} in {task.image} is at commit {head or 'none'}, not the "
                         f"task's base_commit {task.base_commit}" if task.base_commit and head != task.base_commit
                         else f"the repository in {task.image} has tree {tree}, not the checkout's "
                              f"{task.expected_tree}" if task.expected_tree and tree != task.expected_tree else "")
                while wrong and left:
                    on_done(left.pop(0).index, infrastructure_report(wrong, sandbox=sandbox, image=task.image,
                                                                     limits=config.limits()))
                    bump(items_done=1, infra_failures=1)
                while left and not stopping.is_set():
                    report = prove_in(backend, env, left[0], config, sandbox=sandbox, image=task.image,
                                      image_id=image_id)
                    on_done(left.pop(0).index, report)
                    bump(items_done=1)
            except EnvironmentFailed as exc:
                last_error = f"the environment failed: {exc}"
            finally:
                bump(environments_running=-1)
                try:
                    backend.stop(env)
                except EnvironmentFailed:
                    pass
        for item in left:   # never lost: an infrastructure failure, distinct from a failed proof
            why = f"{last_error or 'interrupted'} (after {scheduling.retries + 1} attempts)"
            on_done(item.index, infrastructure_report(why, sandbox=sandbox, image=task.image,
                                                      limits=config.limits()))
            bump(items_done=1, infra_failures=1)

    pool = ThreadPoolExecutor(max_workers=max(1, int(scheduling.concurrency)))
    try:
        futures = [pool.submit(one_task, task, items) for task, items in work if items]
        for fut in as_completed(futures):
            fut.result()
    except BaseException:   # Ctrl-C, SIGTERM: start nothing more; the worker stops every environment it started
        stopping.set()
        hygiene.kill_active()
        pool.shutdown(wait=True, cancel_futures=True)
        hygiene.CANCELLED.clear()
        raise
    pool.shutdown(wait=True)
    return progress


def run_once(repo: Path, script: str, *, image: str, config: ProofConfig,
             environment: str = DEFAULT_ENVIRONMENT) -> RunFacts:
    """The :class:`builder.proofs.sandbox.Sandbox` seam: ``script`` once against the host folder ``repo``
    (uploaded into one environment of ``image``), tree hashes from inside the environment."""
    backend = WorkerBackend(environment)
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


def prove_one(repo: Path, script: str, *, image: str, image_id: str, cache_key: str, gold_patch: str | None,
              config: ProofConfig, environment: str = DEFAULT_ENVIRONMENT,
              environment_kwargs: Mapping[str, Any] | None = None) -> ProofReport:
    """``run_proof(sandbox="harbor")``: the host checkout uploaded into one environment of ``image``."""
    sandbox = sandbox_name(environment)
    got: list[ProofReport] = []
    backend = WorkerBackend(environment, environment_kwargs)
    try:
        prove_tasks([(HarborTask(key=Path(repo).name, image=image, upload=str(Path(repo).resolve())),
                      [HarborItem(0, script, gold_patch or "", cache_key)])], backend, config, sandbox=sandbox,
                    image_ids={image: image_id}, scheduling=Scheduling(concurrency=1, retries=1, backoff_s=1.0),
                    on_done=lambda _i, report: got.append(report))
    finally:
        backend.close()
    return got[0]


__all__ = ["prove_one", "run_once", "sandbox_name", "Backend", "DEFAULT_ENVIRONMENT", "DEFAULT_REPO_PATH", "EnvironmentFailed", "HarborItem", "HarborTask",
           "Progress", "Scheduling", "WorkerBackend", "facts_of", "harbor_available", "harbor_python",
           "prove_in", "prove_tasks"]
