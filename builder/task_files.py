"""A source task's files as the build handles them: its run scripts' hashes and its gold patch in parts.

Building needs these (the ingest stage records run-script hashes; the stress checks cut the gold patch) and so
does the Harbor export; they live here, below both, so that building never imports :mod:`builder.evaluation`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable

from swe_taskflow.errors import ConfigError

#: The two files of one SWE-Bench Pro instance under ``run_scripts/<instance_id>/``.
RUN_SCRIPT_FILES = ("run_script.sh", "parser.py")


def run_script_hashes(folder: str | Path, instance_ids: Iterable[str]) -> dict[str, str]:
    """sha256 of ``<id>/run_script.sh`` and ``<id>/parser.py`` for each id that has both (what a build records)."""
    from swe_taskflow.hashing import file_sha256
    from swe_taskflow.safepath import component_problem

    out = {}
    for iid in sorted(set(instance_ids)):
        if component_problem(iid) is not None:
            continue
        paths = [Path(folder) / iid / f for f in RUN_SCRIPT_FILES]
        if all(p.is_file() and not p.is_symlink() for p in paths):
            out.update({f"{iid}/{p.name}": file_sha256(p) for p in paths})
    return out


_DIFF_RE = re.compile(r"^diff --git ", re.MULTILINE)
_HUNK_RE = re.compile(r"^@@ ", re.MULTILINE)


def _units(patch: str) -> list[tuple[str, str]]:
    """(file header, one hunk) per hunk, in patch order; a file without hunks (binary, mode) is one unit."""
    starts = [m.start() for m in _DIFF_RE.finditer(patch)]
    if not starts:
        return [("", patch)] if patch else []
    starts[0] = 0   # any preamble stays with the first file
    out = []
    for s, e in zip(starts, starts[1:] + [len(patch)]):
        section = patch[s:e]
        hunks = [m.start() for m in _HUNK_RE.finditer(section)]
        if not hunks or "GIT binary patch" in section:
            out.append((section, ""))
            continue
        header = section[:hunks[0]]
        out += [(header, section[a:b]) for a, b in zip(hunks, hunks[1:] + [len(section)])]
    return out


def patch_parts(patch: str, n: int) -> list[str]:
    """The gold patch as ``n`` ordered parts (whole hunks, contiguous, as even as possible).

    Applied in order with ``git apply`` they rebuild the whole change, so an oracle's checkpoints rise
    to resolved. When the patch has fewer hunks than ``n``, the first parts are empty (no change).
    """
    if n < 1:
        raise ConfigError("need at least one part", field="n", actual=n)
    units = _units(patch)
    k = len(units)
    bounds = [round(i * k / n) for i in range(n + 1)] if k >= n else [0] * (n - k) + list(range(k + 1))
    parts = []
    for i in range(n):
        text, last_header = [], None
        for header, hunk in units[bounds[i]:bounds[i + 1]]:
            if header != last_header:   # consecutive hunks of one file share one header
                text.append(header)
                last_header = header
            text.append(hunk)
        parts.append("".join(text))
    return parts


__all__ = ["RUN_SCRIPT_FILES", "patch_parts", "run_script_hashes"]
