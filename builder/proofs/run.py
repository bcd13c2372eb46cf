"""``run_proof``: one question's proof, before and (with a gold patch) after the patch."""

from __future__ import annotations

import json
from dataclasses import fields, replace
from pathlib import Path
from typing import Any, Mapping

from swe_taskflow.errors import ConfigError, SandboxError
from swe_taskflow.hashing import sha256_hex
from swe_taskflow.proofs import PASSED, ProofFacts, ProofReport, RunFacts, classify_run, infrastructure_report

from ..hygiene import sweep_host
from . import bwrap_runner, docker_runner
from .config import SANDBOXES, ProofConfig
from .image import DEFAULT_IMAGE
from .patch import PatchError, patched_copy
from .sandbox import SANDBOX_ADAPTERS
from .treehash import tree_hash


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


def cache_key(script: str, image_id: str, tree: str, gold_patch: str | None, config: ProofConfig,
              sandbox: str) -> str:
    """sha256 of every input that determines a proof's outcome.

    Layout ``v: 1`` hashes ``json.dumps(sort_keys=True)`` (default separators, ASCII escapes), not
    :func:`swe_taskflow.hashing.sha256_json`: every published proof report records this key, so a
    change of bytes would change release content (CHANGELOG.md). A ``v: 2`` would move to sha256_json.
    """
    blob = json.dumps({"script": script, "image_id": image_id, "tree": tree, "sandbox": sandbox,
                       "patch": gold_patch or "", "limits": config.limits(), "v": 1}, sort_keys=True)
    return sha256_hex(blob.encode())


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
    if config is None and limits:
        known = {f.name for f in fields(ProofConfig)}
        config = ProofConfig(**{k: v for k, v in dict(limits).items() if k in known})
    config = config or ProofConfig()
    if timeout_s is not None:
        config = replace(config, timeout_s=float(timeout_s))
    repo = Path(repo_dir)
    if sandbox.partition(":")[0] == "harbor":   # "harbor" or what a report records, "harbor:<environment>"
        from .harbor_runner import DEFAULT_ENVIRONMENT, prove_one, sandbox_name

        resolve_sandbox("harbor")
        environment = sandbox.partition(":")[2] or DEFAULT_ENVIRONMENT
        name, img_id, _ = image_identity("harbor", image)
        if not repo.is_dir():
            return infrastructure_report(f"repository folder not found: {repo}", sandbox=sandbox_name(environment),
                                         image=name, limits=config.limits())
        key = cache_key(script, img_id, tree_hash(repo), gold_patch, config, sandbox_name(environment))
        return prove_one(repo, script, image=name, image_id=img_id, cache_key=key, gold_patch=gold_patch,
                         config=config, environment=environment)
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
