"""The sandbox scripts of the augmentation checks (published as each item's ``proof_script``).

Every script copies the read-only repository (/repo) to a scratch folder under /tmp, applies the
patches it carries (the task's test patch; for review, the change under review), runs one command
there and prints what the reference is read from: the runner's outcome and error lines (filtered
by :data:`~swe_taskflow.augment.outcomes.KEEP_ERE`, durations removed) or, for an ``output``
execute turn, the command's own output. It always ends with ``swe-taskflow: exit status N`` and
exits 0 once the command ran, so the proof verdict says whether the sandbox worked and the
repository stayed unchanged, and the printed text says what happened. A script is self-contained:
an auditor re-runs it on a checkout of the task's base commit (``verify --reprove``).
"""

from __future__ import annotations

import shlex

from swe_taskflow.augment.outcomes import DURATION_SED, KEEP_ERE

WORK = "/tmp/swe-taskflow-work"
OUT = "/tmp/swe-taskflow-out.txt"
_DELIM = "SWE_TASKFLOW_PATCH_EOF"
MAX_OUTPUT_BYTES = 1500


def apply_patch(patch: str, label: str) -> str:
    """Shell lines that apply ``patch`` (a heredoc) in the current folder, or exit 4 naming ``label``."""
    if not patch.strip():
        return ""
    if _DELIM in patch:
        raise ValueError("a patch holds the script's heredoc delimiter")
    body = patch if patch.endswith("\n") else patch + "\n"
    return (f"git -c safe.directory='*' apply --whitespace=nowarn - <<'{_DELIM}' "
            f"|| {{ echo 'swe-taskflow: {label} does not apply' >&2; exit 4; }}\n{body}{_DELIM}\n")


def script(command: str, *, patches: tuple[tuple[str, str], ...] = (), raw_output: bool = False,
           kind: str = "") -> str:
    """A check script: copy, apply ``patches`` ((label, diff), in order), run ``command``, print, exit 0."""
    head = (f"#!/bin/sh\n# swe-taskflow {kind} check (generated; docs/augmentations.md)\nset -u\n"
            'export PATH="${PATH:-/usr/local/bin:/usr/bin:/bin}" HOME=/tmp PYTHONDONTWRITEBYTECODE=1\n'
            f'rm -rf {WORK} && mkdir -p {WORK} && cp -R /repo/. {WORK}/ '
            "|| { echo 'swe-taskflow: copying the repository failed' >&2; exit 3; }\n"
            f"cd {WORK} || exit 3\n")
    body = "".join(apply_patch(p, label) for label, p in patches)
    run = f"( {command}\n) > {OUT} 2>&1 < /dev/null\nstatus=$?\n"
    if raw_output:
        show = f"head -c {MAX_OUTPUT_BYTES} {OUT}\necho\n"
    else:
        show = f"grep -E {shlex.quote(KEEP_ERE)} {OUT} | sed -E {shlex.quote(DURATION_SED)}\n"
    return head + body + run + show + 'echo "swe-taskflow: exit status $status"\nexit 0\n'


__all__ = ["script", "apply_patch", "WORK", "OUT", "MAX_OUTPUT_BYTES"]
