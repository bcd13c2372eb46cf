"""Proof reports and their verdicts: pure records and a pure classifier.

The sandbox runners (``builder/proofs``) only gather facts about a run (exit code, timeout, OOM,
output, repository tree hashes); :func:`classify_outcome` turns those facts into one status and a
reason. Keeping the decision pure makes it testable without containers and lets an auditor
re-derive every verdict from a published report.

Infrastructure errors (no image, the daemon failed, the patch does not apply) are never a failed
proof: they get ``infrastructure-error`` and a row keeps status ``error``, not ``rejected``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Mapping

from .errors import InputError
from .schema import (FAILED_EXIT, INFRA_ERROR, MODIFIED_REPO, NO_EVIDENCE, OOM, PASSED, PATCH_MISMATCH,
                     PROOF_STATUSES, TIMEOUT, Record)

#: Version of the report layout (bumped when a field changes meaning).
REPORT_VERSION = 1

#: The sandbox's marker for a write that the read-only repository mount refused.
READ_ONLY_MARKERS = ("Read-only file system", "EROFS")


@dataclass(frozen=True)
class RunFacts(Record):
    """What one execution of a proof script did, as recorded by a sandbox runner.

    Nothing here is a judgement: :func:`classify_run` makes the judgement.
    """

    #: Exit status of the script (``None`` when it never ran or the status could not be read).
    exit_code: int | None = None
    #: The wall-clock limit was reached and the sandbox killed the script.
    timed_out: bool = False
    #: The memory limit was hit (Docker: ``State.OOMKilled``; bubblewrap: a MemoryError/ENOMEM marker on stderr).
    oom_killed: bool = False
    #: Stdout or stderr went past the byte limit; reading stopped there and the script was killed.
    output_limit_hit: bool = False
    #: Which stream passed the limit first: ``stdout`` or ``stderr`` ("" when none did).
    output_limit_stream: str = ""
    #: Bytes of stdout read (at most the limit, plus one chunk).
    stdout_bytes: int = 0
    #: sha256 of the stdout bytes read.
    stdout_sha256: str = ""
    #: Bytes of stdout that are not whitespace (0 means no evidence).
    stdout_nonblank: int = 0
    #: Start of stdout (bounded, UTF-8 with replacement).
    stdout_excerpt: str = ""
    #: End of stderr (bounded), kept for diagnosis.
    stderr_excerpt: str = ""
    #: Blocked writes into the read-only repository seen on stderr.
    repo_write_blocked: bool = False
    #: Git tree hash of the repository before and after the run (computed on the host, without touching it).
    tree_sha_before: str = ""
    tree_sha_after: str = ""
    #: Seconds from start to exit (or kill).
    duration_s: float = 0.0
    #: The command run inside the sandbox.
    command: tuple[str, ...] = ()
    #: Set when the sandbox itself failed; the script's behaviour is then unknown.
    infra_error: str = ""
    #: Why the script was not run at all (e.g. it is empty): no evidence can exist.
    not_run: str = ""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str | None = None, row: int | None = None) -> "RunFacts":
        """Lenient (proof reports predate the type checks): unknown keys are dropped, ``command`` made a tuple."""
        if not isinstance(data, Mapping):
            raise InputError("a RunFacts must be a JSON object", path=where, row=row, actual=type(data).__name__)
        names = {f.name for f in fields(cls)}
        d = {k: v for k, v in data.items() if k in names}
        if "command" in d:
            d["command"] = tuple(d["command"])
        return cls(**d)


@dataclass(frozen=True)
class ProofFacts:
    """The facts of one proof: the run on the base repository and, with a gold patch, the run after it."""

    base: RunFacts
    #: The run on a patched copy (``None`` when the source has no gold patch).
    patched: RunFacts | None = None
    #: The gold patch could not be applied (an infrastructure problem, not the proof's fault).
    patch_error: str = ""


def classify_run(f: RunFacts) -> tuple[str, str]:
    """Status and reason of one run, from its facts alone.

    Order matters: a broken sandbox says nothing about the script; a changed repository is the
    worst sin whatever else happened; resource kills come before the exit code they cause.
    """
    if f.infra_error:
        return INFRA_ERROR, f.infra_error
    if f.not_run:
        return NO_EVIDENCE, f.not_run
    if not f.tree_sha_before or not f.tree_sha_after:
        return INFRA_ERROR, "repository tree hash missing"
    if f.tree_sha_before != f.tree_sha_after:
        return MODIFIED_REPO, f"repository tree changed ({f.tree_sha_before[:12]} -> {f.tree_sha_after[:12]})"
    if f.repo_write_blocked:
        return MODIFIED_REPO, "script tried to write into the repository (blocked by the read-only mount)"
    if f.oom_killed:
        return OOM, "memory limit reached"
    if f.timed_out:
        return TIMEOUT, f"wall-clock limit reached after {f.duration_s:.1f}s"
    if f.output_limit_hit:
        if f.output_limit_stream == "stderr":
            return FAILED_EXIT, "output-limit: stderr passed the byte limit (limits.max_output_bytes); the script was killed"
        return FAILED_EXIT, f"output-limit: stdout passed {f.stdout_bytes} bytes; the script was killed"
    if f.exit_code is None:
        return INFRA_ERROR, "exit code unknown"
    if f.exit_code != 0:
        return FAILED_EXIT, f"exit code {f.exit_code}"
    if f.stdout_nonblank == 0:
        return NO_EVIDENCE, "exit 0 but stdout holds no evidence"
    return PASSED, "exit 0, evidence on stdout, repository unchanged"


def classify_outcome(facts: ProofFacts | Mapping[str, Any]) -> tuple[str, str]:
    """Status and reason of a whole proof (before and, where given, after the gold patch).

    Both runs must pass and print the same evidence (same stdout sha256); a failure after the patch
    or different evidence is ``patch-mismatch``. Accepts :class:`ProofFacts` or its dict form
    (``{"base": {...}, "patched": {...} | None, "patch_error": str}``).
    """
    if not isinstance(facts, ProofFacts):
        facts = _facts_from_mapping(facts)
    status, reason = classify_run(facts.base)
    if status != PASSED:
        return status, reason
    if facts.patch_error:
        return INFRA_ERROR, f"gold patch: {facts.patch_error}"
    if facts.patched is None:
        return status, reason
    p_status, p_reason = classify_run(facts.patched)
    if p_status == INFRA_ERROR:
        return INFRA_ERROR, f"after the gold patch: {p_reason}"
    if p_status != PASSED:
        return PATCH_MISMATCH, f"after the gold patch: {p_status} ({p_reason})"
    if facts.patched.stdout_sha256 != facts.base.stdout_sha256:
        return PATCH_MISMATCH, "evidence differs before and after the gold patch (stdout sha256)"
    return PASSED, reason + "; same evidence after the gold patch"


def _facts_from_mapping(data: Mapping[str, Any]) -> ProofFacts:
    if "base" not in data:
        raise InputError("proof facts need a 'base' run", field="base")
    patched = data.get("patched")
    return ProofFacts(base=RunFacts.from_dict(data["base"]),
                      patched=None if patched is None else RunFacts.from_dict(patched),
                      patch_error=str(data.get("patch_error") or ""))


@dataclass(frozen=True)
class ProofReport(Record):
    """The execution report shipped with every question (``QAItem.proof_report`` holds ``to_dict()``).

    Top-level fields summarize the base run (what DATA-MODEL.md lists); ``runs`` keeps every run's
    full facts so the status can be recomputed with :func:`classify_outcome`.
    """

    check_types: ClassVar[bool] = False   # published reports are read as written (numbers as JSON gives them)

    status: str
    reason: str
    sandbox: str                      # "docker" or "bwrap"
    image: str = ""                   # image name (docker) or "host" (bwrap)
    image_id: str = ""                # docker image id, or a description of the host toolchain
    image_digest: str = ""            # registry digest (name@sha256:...) of a pulled/loaded image, else ""
    commands: tuple[tuple[str, ...], ...] = ()
    exit_codes: tuple[int | None, ...] = ()
    stdout_sha256: str = ""
    stdout_excerpt: str = ""
    duration_s: float = 0.0
    tree_sha_before: str = ""
    tree_sha_after: str = ""
    repo_unchanged: bool = False
    gold_patch_sha256: str = ""       # "" when no gold patch was given
    limits: Mapping[str, Any] = field(default_factory=dict)
    runs: Mapping[str, Any] = field(default_factory=dict)   # {"base": RunFacts dict, "patched": ... | None, "patch_error": str}
    cache_key: str = ""
    version: int = REPORT_VERSION

    def __post_init__(self) -> None:
        if self.status not in PROOF_STATUSES:
            raise InputError("unknown proof status", field="status", actual=self.status, expected=PROOF_STATUSES)
        object.__setattr__(self, "commands", tuple(tuple(c) for c in self.commands))
        object.__setattr__(self, "exit_codes", tuple(self.exit_codes))

    @property
    def passed(self) -> bool:
        return self.status == PASSED


    @classmethod
    def from_facts(cls, facts: ProofFacts, *, sandbox: str, image: str = "", image_id: str = "",
                   image_digest: str = "", gold_patch_sha256: str = "", limits: Mapping[str, Any] | None = None,
                   cache_key: str = "") -> "ProofReport":
        """Build the report, deriving status and reason with :func:`classify_outcome`."""
        status, reason = classify_outcome(facts)
        b = facts.base
        run_list = [b] + ([facts.patched] if facts.patched is not None else [])
        return cls(
            status=status, reason=reason, sandbox=sandbox, image=image, image_id=image_id,
            image_digest=image_digest,
            commands=tuple(r.command for r in run_list),
            exit_codes=tuple(r.exit_code for r in run_list),
            stdout_sha256=b.stdout_sha256, stdout_excerpt=b.stdout_excerpt,
            duration_s=round(sum(r.duration_s for r in run_list), 3),
            tree_sha_before=b.tree_sha_before, tree_sha_after=b.tree_sha_after,
            repo_unchanged=bool(b.tree_sha_before) and b.tree_sha_before == b.tree_sha_after,
            gold_patch_sha256=gold_patch_sha256, limits=dict(limits or {}),
            runs={"base": b.to_dict(),
                  "patched": None if facts.patched is None else facts.patched.to_dict(),
                  "patch_error": facts.patch_error},
            cache_key=cache_key)


def infrastructure_report(reason: str, *, sandbox: str = "", image: str = "",
                          limits: Mapping[str, Any] | None = None) -> ProofReport:
    """A report for a proof that could not be run at all (it stays an ``error``, never a rejection)."""
    facts = ProofFacts(base=RunFacts(infra_error=reason))
    return ProofReport.from_facts(facts, sandbox=sandbox or "none", image=image, limits=limits)


#: Why a proof was rejected, in two classes: its evidence changed with the gold patch (both runs passed,
#: stdout differs), or a run failed (before the patch, or after it).
OUTPUT_DRIFT = "output-drift"
FAILURE = "failure"


def rejection_cause(report: ProofReport | Mapping[str, Any]) -> tuple[str, str]:
    """(cause, where) of a rejected proof: ``output-drift`` or ``failure``, and ``base`` or ``patched``;
    ``("", "")`` for a passed proof or an infrastructure error. Derived from the report's run facts, so
    an auditor can recompute it."""
    rep = report if isinstance(report, ProofReport) else ProofReport.from_dict(report)
    if rep.status in (PASSED, INFRA_ERROR):
        return "", ""
    if rep.status != PATCH_MISMATCH:
        return FAILURE, "base"
    patched = (rep.runs or {}).get("patched")
    if patched is not None and classify_run(RunFacts.from_dict(patched))[0] == PASSED:
        return OUTPUT_DRIFT, "patched"
    return FAILURE, "patched"
