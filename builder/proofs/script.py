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
