"""Seeded defects for review turns: a small fixed catalogue of one-token mutations of a gold patch.

A *site* is one place where one operator of the catalogue applies to one added (``+``) line of a
non-test file of the gold patch. Mutating a site rewrites that line only, so every hunk header
stays valid and the mutated diff applies wherever the gold patch applies. Which site a review
turn uses is decided by the caller (builder/turns): sites are tried in a seeded order and the
first whose tests fail in the sandbox is kept (a surviving mutant is rejected with its reason).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from ..errors import InputError
from .diffs import parse_patch

#: operator -> ((pattern, replacement), ...): each pair is one way the operator rewrites a token.
CATALOGUE: Mapping[str, tuple[tuple[str, str], ...]] = {
    "comparison-flip": ((r" == ", " != "), (r" != ", " == "), (r" <= ", " > "), (r" >= ", " < "),
                        (r" < ", " >= "), (r" > ", " <= ")),
    "boolean-flip": ((r"\bTrue\b", "False"), (r"\bFalse\b", "True"), (r"\btrue\b", "false"),
                     (r"\bfalse\b", "true")),
    "logic-swap": ((r" and ", " or "), (r" or ", " and "), (r" && ", " || "), (r" \|\| ", " && ")),
    "negation-drop": ((r"\bnot ", ""), (r"!(?=[A-Za-z_(])", "")),
    "off-by-one": ((r"(?<![\w.])(\d+)(?![\w.])", "+1"),),
    "arithmetic-swap": ((r" \+ ", " - "), (r" - ", " + "), (r" \* ", " / ")),
}
_COMMENT = re.compile(r"^\s*(#|//|/\*|\*|--|\"\"\"|''')")
_STRING = re.compile(r"(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`)")


@dataclass(frozen=True)
class Site:
    """One place a catalogue operator applies: patch line ``index`` (0-based), its file and new-side line."""

    operator: str
    rule: int              # which (pattern, replacement) pair of the operator
    occurrence: int        # which match of the pattern on the line (0-based)
    path: str
    line: int              # new-side line number in the file
    index: int             # line index in the patch text
    before: str
    after: str

    def to_dict(self) -> dict:
        return {"operator": self.operator, "path": self.path, "line": self.line, "before": self.before,
                "after": self.after}


def _code_spans(text: str) -> list[tuple[int, int]]:
    """Spans of ``text`` outside string literals (mutations never touch strings)."""
    spans, pos = [], 0
    for m in _STRING.finditer(text):
        spans.append((pos, m.start()))
        pos = m.end()
    spans.append((pos, len(text)))
    return spans


def _apply(text: str, pattern: str, repl: str, occurrence: int) -> str | None:
    k = 0
    for lo, hi in _code_spans(text):
        for m in re.finditer(pattern, text[lo:hi]):
            if k == occurrence:
                a, b = lo + m.start(), lo + m.end()
                new = str(int(m.group(1)) + 1) if repl == "+1" else repl
                return text[:a] + new + text[b:]
            k += 1
    return None


def sites(patch: str) -> list[Site]:
    """Every site of the catalogue in the gold patch, in patch order then catalogue order."""
    out: list[Site] = []
    for fp in parse_patch(patch):
        if fp.is_test or fp.new_path is None:
            continue
        for h in fp.hunks:
            for ln in h.lines:
                if ln.op != "+" or not ln.text.strip() or _COMMENT.match(ln.text):
                    continue
                for op, rules in CATALOGUE.items():
                    for r, (pattern, repl) in enumerate(rules):
                        occ = 0
                        while True:
                            after = _apply(ln.text, pattern, repl, occ)
                            if after is None:
                                break
                            if after != ln.text:
                                out.append(Site(op, r, occ, fp.path, ln.new_no, ln.index, ln.text, after))
                            occ += 1
    return out


def mutate(patch: str, site: Site) -> str:
    """The gold patch with ``site``'s line rewritten (an InputError if the patch does not hold the site)."""
    lines = patch.split("\n")
    if not 0 <= site.index < len(lines) or lines[site.index] != "+" + site.before:
        raise InputError("the patch does not hold this mutation site", field="mutation",
                         expected=site.before, actual=lines[site.index][1:] if 0 <= site.index < len(lines) else None)
    lines[site.index] = "+" + site.after
    return "\n".join(lines)


def review_diff(patch: str, site: Site) -> str:
    """The change a review turn shows: the mutated gold patch without git's ``index <blob>..<blob>``
    lines (they would name the gold files' blobs), trailing newlines stripped."""
    lines = mutate(patch, site).split("\n")
    return "\n".join(ln for ln in lines if not re.match(r"^index [0-9a-f]+\.\.[0-9a-f]+", ln)).rstrip("\n")


def find_site(patch: str, mutation: Mapping) -> Site | None:
    """The site a recorded mutation ``{"operator", "path", "line", "before", "after"}`` names, or None."""
    want = tuple(mutation.get(k) for k in ("operator", "path", "line", "before", "after"))
    return next((s for s in sites(patch) if (s.operator, s.path, s.line, s.before, s.after) == want), None)


__all__ = ["CATALOGUE", "Site", "sites", "mutate", "review_diff", "find_site"]
