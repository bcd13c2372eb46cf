"""``run_proof``: one question's proof, before and (with a gold patch) after the patch.

Where the script runs once is the sandbox seam (:data:`SANDBOX_ADAPTERS`): docker, bubblewrap and harbor
behind one small protocol; the docker SDK stays lazy inside the docker adapter (a missing SDK or daemon is
one SandboxError line).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, runtime_checkable

from swe_taskflow.errors import ConfigError, SandboxError
from swe_taskflow.hashing import sha256_hex
from swe_taskflow.proofs import PASSED, ProofFacts, ProofReport, RunFacts, classify_run, infrastructure_report

from swe_taskflow.hygiene import sweep_host
from . import bwrap_runner, docker_runner
from .config import AUDITOR_CEILINGS, SANDBOXES, ProofConfig, cache_key
from .image import DEFAULT_IMAGE
from .gitsafe import PatchError, patched_copy, tree_hash


@runtime_checkable
class Sandbox(Protocol):
    """Runs ``script`` once against ``repo`` (read-only at /repo); tree hashes are the caller's."""

    name: str

    def run(self, repo: Path, script: str, *, image: str, config: ProofConfig) -> RunFacts: ...


@dataclass(frozen=True)
class _Adapter:
    name: str
    runner: Callable[..., RunFacts]

    def run(self, repo: Path, script: str, *, image: str, config: ProofConfig) -> RunFacts:
        return self.runner(repo, script, image=image, config=config)


def _in_bwrap(repo: Path, script: str, *, image: str, config: ProofConfig) -> RunFacts:
    return bwrap_runner.run_in_bwrap(repo, script, config=config)   # the host toolchain: the report says ``host``


def _in_harbor(repo: Path, script: str, *, image: str, config: ProofConfig) -> RunFacts:
    """One fresh Harbor environment of ``image`` (the pool and ``run_proof`` keep one per task instead)."""
    from .harbor_runner import run_once   # lazy: it starts a worker in Harbor's venv

    return run_once(repo, script, image=image, config=config)


#: The resolved sandboxes (``auto`` resolves to one of them, see :func:`resolve_sandbox`).
SANDBOX_ADAPTERS: dict[str, Sandbox] = {"docker": _Adapter("docker", docker_runner.run_in_docker),
                                        "bwrap": _Adapter("bwrap", _in_bwrap), "harbor": _Adapter("harbor", _in_harbor)}


def resolve_sandbox(sandbox: str) -> str:
    """``auto`` = docker when a daemon answers, else bwrap; SandboxError when neither exists."""
    if sandbox not in SANDBOXES:
        raise ConfigError("unknown sandbox", field="sandbox", actual=sandbox, expected=SANDBOXES)
    sweep_host()   # what a killed predecessor left: scratch folders and cgroups of dead owners
    if sandbox == "harbor":
        from .harbor_runner import harbor_available, harbor_python

        if not harbor_available():
            raise SandboxError(f"the harbor sandbox needs Harbor's venv: {harbor_python()} does not exist",
                               hint="make harbor-venv, or set SWE_TASKFLOW_HARBOR_VENV")
        return "harbor"
    if sandbox == "docker" or (sandbox == "auto" and docker_runner.docker_answers()):
        return "docker"
    if sandbox == "bwrap" or bwrap_runner.bwrap_available():
        return "bwrap"
    raise SandboxError("no proof sandbox: no Docker daemon answers and bubblewrap (bwrap) is not installed",
                       hint="start dockerd (.ci/start-docker.sh) or apt-get install bubblewrap")


def image_identity(sandbox: str, image: str | None) -> tuple[str, str, str]:
    """(image name, image id, registry digest or "") the proof runs with; SandboxError when a docker image is missing."""
    if sandbox == "docker":
        name = image or DEFAULT_IMAGE
        return (name, *docker_runner.image_info(docker_runner.docker_client(), name))
    if sandbox == "harbor":   # the image lives where the environment runs: its local id when Docker has it
        name = image or DEFAULT_IMAGE
        try:
            return (name, *docker_runner.image_info(docker_runner.docker_client(), name))
        except SandboxError:
            return name, "", ""
    return "host", bwrap_runner.host_toolchain_id(), ""


def _one_run(sandbox: str, repo: Path, script: str, image: str, config: ProofConfig) -> RunFacts:
    """Run once and add the host-side tree hashes before and after."""
    try:
        before = tree_hash(repo)
    except SandboxError as exc:
        return RunFacts(infra_error=str(exc))
    facts = SANDBOX_ADAPTERS[sandbox].run(repo, script, image=image, config=config)
    try:
        after = tree_hash(repo)
    except SandboxError as exc:
        return replace(facts, tree_sha_before=before, infra_error=facts.infra_error or str(exc))
    return replace(facts, tree_sha_before=before, tree_sha_after=after)


def _config(config: ProofConfig | None, limits: Mapping[str, Any] | None, timeout_s: float | None) -> ProofConfig:
    """The limits a run gets: ``config``, else a report's recorded ``limits``, else the defaults; ``timeout_s`` wins."""
    if config is None and limits:
        known = {f.name for f in fields(ProofConfig)}
        config = ProofConfig(**{k: v for k, v in dict(limits).items() if k in known})
    config = config or ProofConfig()
    if timeout_s is not None:
        config = replace(config, timeout_s=float(timeout_s))
    return config


def _at_most(value: Any, ceiling: Any) -> Any:
    """``value`` when it is a finite number at most ``ceiling``, else the ceiling."""
    import math

    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value <= ceiling
    return value if ok else ceiling


def capped(config: ProofConfig, ceilings: Mapping[str, Any]) -> ProofConfig:
    """``config`` with every limit at most the auditor's ceiling."""
    return replace(config, **{k: _at_most(getattr(config, k), c) for k, c in ceilings.items() if hasattr(config, k)})


def _is_harbor(sandbox: str) -> bool:
    return sandbox.partition(":")[0] == "harbor"   # "harbor" or what a report records, "harbor:<environment>"


def _harbor_call(repo: Path, script: str, image: str | None, sandbox: str, config: ProofConfig,
                 gold_patch: str | None):
    """(environment, ProofCall) of a harbor proof; SandboxError when Harbor's venv is missing."""
    from .harbor_runner import DEFAULT_ENVIRONMENT, ProofCall

    resolve_sandbox("harbor")
    name, img_id, _ = image_identity("harbor", image)
    return (sandbox.partition(":")[2] or DEFAULT_ENVIRONMENT,
            ProofCall(Path(repo), script, name, img_id, config, gold_patch or ""))


def run_proof(repo_dir, script: str, *, image: str | None = None, sandbox: str = "auto",
              timeout_s: float | None = 60, gold_patch: str | None = None,
              config: ProofConfig | None = None, limits: Mapping[str, Any] | None = None,
              _resolved: tuple[str, str, str, str] | None = None) -> ProofReport:
    """Run an untrusted proof script against a repository and return its report.

    The script runs in a sandbox (see docs/proofs.md) with the repository read-only at /repo. With a
    ``gold_patch`` it runs again on a patched temporary copy; both runs must pass with the same stdout.
    A sandbox that fails (missing image, daemon error, patch that does not apply) gives an
    ``infrastructure-error`` report; ``sandbox="auto"`` with neither Docker nor bwrap raises SandboxError.
    ``timeout_s`` overrides ``config.timeout_s``; pass ``None`` to keep the config's. ``limits``: the
    limits a published report records (``ProofReport.limits``), used when no ``config`` is given, so that
    ``verify --reprove`` re-runs a proof as it was run.
    """
    config = _config(config, limits, timeout_s)
    repo = Path(repo_dir)
    if _is_harbor(sandbox):
        from .harbor_runner import HarborSession

        environment, call = _harbor_call(repo, script, image, sandbox, config, gold_patch)
        # one environment for this proof, both runs (a caller with many proofs uses a ProofRunner)
        with HarborSession(environment) as session:
            return session.prove(call.repo, call.script, image=call.image, image_id=call.image_id, config=config,
                                 gold_patch=call.gold_patch)
    if _resolved is not None:
        kind, image_name, img_id, digest = _resolved
    else:
        kind = resolve_sandbox(sandbox)
        try:
            image_name, img_id, digest = image_identity(kind, image)
        except SandboxError as exc:
            return infrastructure_report(str(exc), sandbox=kind, image=image or "", limits=config.limits())
    if not repo.is_dir():
        return infrastructure_report(f"repository folder not found: {repo}", sandbox=kind, image=image_name,
                                     limits=config.limits())
    base = _one_run(kind, repo, script, image_name, config)
    patched, patch_error = None, ""
    if gold_patch and classify_run(base)[0] == PASSED:   # a failed base run decides alone
        try:
            tmp = patched_copy(repo, gold_patch)
        except PatchError as exc:
            patch_error = str(exc)
        else:
            with tmp:
                patched = _one_run(kind, Path(tmp.name, "repo"), script, image_name, config)
    facts = ProofFacts(base=base, patched=patched, patch_error=patch_error)
    key = cache_key(script, img_id, base.tree_sha_before, gold_patch, config, kind) if base.tree_sha_before else ""
    return ProofReport.from_facts(
        facts, sandbox=kind, image=image_name, image_id=img_id, image_digest=digest,
        gold_patch_sha256=sha256_hex(gold_patch.encode()) if gold_patch else "",
        limits=config.limits(), cache_key=key)


class ProofRunner:
    """``run_proof`` for an auditor with many proofs (``verify --reprove``), keeping Harbor environments per task.

    Called like :func:`run_proof`, but what runs is the auditor's to decide, never the caller's (a release):
    every call runs in ``sandbox`` (``auto``: docker when a daemon answers, else bubblewrap; ``harbor`` or
    ``harbor:<environment>`` only when the auditor names it), whatever sandbox a call asks for, and under
    ``ceilings`` (default :data:`~builder.proofs.config.AUDITOR_CEILINGS`): a call's limits are kept only where
    they are lower.
    Harbor proofs go through one :class:`~builder.proofs.harbor_runner.HarborSession` per Harbor environment:
    consecutive proofs of a task share its environment, and :meth:`run_many` (what
    ``swe_taskflow.verify.reprove_rows`` calls with every re-run at once) proves them grouped by task through the
    pool, one environment per task, ``concurrency`` tasks at once. Docker and bubblewrap proofs run one by one
    as :func:`run_proof` runs them. :meth:`close` (or leaving the ``with`` block) stops every environment.
    """

    def __init__(self, sandbox: str = "auto", *, concurrency: int = 4, ceilings: ProofConfig | None = None) -> None:
        self.sandbox = sandbox or "auto"
        self.concurrency = max(1, int(concurrency))
        #: What ``swe_taskflow.verify.reprove_rows`` reads to cap the limits it asks for (and this runner caps again).
        self.ceilings: dict[str, Any] = (ceilings or AUDITOR_CEILINGS).limits()
        self.sessions: dict[str, Any] = {}   # Harbor environment -> HarborSession

    def _own(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """``kwargs`` with the auditor's sandbox and the call's limits capped by the auditor's ceilings."""
        limits = kwargs.get("limits")   # a report's numbers: capped before they make a config
        limits = {k: _at_most(v, self.ceilings.get(k, v)) for k, v in dict(limits).items()} if limits else None
        timeout = kwargs.get("timeout_s", 60)
        config = _config(kwargs.get("config"), limits,
                         None if timeout is None else _at_most(timeout, self.ceilings["timeout_s"]))
        return {**kwargs, "sandbox": self.sandbox, "config": capped(config, self.ceilings), "limits": None,
                "timeout_s": None}

    def _session(self, environment: str):
        from .harbor_runner import HarborSession

        if environment not in self.sessions:
            self.sessions[environment] = HarborSession(environment)
        return self.sessions[environment]

    def _prepare(self, repo, script: str, kwargs: Mapping[str, Any]):
        """(environment, ProofCall) for a harbor proof, else None (kwargs as run_proof takes them)."""
        kwargs = self._own(kwargs)
        if not _is_harbor(self.sandbox):
            return None
        return _harbor_call(Path(repo), script, kwargs.get("image"), self.sandbox, kwargs["config"],
                            kwargs.get("gold_patch"))

    def __call__(self, repo_dir, script: str, **kwargs: Any) -> ProofReport:
        prepared = self._prepare(repo_dir, script, kwargs)
        if prepared is None:
            return run_proof(repo_dir, script, **self._own(kwargs))
        environment, call = prepared
        return self._session(environment).prove(call.repo, call.script, image=call.image, image_id=call.image_id,
                                                config=call.config, gold_patch=call.gold_patch)

    def run_many(self, calls) -> list[ProofReport]:
        """``(repo, script, kwargs)`` calls, reports in the same order; harbor ones batched per task."""
        got: list[ProofReport | None] = [None] * len(calls)
        harbor: dict[str, list[tuple[int, Any]]] = {}
        for i, (repo, script, kwargs) in enumerate(calls):
            prepared = self._prepare(repo, script, kwargs)
            if prepared is None:
                got[i] = self(repo, script, **kwargs)
            else:
                harbor.setdefault(prepared[0], []).append((i, prepared[1]))
        for environment, batch in harbor.items():
            reports = self._session(environment).prove_batch([c for _, c in batch], concurrency=self.concurrency)
            for (i, _), report in zip(batch, reports):
                got[i] = report
        return got   # type: ignore[return-value]

    @property
    def environments_started(self) -> int:
        return sum(s.progress.environments_started for s in self.sessions.values())

    def close(self) -> None:
        sessions, self.sessions = self.sessions, {}
        for session in sessions.values():
            session.close()

    def __enter__(self) -> "ProofRunner":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
