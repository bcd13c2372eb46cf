"""The sandbox the augmentation checks run in: the project's proof runners (builder.proofs).

Docker when a daemon answers (in the task's own image when it is available locally), bubblewrap
otherwise; the same limits, no network, the repository read-only. Runs on a patched copy (the
gold patch applied on the host, never in the repository) use :func:`builder.proofs.gitsafe.patched_copy`.

With the ``harbor`` sandbox a task's checks share one Harbor environment
(:class:`builder.proofs.harbor_runner.HarborSession`): started on the task's first check, each check run from
the worker's clean state (a fresh copy of the uploaded checkout, tree hash checked, ``/tmp`` emptied), a
patched run with the patch applied inside it; :meth:`CheckSandbox.release` stops it when the task's checks
are done, :meth:`CheckSandbox.close` stops everything (the stage and the CLI call it in ``finally``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from swe_taskflow.errors import SandboxError
from swe_taskflow.proofs import ProofReport, infrastructure_report

from ..proofs.config import ProofConfig
from ..proofs.gitsafe import PatchError, patched_copy
from ..proofs.run import image_identity, resolve_sandbox, run_proof

DEFAULT_CONFIG = ProofConfig(timeout_s=120.0, mem_mb=1024, pids=128, tmpfs_mb=256, excerpt_chars=4000)


class CheckSandbox:
    """Runs check scripts against a repository checkout; one per build (identities are memoized)."""

    def __init__(self, sandbox: str = "auto", *, image: str | None = None,
                 config: ProofConfig = DEFAULT_CONFIG, environment: str = "",
                 environment_kwargs: Mapping[str, Any] | None = None) -> None:
        self.kind = resolve_sandbox(sandbox)
        self.image = image
        self.config = config
        self.environment = environment   # harbor: the Harbor environment ("" the project's local one)
        self.environment_kwargs = dict(environment_kwargs or {})
        self._ids: dict[str | None, tuple[str, str, str, str] | str] = {}
        self._session = None   # harbor: one environment per task, opened by the task's first check
        self._started_before = 0   # environments of sessions already closed

    def _harbor(self):
        if self._session is None:
            from ..proofs.harbor_runner import DEFAULT_ENVIRONMENT, HarborSession

            self._session = HarborSession(self.environment or DEFAULT_ENVIRONMENT, self.environment_kwargs)
        return self._session

    def release(self) -> None:
        """The current task's checks are done: stop its environment (harbor; nothing to do otherwise)."""
        if self._session is not None:
            self._session.release()

    def close(self) -> None:
        """Stop every environment and the Harbor worker (safe to call more than once, or with none)."""
        session, self._session = self._session, None
        if session is not None:
            self._started_before += session.progress.environments_started
            session.close()

    @property
    def environments_started(self) -> int:
        """Harbor environments this sandbox has started so far (0 for docker and bwrap)."""
        return self._started_before + (0 if self._session is None else self._session.progress.environments_started)

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

    def run(self, repo: Path, script: str, *, image: str | None = None, applied: str = "") -> ProofReport:
        """``script`` on ``repo`` (harbor: with ``applied`` applied to the environment's copy of it first)."""
        resolved = self.identity(image)
        if isinstance(resolved, str):
            return infrastructure_report(resolved, sandbox=self.kind, image=image or "", limits=self.config.limits())
        if self.kind == "harbor":
            return self._harbor().prove(repo, script, image=resolved[1], image_id=resolved[2], config=self.config,
                                        applied=applied)
        return run_proof(repo, script, image=resolved[1], sandbox=self.kind, timeout_s=None, config=self.config,
                         _resolved=resolved)

    def run_patched(self, repo: Path, patch: str, script: str, *, image: str | None = None) -> ProofReport:
        """``script`` on a temporary copy of ``repo`` with ``patch`` applied (the repository is untouched;
        harbor: applied to the environment's fresh copy of it, as the host applies it to the temporary one)."""
        if self.kind == "harbor":
            return self.run(repo, script, image=image, applied=patch)
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

    def __enter__(self) -> "CheckSandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

__all__ = ["CheckSandbox", "DEFAULT_CONFIG"]
