"""Contract checks on the text of a generated augmentation turn (before any sandbox run).

Each returns a list of ``(check, detail)`` violations; empty means the text keeps its kind's
contract (docs/augmentations.md): an execute turn names its command; a debug turn asks for a
diagnosis, never a fix, and does not name the location it is scored on; a planning turn states
its requirement and asks for a plan, not an implementation; a review turn shows its diff verbatim
and does not point at the seeded defect. No turn may state its own reference.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

from .score import normalize, symbol_named

#: Verbs that ask the agent to change the code (a debug, planning or review turn must not ask that).
_CHANGE_VERBS = (r"fix|repair|patch|resolve|correct|implement|rewrite|refactor|apply|commit|edit|modify"
                 r"|change (?:the|any|some) code|make (?:it|the tests?) pass|update the code")
_NEGATION = re.compile(r"\b(?:don'?t|do not|doesn'?t|never|without|no need|not yet|not to|"
                       r"before (?:\w+ ){0,2}(?:chang|touch|edit|fix|writ|implement)\w*|rather than|instead of|"
                       r"no (?:code )?(?:changes?|edits?))\b")
MAX_CHARS = 12000


def _sentences(text: str) -> list[str]:
    text = re.sub(r"```.*?```", " ", text, flags=re.S)     # code blocks are shown material, not requests
    return [s for s in re.split(r"(?<=[.!?])\s+|\n\s*\n", text) if s.strip()]


def asks_for_change(text: str) -> str:
    """The first sentence that asks to change the code without negating it, or ""."""
    for s in _sentences(text):
        low = s.lower().replace("\u2019", "'")
        if re.search(rf"\b(?:{_CHANGE_VERBS})\b", low) and not _NEGATION.search(low):
            return s.strip()
    return ""


def _states(text: str, facts: Iterable[Mapping[str, Any]]) -> str:
    t = normalize(text)
    for f in facts:
        v = str(f.get("value", ""))
        if f.get("name") in ("failing_test",) and re.split(r"::|\.", v)[-1].lower() in t:
            return f"{f['name']}={v}"
        if f.get("name") == "line" and len(v) >= 4 and normalize(v) in t:
            return f"line={v}"
    return ""


def check_text(kind: str, text: str, *, command: str = "", facts: Iterable[Mapping[str, Any]] = (),
               locations: Iterable[Mapping[str, Any]] = (), requirement: str = "", diff: str = "",
               mutation: Mapping[str, Any] | None = None) -> list[tuple[str, str]]:
    """Violations of ``kind``'s text contract (see the module doc)."""
    out: list[tuple[str, str]] = []
    if not text.strip():
        return [("empty-turn", "the turn has no text")]
    if len(text) > MAX_CHARS:
        out.append(("too-long", f"{len(text)} characters (at most {MAX_CHARS})"))
    if kind == "execute":
        if not command or command not in text:
            out.append(("missing-command", f"the turn does not show the command {command!r} verbatim"))
        leaked = _states(text, facts)
        if leaked:
            out.append(("states-reference", f"the turn already states the answer ({leaked})"))
    elif kind == "debug":
        ask = asks_for_change(text)
        if ask:
            out.append(("asks-for-fix", f"a diagnose-only turn asks for a change: {ask[:120]!r}"))
        t = normalize(text)
        for loc in locations:
            if loc.get("symbol") and symbol_named(str(loc["symbol"]), str(loc["path"]), t):
                out.append(("names-location", f"the turn names the location it is scored on ({loc['symbol']})"))
                break
    elif kind == "planning":
        if not requirement or normalize(requirement) not in normalize(text):
            out.append(("missing-requirement", "the turn does not state its requirement verbatim"))
        rest = text.replace(requirement, " ") if requirement else text
        ask = asks_for_change(rest)
        if ask:
            out.append(("asks-for-implementation", f"a planning turn asks for a change: {ask[:120]!r}"))
    elif kind == "review":
        if not diff or diff.strip() not in text:
            out.append(("missing-diff", "the turn does not show the change under review verbatim"))
        prose = text.replace(diff, " ") if diff else text
        if mutation and normalize(str(mutation.get("after", ""))) and \
                normalize(str(mutation.get("after", ""))) in normalize(prose):
            out.append(("names-defect", "the turn's own words point at the seeded defect"))
        if mutation and re.search(rf"\bline {int(mutation.get('line', -1))}\b", prose):
            out.append(("names-defect", "the turn's own words give the seeded defect's line"))
        ask = asks_for_change(prose)
        if ask:
            out.append(("asks-for-fix", f"a review turn asks for a change to the repository: {ask[:120]!r}"))
    return out


__all__ = ["check_text", "asks_for_change", "MAX_CHARS"]
