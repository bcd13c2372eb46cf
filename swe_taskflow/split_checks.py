"""Deterministic checks of a prompt split (Appendix E contract), no model needed.

A split of an issue into ordered user turns must keep every technical artifact verbatim,
introduce no artifact the issue lacks, cover every requirement sentence, never mention the
decomposition itself, and have three non-empty turns. Each check is a pure function of
``(issue, turns)``; :func:`check_split` runs them all and returns the violations found.

Violation kinds: ``missing-artifact``, ``added-artifact``, ``dropped-requirement``,
``process-reference``, ``empty-turn``, ``wrong-turn-count``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from .occurrences import normalize, occurring
from .split_coverage import coverage, idf_of, index_turns

#: Every kind this module can report, in report order.
KINDS = ("wrong-turn-count", "empty-turn", "missing-artifact", "added-artifact",
         "dropped-requirement", "process-reference")

#: Turns a split must have.
EXPECTED_TURNS = 3

#: A requirement sentence not found verbatim counts as covered when at least this IDF-weighted share
#: of its content words (stemmed) appears in a window of claimable turn sentences. Verbatim splits
#: pass on all 731 SWE-Bench Pro tasks; the blog's paraphrased qutebrowser split scores >= 0.44;
#: single dropped sentences are caught ~92% of the time (benchmarks/split_stats.py).
COVERAGE_THRESHOLD = 0.4
#: Consecutive turn sentences one requirement may be spread over (paraphrases merge or split sentences).
COVERAGE_WINDOW = 2
#: A turn sentence may cover a requirement only if it matches it at least this fraction as well as it
#: matches its closest issue sentence (see :func:`coverage`).
CLAIM_RATIO = 0.7
#: Requirement sentences with fewer content words are too short to judge.
MIN_CONTENT_WORDS = 3


@dataclass(frozen=True)
class Violation:
    """One broken rule: ``kind`` is one of :data:`KINDS`, ``detail`` says what and where."""

    kind: str
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "detail": self.detail}


# --------------------------------------------------------------------------- artifacts

_FENCE = re.compile(r"```[^\n`]*\n(.*?)```", re.S)
_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
_URL = re.compile(r"\bhttps?://[^\s<>()\[\]{}\"'`]+[^\s<>()\[\]{}\"'`.,;:!?]")
_PATH = re.compile(r"(?<![\w/.-])(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]*\w|(?<![\w/.-])[\w-]+\.(?:py|js|ts|tsx|jsx|go|rs|java|"
                   r"rb|php|c|h|cpp|hpp|cs|json|ya?ml|toml|ini|cfg|md|rst|txt|html|css|scss|sh|sql|xml|lock|proto)\b")
# identifiers: snake_case, camelCase / PascalCase with an inner capital, dotted names, calls
_IDENT = re.compile(
    r"(?<![\w$.])(?:[A-Za-z_$][\w$]*\.)+[A-Za-z_$][\w$]*(?:\(\))?"      # dotted: a.b.c, a.b()
    r"|(?<![\w$.])[A-Za-z$]*+_[\w$]*?[A-Za-z0-9$][\w$]*+"               # snake_case / _private / SNAKE_CASE
    r"|(?<![\w$.])[a-z]+[A-Z][\w$]*"                                    # camelCase
    r"|(?<![\w$.])[A-Z][a-z0-9]+[A-Z][\w$]*"                            # PascalCase with an inner capital
    r"|(?<![\w$.])[A-Za-z_$][\w$]*\(\)")                                # call()
# possessive: a shorter prefix of a number is always followed by a digit, so backtracking can never
# succeed, only cost quadratic time on a long run of digits followed by a letter
_NUMBER = re.compile(r"(?<![\w.$])-?\d++(?:\.\d++)*+(?:%|ms|s|px|kb|mb|gb)?+(?![\w.]*\w)")
_LIST_MARKER = re.compile(r"^[^\S\n]*+\d++[.)]\s", re.M)
_DQUOTE = re.compile(r"(?<![\w\\])\"([^\"\n]{2,200})\"")
_SQUOTE = re.compile(r"(?<![\w\\])'([^'\n]{2,200})'(?!\w)")
_ERROR = re.compile(r"\b(?:[A-Z]\w*(?:Error|Exception|Warning)|Traceback|panic|FATAL|ERROR)\b[^\n]*")


def _is_number(artifact: str) -> bool:
    return _NUMBER.fullmatch(artifact) is not None


def _present(artifacts: Sequence[str], text: str) -> set[str]:
    """The (normalized) artifacts that occur in ``text``: one pass over the text for all of them."""
    return occurring(artifacts, text, numbers=[_is_number(a) for a in artifacts])


def extract_artifacts(text: str) -> list[str]:
    """The technical artifacts of ``text`` in first-seen order: code blocks and spans, URLs,
    file paths, error messages, quoted strings, identifiers and numbers."""
    found: list[str] = []
    seen: set[str] = set()

    def add(a: str) -> None:
        a = normalize(a).strip()
        if a and a not in seen:
            seen.add(a)
            found.append(a)

    for m in _FENCE.finditer(text):
        add(m.group(1))
    prose = _FENCE.sub(" ", text)
    for m in _SPAN.finditer(prose):
        add(m.group(1))
    for rx in (_URL, _PATH):
        for m in rx.finditer(prose):
            add(m.group(0))
    for m in _ERROR.finditer(prose):
        line = m.group(0).strip().rstrip(".")
        if ":" in line:           # "ValueError: bad value" is a message; a bare class name is an identifier
            add(line)
    for rx in (_DQUOTE, _SQUOTE):
        for m in rx.finditer(prose):
            add(m.group(1))
    for m in _IDENT.finditer(prose):
        add(m.group(0).rstrip("."))
    numbers_text = _LIST_MARKER.sub(" ", prose)
    for m in _NUMBER.finditer(numbers_text):
        add(m.group(0))
    again = _present(found, text)      # keep only what the matcher finds again
    return [a for a in found if a in again]


def missing_artifacts(issue: str, turns: Sequence[str]) -> list[str]:
    """Artifacts of the issue that no turn carries verbatim."""
    arts = extract_artifacts(issue)
    present = _present(arts, "\n".join(turns))
    return [a for a in arts if a not in present]


def added_artifacts(issue: str, turns: Sequence[str]) -> list[str]:
    """Artifacts of the turns that the issue lacks: a new identifier, number, path... is a new requirement."""
    arts = extract_artifacts("\n\n".join(turns))
    present = _present(arts, issue)
    return [a for a in arts if a not in present]


# --------------------------------------------------------------------------- requirements

_STOP = frozenset("""a an the and or but if then else of to in on at by for with from into onto as is are was were be
been being it its this that these those there their they them we our you your he she his her i me my not no nor so
than too very can could should would will shall must may might do does did done has have had having also any all
each every some such only own same other both either neither which who whom whose what when where why how
while about above below up down out over under again further once here more most few many much via per
need needs needed required require requires ensure ensures make makes made use uses used using when whenever
""".split())
_WORD = re.compile(r"[A-Za-z_$][\w$]*|\d+(?:\.\d+)*")
_SENT_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[*-])")
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d+[.)])\s+")
_MODAL = re.compile(r"\b(must|should|shall|needs? to|has to|have to|required|requires?|expected|ensure)\b", re.I)
_REQ_HEADER = re.compile(r"^[^\S\n]*+(?:\*\*|#+[^\S\n]*+)?Requirements:?[^\S\n]*+(?:\*\*)?[^\S\n]*+$", re.M | re.I)
_NO_IFACE = re.compile(r"^\s*(?:none\.?|n/?a\.?|no new (?:public )?interfaces?\b.*)$", re.I)
_IFACE_HEADER = re.compile(r"^[^\S\n]*+(?:\*\*|#+[^\S\n]*+)?New interfaces introduced:?[^\S\n]*+(?:\*\*)?[^\S\n]*+$",
                           re.M | re.I)


def _stem(word: str) -> str:
    w = word.lower()
    for suffix in ("ing", "ed", "es", "s", "ly"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            return w[: -len(suffix)]
    return w


def content_words(text: str) -> set[str]:
    """Stemmed, lower-cased words that carry meaning (stop words and 1-letter words dropped)."""
    return {_stem(w) for w in _WORD.findall(text) if len(w) > 1 and w.lower() not in _STOP}


def sentences(text: str) -> list[str]:
    """Sentences of ``text``: each line (bullet) split at sentence ends; code blocks stay whole."""
    out: list[str] = []
    for block in re.split(r"(```.*?```)", text, flags=re.S):
        if block.startswith("```"):
            out.append(block)
            continue
        for para in re.split(r"\n\s*\n|\n(?=\s*(?:[-*•+]|\d+[.)])\s)", block):
            para = _BULLET.sub("", normalize(para))
            out.extend(s for s in _SENT_END.split(para) if s.strip())
    return out


def requirement_sentences(issue: str) -> list[str]:
    """Sentences that state a requirement: every sentence of a ``Requirements:`` / ``New interfaces
    introduced:`` section, and any sentence of the issue body with a modal (must, should, needs to...)."""
    m_req = _REQ_HEADER.search(issue)
    m_if = _IFACE_HEADER.search(issue)
    cuts = sorted(m.start() for m in (m_req, m_if) if m)
    body = issue[: cuts[0]] if cuts else issue
    sections = issue[cuts[0]:] if cuts else ""
    units = [s for s in sentences(body) if _MODAL.search(s)]
    for part in (_IFACE_HEADER.split(_REQ_HEADER.sub("\n\n", sections))):
        units += [s for s in sentences(part) if not _NO_IFACE.match(s)]
    return [u for u in units if len(content_words(u)) >= MIN_CONTENT_WORDS and not u.startswith("```")]


def dropped_requirements(issue: str, turns: Sequence[str], *, threshold: float = COVERAGE_THRESHOLD,
                         claim_ratio: float = CLAIM_RATIO) -> list[str]:
    """Requirement sentences of the issue that the turns do not cover: neither verbatim nor with an
    IDF-weighted ``threshold`` share of their content words in claimable turn sentences."""
    units = requirement_sentences(issue)
    verbatim = occurring([normalize(u) for u in units], "\n".join(turns))
    todo = [u for u in units if normalize(u) not in verbatim]
    if not todo:
        return []
    issue_sents = [content_words(s) for s in sentences(issue)]
    idf = idf_of(issue_sents)
    index = index_turns(issue_sents, [[content_words(s) for s in sentences(t)] for t in turns], idf)
    scores: dict[str, float] = {}
    for u in todo:
        if u not in scores:
            scores[u] = coverage(content_words(u), index, idf, claim_ratio, COVERAGE_WINDOW)
    return [u for u in todo if scores[u] < threshold]


# --------------------------------------------------------------------------- process references

_PROCESS = re.compile(
    r"\bpart\s+(?:\d+|one|two|three|i{1,3})\b"
    r"|\b(?:previous|earlier|prior|last|first|second|third|next|following|remaining|final|other|above)\s+"
    r"(?:turns?|parts?|segments?|prompts?|sub-?tasks?|chunks?|pieces?)\b"
    r"|\b(?:turn|segment|prompt|step)\s+(?:\d+|one|two|three)\s+of\s+(?:\d+|three)\b"
    r"|\bas\s+split\b|\bsplit\s+(?:above|earlier|before|previously)\b"
    r"|\b(?:i|we)\s+(?:have\s+|had\s+)?(?:split|divided|broke|broken|decomposed)\b"
    r"|\b(?:split|divided|broken|decomposed)\s+(?:up\s+)?into\s+(?:\w+\s+)?(?:parts|turns|messages|prompts|steps|pieces)\b"
    r"|\bdecomposition\b|\bthis\s+(?:split|decomposition)\b"
    r"|\b(?:in|from)\s+(?:my|the)\s+(?:previous|last|earlier)\s+(?:message|turn|request)\b",
    re.I)


def process_references(issue: str, turns: Sequence[str]) -> list[tuple[int, str]]:
    """(turn number, phrase) for each mention of the decomposition that the issue itself does not contain."""
    issue_phrases = {normalize(m.group(0)).lower() for m in _PROCESS.finditer(issue)}
    out = []
    for i, turn in enumerate(turns, start=1):
        for m in _PROCESS.finditer(turn):
            if normalize(m.group(0)).lower() not in issue_phrases:
                out.append((i, m.group(0)))
    return out


# --------------------------------------------------------------------------- all checks

def _clip(text: str, n: int = 120) -> str:
    text = normalize(text)
    return text if len(text) <= n else text[: n - 3] + "..."


def check_split(issue: str, turns: Sequence[str], *, expected_turns: int = EXPECTED_TURNS,
                coverage_threshold: float = COVERAGE_THRESHOLD, claim_ratio: float = CLAIM_RATIO) -> list[Violation]:
    """Every violation of the splitting contract that needs no model; empty when the split is sound."""
    turns = list(turns)
    out: list[Violation] = []
    if len(turns) != expected_turns:
        out.append(Violation("wrong-turn-count", f"expected {expected_turns} turns, got {len(turns)}"))
    for i, t in enumerate(turns, start=1):
        if not isinstance(t, str) or not t.strip():
            out.append(Violation("empty-turn", f"turn {i} is empty"))
    turns = [t if isinstance(t, str) else "" for t in turns]
    out += [Violation("missing-artifact", f"not verbatim in any turn: {_clip(a)!r}")
            for a in missing_artifacts(issue, turns)]
    out += [Violation("added-artifact", f"not in the issue: {_clip(a)!r}")
            for a in added_artifacts(issue, turns)]
    out += [Violation("dropped-requirement", f"not covered: {_clip(u)!r}")
            for u in dropped_requirements(issue, turns, threshold=coverage_threshold,
                                                 claim_ratio=claim_ratio)]
    out += [Violation("process-reference", f"turn {i} mentions the split: {p!r}")
            for i, p in process_references(issue, turns)]
    return out


def violation_kinds(violations: Iterable[Violation]) -> set[str]:
    """The set of kinds among ``violations`` (handy in reports and tests)."""
    return {v.kind for v in violations}
