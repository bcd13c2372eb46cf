"""Staging a proof script for a sandbox: a private read-only folder holding one executable file."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from swe_taskflow.proofs import READ_ONLY_MARKERS

#: Where the script folder is mounted inside every sandbox.
PROOF_MOUNT = "/proof"
#: Where the repository is mounted (read-only) inside every sandbox.
REPO_MOUNT = "/repo"


def stage_script(script: str) -> tempfile.TemporaryDirectory:
    """A temp folder (0755, readable by uid 65534) with ``script`` (0755); the caller cleans it up.

    It lies in this process's scratch folder (:mod:`builder.hygiene`): a killed run's copy is swept."""
    from ..hygiene import scratch_temp

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


def repo_write_blocked(stderr_text: str) -> bool:
    """Whether stderr shows a refused write into the repository.

    A line with a read-only marker counts when it names a path under /repo, or names no absolute path
    at all besides the script and shell (a relative path: the working directory is /repo).
    """
    for line in stderr_text.splitlines():
        if not any(m in line for m in READ_ONLY_MARKERS):
            continue
        paths = [p for p in _ABS_PATH.findall(line)
                 if not p.startswith(PROOF_MOUNT) and p not in ("/bin/sh", "/usr/bin/sh")]
        if not paths or any(p == REPO_MOUNT or p.startswith(REPO_MOUNT + "/") for p in paths):
            return True
    return False


_ABS_PATH = re.compile(r"(?<![\w.~-])/[^\s'\":,)]*")
