"""Limits every proof run gets, whatever the sandbox."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from swe_taskflow.errors import ConfigError

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
        for name in ("timeout_s", "mem_mb", "pids", "cpus", "tmpfs_mb", "max_output_bytes",
                     "excerpt_chars", "stderr_bytes", "fsize_mb"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or value <= 0:
                raise ConfigError("proof limits must be positive numbers", field=name, actual=value)
        for name in ("timeout_s", "cpus"):   # 3 and 3.0 must give one cache key
            object.__setattr__(self, name, float(getattr(self, name)))
        for name in ("mem_mb", "pids", "tmpfs_mb", "max_output_bytes", "excerpt_chars", "stderr_bytes", "fsize_mb"):
            object.__setattr__(self, name, int(getattr(self, name)))
        if self.mem_mb < 16:
            raise ConfigError("memory limit below 16 MiB cannot start an interpreter", field="mem_mb",
                              actual=self.mem_mb)

    def limits(self) -> dict[str, Any]:
        """The limits as recorded in a report (and hashed into the resume cache key)."""
        return asdict(self)
