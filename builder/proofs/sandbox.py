"""The sandbox seam: where one untrusted proof script runs once against a read-only repository.

Two adapters, docker and bubblewrap, behind one small protocol; the docker SDK stays lazy inside
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


#: The resolved sandboxes (``auto`` resolves to one of them, see run.resolve_sandbox).
SANDBOX_ADAPTERS: dict[str, Sandbox] = {"docker": DockerSandbox(), "bwrap": BwrapSandbox()}


__all__ = ["Sandbox", "DockerSandbox", "BwrapSandbox", "SANDBOX_ADAPTERS"]
