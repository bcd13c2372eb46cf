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
#: Every check script's first lines (``kind``: the check, ``doc``: where its contract is written).
HEAD = ("#!/bin/sh\n# swe-taskflow {kind} check (generated; {doc})\nset -u\n"
        'export PATH="${{PATH:-/usr/local/bin:/usr/bin:/bin}}" HOME=/tmp PYTHONDONTWRITEBYTECODE=1\n')
#: A fresh copy of the read-only repository in WORK, and into it.
COPY = (f'rm -rf {WORK} && mkdir -p {WORK} && cp -R /repo/. {WORK}/ '
        "|| { echo 'swe-taskflow: copying the repository failed' >&2; exit 3; }\n"
        f"cd {WORK} || exit 3\n")


def apply_patch(patch: str, label: str) -> str:
    """Shell lines that apply ``patch`` (a heredoc) in the current folder, or exit 4 naming ``label``."""
    if not patch.strip():
        return ""
    if _DELIM in patch:
        raise ValueError("a patch holds the script's heredoc delimiter")
    body = patch if patch.endswith("\n") else patch + "\n"
    return (f"git -c safe.directory='*' apply --whitespace=nowarn - <<'{_DELIM}' "
            f"|| {{ echo 'swe-taskflow: {label} does not apply' >&2; exit 4; }}\n{body}{_DELIM}\n")


def run_in_copy(command: str, patches: tuple[tuple[str, str], ...], kind: str, doc: str) -> str:
    """Head, copy, apply ``patches`` ((label, diff), in order), run ``command`` into OUT, its status in $status."""
    return (HEAD.format(kind=kind, doc=doc) + COPY + "".join(apply_patch(p, label) for label, p in patches)
            + f"( {command}\n) > {OUT} 2>&1 < /dev/null\nstatus=$?\n")


def script(command: str, *, patches: tuple[tuple[str, str], ...] = (), raw_output: bool = False,
           kind: str = "") -> str:
    """A check script: copy, apply ``patches``, run ``command``, print, exit 0."""
    if raw_output:
        show = f"head -c {MAX_OUTPUT_BYTES} {OUT}\necho\n"
    else:
        show = f"grep -E {shlex.quote(KEEP_ERE)} {OUT} | sed -E {shlex.quote(DURATION_SED)}\n"
    tail = 'echo "swe-taskflow: exit status $status"\nexit 0\n'
    return run_in_copy(command, patches, kind, "docs/augmentations.md") + show + tail


__all__ = ["script", "run_in_copy", "apply_patch", "WORK", "OUT", "HEAD", "COPY", "MAX_OUTPUT_BYTES"]
