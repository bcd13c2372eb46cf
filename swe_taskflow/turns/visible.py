"""Whether a debug turn's test is one the agent can see fail in its own checkout (issue 36).

A debug item asks about a FAIL_TO_PASS test, recorded failing with the task's test patch applied
(docs/augmentations.md). The agent's checkout never holds the test patch (it is hidden: the issue
turns' checkpoints run it). When the test patch adds or changes the file that holds the test, the
agent is asked about a test it cannot see or whose failing version it cannot run: the turn is not
answerable as a real user's question is. :func:`hidden_test_file` says so, from the test's id and the
test patch alone (no checkout needed).
"""

from __future__ import annotations

import re

_DIFF = re.compile(r"^diff --git a/(\S+) b/(\S+)", re.M)
_PLUS = re.compile(r"^\+\+\+ b/(\S+)", re.M)
#: ``path::name`` (pytest) or ``path | name`` (jest, mocha): the part before the separator is the file.
_PATH_SEP = re.compile(r"::| \| ")


def patch_files(patch: str) -> set[str]:
    """Every file a unified diff touches (both sides of a rename)."""
    out: set[str] = set()
    for a, b in _DIFF.findall(patch or ""):
        out |= {a, b}
    out |= set(_PLUS.findall(patch or ""))
    return out - {"/dev/null"}


def test_file(test_id: str) -> str | None:
    """The file a test id names (``tests/x.py::T::t`` -> ``tests/x.py``); None for ids without one (Go's ``TestX``)."""
    parts = _PATH_SEP.split(test_id or "", maxsplit=1)
    head = parts[0].strip()
    return head if len(parts) == 2 and ("/" in head or "." in head) else None


_DJANGO = re.compile(r"^\w+ \(([\w.]+)\)$")


def hidden_test_file(test_id: str, test_patch: str) -> str | None:
    """The file of ``test_id`` that the hidden test patch adds or changes (so the agent's checkout lacks the
    test as it fails), or None when the test is the same in the agent's checkout.

    Ids with a file (``path::name``, ``path | name``) are matched by path; Django's ``name (module.Class)``
    by the module's file; an id with neither (Go's ``TestX/sub``) counts as hidden when a section of the
    test patch names the test (an added line, a context line or a hunk header: the patch changes it)."""
    files = patch_files(test_patch)
    path = test_file(test_id)
    if path is not None:
        return path if path in files else None
    dj = _DJANGO.match((test_id or "").strip())
    if dj:
        parts = dj.group(1).split(".")
        for k in range(len(parts) - 1, 0, -1):
            suffix = "/".join(parts[:k]) + ".py"
            hit = next((f for f in sorted(files) if f == suffix or f.endswith("/" + suffix)), None)
            if hit:
                return hit
        return None
    name = re.split(r"[/\[ ]", (test_id or "").strip(), maxsplit=1)[0]
    if not name:
        return None
    for section in re.split(r"(?m)^(?=diff --git )", test_patch or ""):
        found = _DIFF.findall(section)
        if found and re.search(rf"\b{re.escape(name)}\b", section.split("\n", 1)[-1]):
            return found[0][1]
    return None


__all__ = ["patch_files", "test_file", "hidden_test_file"]
