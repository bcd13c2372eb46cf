"""Limits every proof run gets, whatever the sandbox, and the key a proof report is cached under.

``cache_key`` lives beside the limits it hashes so that ``run_proof`` (:mod:`.run`) and the Harbor sessions
(:mod:`.harbor_runner`) give the same key without importing each other.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, fields
from typing import Any

from swe_taskflow.errors import ConfigError
from swe_taskflow.hashing import sha256_hex

#: Where a proof may run: ``auto`` picks docker when a daemon answers, else bubblewrap (never harbor:
#: Harbor environments are chosen by name, see builder.proofs.harbor_runner).
SANDBOXES = ("auto", "docker", "bwrap", "harbor")


@dataclass(frozen=True)
class ProofConfig:
    """Resource limits for one untrusted proof script (they go into the report and the cache key)."""

    #: Wall-clock seconds before the script is killed (``run_proof(timeout_s=...)`` overrides it).
    timeout_s: float = 60.0
    #: Memory limit in MiB (Docker: mem_limit = memswap_limit; bubblewrap: ``prlimit --as``).
    mem_mb: int = 512
    #: Most processes/threads the script may have (Docker pids_limit; bubblewrap ``prlimit --nproc``).
    pids: int = 64
    #: CPUs the script may use (Docker nano_cpus; not enforced by bubblewrap).
    cpus: float = 1.0
    #: Size in MiB of each of the two writable folders, /tmp and /dev/shm (a tmpfs each, both sandboxes);
    #: everything else is read-only, so a script can write at most twice this much.
    tmpfs_mb: int = 64
    #: Stdout bytes read before the script is killed (output-limit).
    max_output_bytes: int = 1 << 20
    #: Characters of stdout kept in the report.
    excerpt_chars: int = 2000
    #: Bytes of stderr kept (the tail) for diagnosis.
    stderr_bytes: int = 4096
    #: Largest single file the script may write (bubblewrap ``prlimit --fsize``), in MiB.
    fsize_mb: int = 64

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) or value <= 0:
                raise ConfigError("proof limits must be positive finite numbers", field=f.name, actual=value)
            # each field's own type: 3 and 3.0 must give one cache key
            object.__setattr__(self, f.name, float(value) if f.type == "float" else int(value))
        if self.mem_mb < 16:
            raise ConfigError("memory limit below 16 MiB cannot start an interpreter", field="mem_mb",
                              actual=self.mem_mb)

    def limits(self) -> dict[str, Any]:
        """The limits as recorded in a report (and hashed into the resume cache key)."""
        return asdict(self)


def cache_key(script: str, image_id: str, tree: str, gold_patch: str | None, config: ProofConfig,
              sandbox: str) -> str:
    """sha256 of every input that determines a proof's outcome.

    Layout ``v: 1`` hashes ``json.dumps(sort_keys=True)`` (default separators, ASCII escapes), not
    :func:`swe_taskflow.hashing.key_sha256`: every published proof report records this key, so a
    change of bytes would change release content (CHANGELOG.md). A ``v: 2`` would move to key_sha256.
    """
    blob = json.dumps({"script": script, "image_id": image_id, "tree": tree, "sandbox": sandbox,
                       "patch": gold_patch or "", "limits": config.limits(), "v": 1}, sort_keys=True)
    return sha256_hex(blob.encode())


#: What an auditor's re-run may get at most (``verify --reprove``; its ``--max-*`` flags replace these): the largest
#: limits the project's own builds give a proof (``builder.turns.sandbox.DEFAULT_CONFIG``), whatever a release
#: records. A report's own limits are kept where they are lower.
AUDITOR_CEILINGS = ProofConfig(timeout_s=120.0, mem_mb=1024, pids=128, tmpfs_mb=256, excerpt_chars=4000)
