"""One sandbox run's script and output, the same for every sandbox: the script staged in a private read-only
folder, its output read bounded (hash, count and keep an excerpt, never buffer it all), the facts recorded."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path
from typing import Callable

from swe_taskflow.proofs import READ_ONLY_MARKERS, RunFacts

from .config import ProofConfig

#: Where the script folder is mounted inside every sandbox.
PROOF_MOUNT = "/proof"
#: Where the repository is mounted (read-only) inside every sandbox.
REPO_MOUNT = "/repo"


def stage_script(script: str) -> tempfile.TemporaryDirectory:
    """A temp folder (0755, readable by uid 65534) with ``script`` (0755); the caller cleans it up.

    It lies in this process's scratch folder (:mod:`swe_taskflow.hygiene`): a killed run's copy is swept."""
    from swe_taskflow.hygiene import scratch_temp

    tmp = scratch_temp("proof-")
    os.chmod(tmp.name, 0o755)
    path = Path(tmp.name, "script")
    path.write_text(script, encoding="utf-8")
    os.chmod(path, 0o755)
    return tmp


def script_command(script: str) -> list[str]:
    """Run a script with a shebang as an executable, anything else with /bin/sh."""
    if script.startswith("#!"):
        return [f"{PROOF_MOUNT}/script"]
    return ["/bin/sh", f"{PROOF_MOUNT}/script"]


#: A Harbor environment cannot mount the repository read-only without privileges: its copy is owned by root, so
#: a refused write says "Permission denied" there. That also answers a refused *read*, so it counts only where the
#: message names a write (a shell redirection's "cannot create" / "can't create", coreutils' or busybox'
#: create/touch/remove/mkdir/move/link).
_OWNER_WRITE = re.compile(r"(cannot|can't) (create|touch|remove|make directory|move|link|overwrite).*Permission denied")


def owner_write_refused(line: str) -> bool:
    return any(m in line for m in READ_ONLY_MARKERS) or bool(_OWNER_WRITE.search(line))


def read_only_refused(line: str) -> bool:
    return any(m in line for m in READ_ONLY_MARKERS)


def repo_write_blocked(stderr_text: str, refused=read_only_refused) -> bool:
    """Whether stderr shows a refused write into the repository.

    A line ``refused`` accepts counts when it names a path under /repo, or names no absolute path at all besides
    the script and shell (a relative path: the working directory is /repo).
    """
    for line in stderr_text.splitlines():
        if not refused(line):
            continue
        paths = [p for p in _ABS_PATH.findall(line)
                 if not p.startswith(PROOF_MOUNT) and p not in ("/bin/sh", "/usr/bin/sh")]
        if not paths or any(p == REPO_MOUNT or p.startswith(REPO_MOUNT + "/") for p in paths):
            return True
    return False


_ABS_PATH = re.compile(r"(?<![\w.~-])/[^\s'\":,)]*")


class BoundedCapture:
    """Accumulates a stream up to ``limit`` bytes; past it, calls ``on_limit`` once and stops keeping bytes.

    Only ``keep_head`` bytes from the start and ``keep_tail`` bytes from the end are stored, so a script
    that prints gigabytes costs a fixed amount of memory.
    """

    def __init__(self, limit: int, *, keep_head: int = 4096, keep_tail: int = 0,
                 on_limit: Callable[[], None] | None = None) -> None:
        self.limit = limit
        self.keep_head = keep_head
        self.keep_tail = keep_tail
        self.on_limit = on_limit
        self.sha = hashlib.sha256()
        self.nbytes = 0
        self.nonblank = 0
        self.head = bytearray()
        self.tail = bytearray()
        self.limit_hit = False

    def feed(self, chunk: bytes) -> bool:
        """Take a chunk; returns False once the limit is passed (the caller should stop reading)."""
        if self.limit_hit or not chunk:
            return not self.limit_hit
        room = self.limit - self.nbytes
        if len(chunk) > room:
            chunk = chunk[:max(room, 0)]
            self.limit_hit = True
        self.sha.update(chunk)
        self.nbytes += len(chunk)
        self.nonblank += len(chunk.translate(None, b" \t\r\n\x0b\x0c"))
        if len(self.head) < self.keep_head:
            self.head += chunk[: self.keep_head - len(self.head)]
        if self.keep_tail:
            self.tail += chunk
            del self.tail[: max(0, len(self.tail) - self.keep_tail)]
        if self.limit_hit and self.on_limit is not None:
            self.on_limit()
        return not self.limit_hit

    @property
    def sha256(self) -> str:
        return self.sha.hexdigest()

    def head_text(self, chars: int) -> str:
        return bytes(self.head).decode("utf-8", "replace")[:chars]

    def tail_text(self) -> str:
        return bytes(self.tail).decode("utf-8", "replace")


def captures(config: ProofConfig, on_limit: Callable[[], None] | None = None) -> tuple[BoundedCapture, BoundedCapture]:
    """(stdout, stderr) of one run, as every sandbox keeps them: stdout's head (the excerpt), stderr's tail."""
    return (BoundedCapture(config.max_output_bytes, keep_head=config.excerpt_chars * 4, on_limit=on_limit),
            BoundedCapture(config.max_output_bytes, keep_head=0, keep_tail=config.stderr_bytes, on_limit=on_limit))


def run_facts(out: BoundedCapture, err: BoundedCapture, *, exit_code: int | None, timed_out: bool, oom_killed: bool,
              duration_s: float, command, excerpt_chars: int,
              write_refused=None) -> RunFacts:
    """The facts of one finished sandbox run, the same for every sandbox (the verdict is classify_outcome's)."""
    stderr_text = err.tail_text()
    return RunFacts(
        exit_code=exit_code, timed_out=timed_out, oom_killed=oom_killed,
        output_limit_hit=out.limit_hit or err.limit_hit,
        output_limit_stream="stdout" if out.limit_hit else "stderr" if err.limit_hit else "",
        stdout_bytes=out.nbytes, stdout_sha256=out.sha256, stdout_nonblank=out.nonblank,
        stdout_excerpt=out.head_text(excerpt_chars), stderr_excerpt=stderr_text,
        repo_write_blocked=repo_write_blocked(stderr_text, *(() if write_refused is None else (write_refused,))),
        duration_s=round(duration_s, 3), command=tuple(command))
