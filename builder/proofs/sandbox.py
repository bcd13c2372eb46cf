"""The sandbox seam: where one untrusted proof script runs once against a read-only repository.

Three adapters, docker, bubblewrap and harbor, behind one small protocol; the docker SDK stays lazy inside
the docker adapter (a missing SDK or daemon is one SandboxError line, as before).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from swe_taskflow.proofs import RunFacts

from . import bwrap_runner, docker_runner
from .config import ProofConfig


@runtime_checkable
class Sandbox(Protocol):
    """Runs ``script`` once against ``repo`` (read-only at /repo); tree hashes are the caller's."""

    name: str

    def run(self, repo: Path, script: str, *, image: str, config: ProofConfig) -> RunFacts: ...


class DockerSandbox:
    name = "docker"

    def run(self, repo: Path, script: str, *, image: str, config: ProofConfig) -> RunFacts:
        return docker_runner.run_in_docker(repo, script, image=image, config=config)


class BwrapSandbox:
    """Bubblewrap on the host toolchain: ``image`` is not used (the report says ``host``)."""

    name = "bwrap"

    def run(self, repo: Path, script: str, *, image: str, config: ProofConfig) -> RunFacts:
        return bwrap_runner.run_in_bwrap(repo, script, config=config)


class HarborSandbox:
    """A Harbor environment of ``image`` (builder.proofs.harbor_runner; the pool and ``run_proof`` use one
    environment per task instead, this seam runs one script in a fresh one)."""

    name = "harbor"

    def run(self, repo: Path, script: str, *, image: str, config: ProofConfig) -> RunFacts:
        from .harbor_runner import run_once   # lazy: it starts a worker in Harbor's venv

        return run_once(repo, script, image=image, config=config)


#: The resolved sandboxes (``auto`` resolves to one of them, see run.resolve_sandbox).
SANDBOX_ADAPTERS: dict[str, Sandbox] = {"docker": DockerSandbox(), "bwrap": BwrapSandbox(), "harbor": HarborSandbox()}


__all__ = ["Sandbox", "DockerSandbox", "BwrapSandbox", "HarborSandbox", "SANDBOX_ADAPTERS"]
