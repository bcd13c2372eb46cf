"""The sandbox the augmentation checks run in: the project's proof runners (builder.proofs).

Docker when a daemon answers (in the task's own image when it is available locally), bubblewrap
otherwise; the same limits, no network, the repository read-only. Runs on a patched copy (the
gold patch applied on the host, never in the repository) use :func:`builder.proofs.patch.patched_copy`.
"""

from __future__ import annotations

from pathlib import Path

from swe_taskflow.errors import SandboxError
from swe_taskflow.proofs import ProofReport, infrastructure_report

from ..proofs.config import ProofConfig
from ..proofs.patch import PatchError, patched_copy
from ..proofs.run import image_identity, resolve_sandbox, run_proof

DEFAULT_CONFIG = ProofConfig(timeout_s=120.0, mem_mb=1024, pids=128, tmpfs_mb=256, excerpt_chars=4000)


class CheckSandbox:
    """Runs check scripts against a repository checkout; one per build (identities are memoized)."""

    def __init__(self, sandbox: str = "auto", *, image: str | None = None,
                 config: ProofConfig = DEFAULT_CONFIG) -> None:
        self.kind = resolve_sandbox(sandbox)
        self.image = image
        self.config = config
        self._ids: dict[str | None, tuple[str, str, str, str] | str] = {}

    def identity(self, image: str | None) -> tuple[str, str, str, str] | str:
        """(sandbox, image, id, digest) for ``image``, or the infrastructure error saying why not."""
        image = image or self.image
        if image not in self._ids:
            try:
                self._ids[image] = (self.kind, *image_identity(self.kind, image))
            except SandboxError as exc:
                self._ids[image] = str(exc)
        return self._ids[image]

    def image_for(self, task_image: str) -> str | None:
        """The task's own image when Docker has it locally, else the configured one (or the test image)."""
        if self.kind not in ("docker", "harbor") or not task_image:   # harbor: its local environment runs it
            return self.image
        return task_image if isinstance(self.identity(task_image), tuple) else self.image

    def run(self, repo: Path, script: str, *, image: str | None = None) -> ProofReport:
        resolved = self.identity(image)
        if isinstance(resolved, str):
            return infrastructure_report(resolved, sandbox=self.kind, image=image or "", limits=self.config.limits())
        return run_proof(repo, script, image=resolved[1], sandbox=self.kind, timeout_s=None, config=self.config,
                         _resolved=resolved)

    def run_patched(self, repo: Path, patch: str, script: str, *, image: str | None = None) -> ProofReport:
        """``script`` on a temporary copy of ``repo`` with ``patch`` applied (the repository is untouched)."""
        try:
            tmp = patched_copy(repo, patch)
        except PatchError as exc:
            return infrastructure_report(f"gold patch: {exc}", sandbox=self.kind, image=image or "",
                                         limits=self.config.limits())
        with tmp:
            return self.run(Path(tmp.name, "repo"), script, image=image)

    @property
    def info(self) -> dict:
        return {"sandbox": self.kind, "image": self.image or "", "limits": self.config.limits()}

__all__ = ["CheckSandbox", "DEFAULT_CONFIG"]
