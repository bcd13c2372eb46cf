"""Deterministic leakage checks: does a question or its answer give away the gold patch?

A question leaks when it (or its reference answer) repeats a line the patch adds, or names an
identifier that only the patch introduces; its evidence is invalid before the patch when it points
at a file the patch creates or a symbol only the patch defines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DEF = re.compile(r"\b(?:def|class|function|func|const|let|var|type|interface)\s+([A-Za-z_][\w]*)")
_WS = re.compile(r"\s+")
#: Added lines shorter than this (after whitespace collapse) are too generic to count as a leak.
MIN_LINE_CHARS = 20


@dataclass(frozen=True)
class PatchFacts:
    """What a unified diff adds: lines, identifiers new to it, files it creates, names it defines."""

    added_lines: tuple[str, ...]
    new_identifiers: frozenset[str]
    new_files: frozenset[str]
    defined: frozenset[str]


def _code_like(name: str) -> bool:
    return "_" in name.strip("_") or bool(re.search(r"[a-z][A-Z]", name))


_TEST_PATH = re.compile(r"(^|/)(tests?|__tests__|spec)/|(^|/)test_[^/]*$|_test\.\w+$|\.(test|spec)\.\w+$")


def _is_test_file(path: str) -> bool:
    return bool(_TEST_PATH.search(path))


def patch_facts(patch: str) -> PatchFacts:
    """Facts of the non-test part of a unified diff (tests a solution adds are not the solution)."""
    added, old, new_files = [], [], set()
    lines = patch.splitlines()
    skip = False
    for i, line in enumerate(lines):
        if line.startswith("diff --git "):
            skip = _is_test_file(line.split(" b/")[-1])
            continue
        if skip:
            continue
        if line.startswith("--- "):
            cur_old = line[4:].strip()
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            if cur_old == "/dev/null" and nxt.startswith("+++ "):
                new_files.add(nxt[4:].strip().removeprefix("b/"))
            continue
        if line.startswith("+++ ") or line.startswith("diff ") or line.startswith("index ") or line.startswith("@@"):
            continue
        if line.startswith("+"):
            added.append(line[1:])
        elif line.startswith("-") or line.startswith(" "):
            old.append(line[1:])
    old_ids = set(_IDENT.findall("\n".join(old)))
    add_text = "\n".join(added)
    defined = set(_DEF.findall(add_text)) - old_ids
    new_ids = {t for t in set(_IDENT.findall(add_text)) - old_ids if _code_like(t)} | defined
    return PatchFacts(tuple(a for a in added if a.strip()), frozenset(new_ids), frozenset(new_files), frozenset(defined))


def leaks(text: str, facts: PatchFacts) -> list[str]:
    """Reasons ``text`` gives the patch away (empty when it does not)."""
    norm = _WS.sub(" ", text)
    out = []
    for line in facts.added_lines:
        ln = _WS.sub(" ", line).strip()
        if len(ln) >= MIN_LINE_CHARS and ln in norm:
            out.append(f"repeats a line the patch adds: {ln[:80]!r}")
    words = set(_IDENT.findall(text))
    for ident in sorted(facts.new_identifiers & words):
        out.append(f"names {ident!r}, which only the patch introduces")
    return out


def evidence_problems(evidence: list[dict], facts: PatchFacts) -> list[str]:
    """Evidence that would not hold before the patch."""
    out = []
    for e in evidence:
        p = str(e.get("path", "")).lstrip("./")
        if p in facts.new_files:
            out.append(f"evidence file {p!r} only exists after the patch")
        if e.get("symbol") and str(e["symbol"]).split(".")[-1].rstrip("()") in facts.defined:
            out.append(f"evidence symbol {e['symbol']!r} is defined by the patch")
    return out
