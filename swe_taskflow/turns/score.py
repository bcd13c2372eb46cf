"""Deterministic scores of answers to augmentation turns (the LLM judge scores explanations on top).

One scorer per kind; :mod:`swe_taskflow.turns.registry` dispatches by kind. Each reads the hidden
reference of a row's question item (``kind``, ``facts``, ``locations``, ``mutation``) and the agent's
answer text, and returns an :class:`AnswerScore` with a value in [0, 1], whether it counts as
correct, and what matched. Rules (docs/augmentations.md):

- execute: the share of recorded facts the answer states (counts next to their word, test names,
  printed lines); correct when every fact is stated;
- debug: whether the answer names the code location the gold patch changes (symbol, with its file
  when the symbol is short) - 1, only the file - 0.5; zero when the repository was changed;
- planning: recall of the reference files and symbols not already named in the turn text;
  correct at recall >= 0.5;
- review: whether the answer names the seeded defect's place: its file and (its line within
  :data:`LINE_TOLERANCE`, its symbol, or the mutated code) - 1, the file or symbol alone - 0.5.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..errors import InputError

LINE_TOLERANCE = 3
PLANNING_PASS = 0.5
_NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
_COUNT_WORDS = {"passed": r"pass(?:ed|es|ing)?|succeed(?:ed|s)?|green|ok",
                "failed": r"fail(?:ed|s|ing|ures?)?|red|broken",
                "error": r"errors?|erro(?:red|ring)",
                "skipped": r"skip(?:ped|s)?"}
_WINDOW = 48


@dataclass(frozen=True)
class AnswerScore:
    kind: str
    score: float
    correct: bool
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "score": round(self.score, 6), "correct": self.correct,
                "details": dict(self.details)}


def normalize(text: str) -> str:
    """Lower case, backticks and quotes removed, whitespace collapsed: what matching compares."""
    text = text.replace("`", " ").replace("\u2019", "'")
    return re.sub(r"\s+", " ", text).strip().lower()


def _numbers_near(text: str, word_rx: str) -> set[int]:
    """Integers (digits or number words) within a few words of a word matching ``word_rx``."""
    out: set[int] = set()
    for m in re.finditer(rf"\b(?:{word_rx})\b", text):
        lo, hi = max(0, m.start() - _WINDOW), min(len(text), m.end() + _WINDOW)
        left = text[lo:m.start()]
        # stop at a sentence or clause boundary so "3 passed, 1 failed" pairs each word with its number
        left = re.split(r"[.;,\n]|\band\b|\bbut\b", left)[-1]
        right = re.split(r"[.;,\n]|\band\b|\bbut\b", text[m.end():hi])[0]
        for part in (left, right):
            for tok in re.findall(r"\b\d+\b|\b[a-z]+\b", part):
                if tok.isdigit():
                    out.add(int(tok))
                elif tok in _NUMBER_WORDS:
                    out.add(_NUMBER_WORDS[tok])
                elif tok in ("no", "none", "nothing") and part is left:
                    out.add(0)
    return out


def _fact_stated(name: str, value: str, answer: str, all_facts: Mapping[str, str]) -> bool:
    a = normalize(answer)
    if name in _COUNT_WORDS:
        n = int(value)
        if n in _numbers_near(a, _COUNT_WORDS[name]):
            return True
        if n == 0 and name != "passed" and re.search(r"\ball (?:\d+ |[a-z]+ )?(?:tests? )?(?:pass|passed|succeed)", a):
            return all(int(all_facts.get(k, "0") or 0) == 0 for k in ("failed", "error"))
        return False
    if name in ("failing_test", "test"):
        short = re.split(r"::|\.", value)[-1].lower()
        return bool(re.search(rf"(?<![\w]){re.escape(short)}(?![\w])", a))
    if name == "exit_status":
        return bool(re.search(rf"\b(?:exit(?:s|ed)?|status|code|returns?)\D{{0,20}}\b{re.escape(value)}\b", a))
    return normalize(value) in a


def score_execute(item: Mapping[str, Any], answer: str, **_: Any) -> AnswerScore:
    facts = [(str(f["name"]), str(f["value"])) for f in item.get("facts") or ()]
    if not facts:
        raise InputError("an execute item needs facts", field="facts")
    table = dict(facts)
    hits = [(n, v, _fact_stated(n, v, answer, table)) for n, v in facts]
    k = sum(h for _, _, h in hits)
    return AnswerScore("execute", k / len(hits), k == len(hits),
                       {"facts": [{"name": n, "value": v, "stated": h} for n, v, h in hits]})


def _token(name: str, text: str) -> bool:
    return bool(re.search(rf"(?<![\w$]){re.escape(name.lower())}(?![\w$])", text))


def file_named(path: str, answer_norm: str, others: tuple[str, ...] = ()) -> bool:
    """The path, or its file name when no other reference file shares it."""
    if path.lower() in answer_norm:
        return True
    base = path.rsplit("/", 1)[-1].lower()
    if sum(1 for p in others if p.rsplit("/", 1)[-1].lower() == base) > 1:
        return False
    return _token(base, answer_norm)


def symbol_named(symbol: str, path: str, answer_norm: str) -> bool:
    """The qualified name, or its last part when it is distinctive (>= 6 characters, or with ``_`` or
    camelCase) or the file is named too."""
    if not symbol:
        return False
    if _token(symbol, answer_norm):
        return True
    last = re.split(r"[.:]", symbol)[-1]
    distinctive = len(last) >= 6 or "_" in last or bool(re.search(r"[a-z][A-Z]", last))
    return _token(last, answer_norm) and (distinctive or file_named(path, answer_norm))


def score_debug(item: Mapping[str, Any], answer: str, *, repo_unchanged: bool | None = None, **_: Any) -> AnswerScore:
    locs = list(item.get("locations") or ())
    if not locs:
        raise InputError("a debug item needs locations", field="locations")
    a = normalize(answer)
    paths = tuple(str(x["path"]) for x in locs)
    best, which = 0.0, None
    for loc in locs:
        s = 1.0 if symbol_named(str(loc.get("symbol") or ""), str(loc["path"]), a) and loc.get("symbol") else (
            0.5 if file_named(str(loc["path"]), a, paths) else 0.0)
        if not loc.get("symbol") and file_named(str(loc["path"]), a, paths):
            s = 1.0
        if s > best:
            best, which = s, dict(loc)
    details: dict[str, Any] = {"location": which, "repo_unchanged": repo_unchanged}
    if repo_unchanged is False:
        return AnswerScore("debug", 0.0, False, {**details, "why": "the repository was changed in a diagnose-only turn"})
    return AnswerScore("debug", best, best == 1.0, details)


def planning_entries(item: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(type, value, path) reference entries of a planning item: each file, then each named symbol."""
    locs = list(item.get("locations") or ())
    files = list(dict.fromkeys(str(x["path"]) for x in locs))
    syms = list(dict.fromkeys((str(x["symbol"]), str(x["path"])) for x in locs if x.get("symbol")))
    return [("file", p, p) for p in files] + [("symbol", s, p) for s, p in syms]


def score_planning(item: Mapping[str, Any], answer: str, *, turn_text: str = "", **_: Any) -> AnswerScore:
    entries = planning_entries(item)
    if not entries:
        raise InputError("a planning item needs locations", field="locations")
    a, t = normalize(answer), normalize(turn_text)
    paths = tuple(p for kind, p, _ in entries if kind == "file")

    def named(kind: str, value: str, path: str, text: str) -> bool:
        return file_named(value, text, paths) if kind == "file" else symbol_named(value, path, text)

    scored = [(k, v, p) for k, v, p in entries if not (t and named(k, v, p, t))] or entries
    hits = [(k, v, named(k, v, p, a)) for k, v, p in scored]
    recall = sum(h for *_, h in hits) / len(hits)
    return AnswerScore("planning", recall, recall >= PLANNING_PASS,
                       {"recall": round(recall, 6), "entries": [{"type": k, "value": v, "named": h} for k, v, h in hits],
                        "stated_in_turn": len(entries) - len(scored)})


def score_review(item: Mapping[str, Any], answer: str, *, repo_unchanged: bool | None = None, **_: Any) -> AnswerScore:
    mut = item.get("mutation") or {}
    locs = list(item.get("locations") or ())
    if not mut or not locs:
        raise InputError("a review item needs its mutation and location", field="mutation")
    a = normalize(answer)
    path, line = str(mut["path"]), int(mut["line"])
    sym = str(locs[0].get("symbol") or "")
    f = file_named(path, a, (path,))
    cited = [int(x) for pair in re.findall(r"\blines?\s*:?\s*(\d+)|:(\d+)\b", a) for x in pair if x]
    near = any(abs(n - line) <= LINE_TOLERANCE for n in cited)
    s = symbol_named(sym, path, a) if sym else False
    changed = _changed_fragment(str(mut.get("before", "")), str(mut.get("after", "")))
    quoted = bool(changed) and normalize(changed) in a
    value = 1.0 if f and (near or s or quoted) else 0.5 if (f or s or quoted) else 0.0
    details = {"file": f, "line_near": near, "symbol": s, "quoted_change": quoted, "repo_unchanged": repo_unchanged}
    if repo_unchanged is False:
        return AnswerScore("review", 0.0, False, {**details, "why": "the repository was changed in a review turn"})
    return AnswerScore("review", value, value == 1.0, details)


def _changed_fragment(before: str, after: str) -> str:
    """The mutated line's text around the change (what a reviewer would quote)."""
    i = len(os.path.commonprefix([before, after]))
    lo = max(0, after.rfind(" ", 0, max(0, i - 1)) + 1)
    return after[lo:].strip()[:40] if after.strip() else ""


__all__ = ["AnswerScore", "score_execute", "score_debug", "score_planning",
           "score_review", "normalize", "file_named", "symbol_named", "planning_entries", "LINE_TOLERANCE"]
