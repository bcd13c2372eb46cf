"""Which code of a gold patch serves a requirement or a test (planning and debug references).

Lexical and deterministic: a location of the gold patch (file + enclosing symbol) is attributed to
a text when the text names its symbol, names its file, or names an identifier that the location's
changed lines use. It is the reference a planning turn's answer is scored against (recall), so it
errs on the side of what a careful reader of the requirement and the patch would list.
"""

from __future__ import annotations

import re
from typing import Mapping

from .diffs import Location, identifiers, is_test_path, touched

#: Files whose changes never count as a plan's code (release notes, docs, lock files).
_NOT_CODE = re.compile(r"(^|/)(changelogs?|docs?|CHANGES|NEWS)(/|\.|$)|\.(md|rst|txt|lock)$", re.I)


def _named(token: str, text: str) -> bool:
    return bool(re.search(rf"(?<![\w$.]){re.escape(token)}(?![\w$])", text))


def _file_named(path: str, text: str) -> bool:
    base = path.rsplit("/", 1)[-1]
    stem = base.rsplit(".", 1)[0]
    return path in text or _named(base, text) or (len(stem) >= 5 and ("_" in stem or "-" in stem) and _named(stem, text))


def attribute(text: str, patch: str, *, sources: Mapping[str, str] | None = None,
              code_only: bool = True) -> list[Location]:
    """Locations of ``patch`` (non-test files) that ``text`` points at, in patch order."""
    ids = identifiers(text)
    last_parts = {re.split(r"[.]", i)[-1] for i in ids}
    out = []
    for loc, lines in touched(patch, sources=sources):
        if is_test_path(loc.path) or (code_only and _NOT_CODE.search(loc.path)):
            continue
        sym_last = re.split(r"[.]", loc.symbol)[-1] if loc.symbol else ""
        by_symbol = bool(loc.symbol) and (loc.symbol in ids or sym_last in last_parts)
        body = "\n".join(lines)
        by_use = any(_named(i, body) for i in ids if len(i) >= 4)
        if by_symbol or by_use or _file_named(loc.path, text):
            out.append(loc)
    return out


def test_locations(test: str, failure: str, patch: str, *,
                   sources: Mapping[str, str] | None = None) -> list[Location]:
    """Code locations a failing test points at: symbols its name's words or its failure name, else all code."""
    name = re.split(r"::|\.|/", test)[-1]
    words = {w.lower() for w in re.split(r"_|(?<=[a-z])(?=[A-Z])", name) if len(w) >= 4 and w.lower() != "test"}
    code = code_locations(patch, sources=sources)
    hits = [loc for loc in code if loc.symbol and re.split(r"[.]", loc.symbol)[-1].lower() in words]
    named = [loc for loc in attribute(failure, patch, sources=sources) if loc.symbol]
    in_defs = [loc for loc in code if loc.symbol]      # module-level lines (imports) are not a cause
    return hits or named or in_defs or code


def code_locations(patch: str, *, sources: Mapping[str, str] | None = None) -> list[Location]:
    """Every location of ``patch`` in a non-test code file (what a debug turn's failure points into)."""
    return [loc for loc, _ in touched(patch, sources=sources)
            if not is_test_path(loc.path) and not _NOT_CODE.search(loc.path)]


def in_patch(claimed: Location, patch: str, *, sources: Mapping[str, str] | None = None) -> bool:
    """Whether a claimed location is one the gold patch changes (same file; same symbol when one is claimed)."""
    for loc, _ in touched(patch, sources=sources):
        if loc.path == claimed.path and (not claimed.symbol or loc.symbol == claimed.symbol
                                         or loc.symbol.endswith("." + claimed.symbol)):
            return True
    return False


__all__ = ["attribute", "test_locations", "code_locations", "in_patch"]
