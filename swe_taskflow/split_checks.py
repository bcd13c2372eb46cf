"""Deterministic checks of a prompt split (Appendix E contract), no model needed.

A split of an issue into ordered user turns must keep every technical artifact verbatim,
introduce no artifact the issue lacks, cover every requirement sentence, never mention the
decomposition itself, and have three non-empty turns. Each check is a pure function of
``(issue, turns)``; :func:`check_split` runs them all and returns the violations found.

Violation kinds: ``missing-artifact``, ``added-artifact``, ``dropped-requirement``,
``process-reference``, ``empty-turn``, ``wrong-turn-count``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence, TypeVar

from .occurrences import normalize, occurring

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


# --------------------------------------------------------------------------- requirement coverage
# Which turn sentences can stand for a requirement sentence. Sentences are sets of content words
# (:func:`content_words`); similarity is an IDF-weighted F1. A sentence is compared only with sentences
# sharing a word with it, rarest words first and at most CANDIDATE_BUDGET of them, which is exact for
# issues of up to that many sentences and keeps a huge issue linear instead of quadratic.

#: Most sentences one sentence is compared with (rarest shared words first).
CANDIDATE_BUDGET = 128

T = TypeVar("T", int, tuple[int, int])   # a posting: a sentence, or (turn, sentence)


def idf_of(sents: Sequence[set[str]]) -> dict[str, float]:
    """Inverse sentence frequency of each content word of the issue: words every sentence repeats
    ("method", the project name) say little about which requirement a turn covers."""
    df = Counter(w for s in sents for w in s)
    n = len(sents)
    return {w: math.log((n + 1) / (c + 0.5)) for w, c in df.items()}


def _wsum(words: set[str], idf: dict[str, float]) -> float:
    return sum(idf.get(w, 1.0) for w in words)


def _f1(a: set[str], b: set[str], idf: dict[str, float], wa: float | None = None, wb: float | None = None) -> float:
    """IDF-weighted F1 overlap of two word sets (1.0 for a verbatim copy); ``wa``/``wb``: their weights, if known."""
    inter = _wsum(a & b, idf)
    if inter <= 0:
        return 0.0
    wa = _wsum(a, idf) if wa is None else wa
    wb = _wsum(b, idf) if wb is None else wb
    return 2 * inter / (wa + wb)    # = 2pr/(p+r) with p = inter/wb, r = inter/wa


def _postings(sets: Iterable[set[str]]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, s in enumerate(sets):
        for w in s:
            out.setdefault(w, []).append(i)
    return out


def _candidates(words: set[str], postings: Mapping[str, list[T]], budget: int = CANDIDATE_BUDGET) -> list[T]:
    """Sentences sharing a word with ``words``, rarest words first, at most ``budget`` of them.

    A sentence that shares no word scores 0, so when the shared words' postings fit the budget (always
    when there are at most ``budget`` sentences) the result is every sentence that can score: exact.
    Past the budget the most common words stop adding candidates, which keeps a check on a huge issue
    linear in its length instead of quadratic.
    """
    ws = sorted((w for w in words if w in postings), key=lambda w: (len(postings[w]), w))
    out: set[T] = set()
    for w in ws:
        plist = postings[w]
        if len(out) + len(plist) > budget:
            if not out:
                out.update(plist[:budget])
            break
        out.update(plist)
    return sorted(out)


@dataclass(frozen=True)
class TurnIndex:
    """Turn sentences (content words) and, for each, how closely its best-matching issue sentence matches it."""

    sents: tuple[tuple[set[str], ...], ...]     # per turn, per sentence
    best: tuple[tuple[float, ...], ...]          # per turn, per sentence: max F1 over issue sentences
    weight: tuple[tuple[float, ...], ...]        # per turn, per sentence: IDF weight of its words
    postings: dict[str, list[tuple[int, int]]]   # word -> (turn, sentence) holding it


def index_turns(issue_sents: list[set[str]], turn_sents: Sequence[Sequence[set[str]]],
                idf: dict[str, float]) -> TurnIndex:
    """The turn sentences' words, best match among issue sentences, weights, and a word index."""
    exact = {frozenset(x) for x in issue_sents}
    issue_post = _postings(issue_sents)
    issue_w = [_wsum(x, idf) for x in issue_sents]
    sents, best, weight = [], [], []
    for ts in turn_sents:
        ts = tuple(ts)
        ws = tuple(_wsum(t, idf) for t in ts)
        row = []
        for t, wt in zip(ts, ws):
            if t and frozenset(t) in exact:
                row.append(1.0)      # a verbatim copy of an issue sentence: nothing matches better
            else:
                row.append(max((_f1(issue_sents[i], t, idf, issue_w[i], wt) for i in _candidates(t, issue_post)),
                               default=0.0))
        sents.append(ts)
        best.append(tuple(row))
        weight.append(ws)
    flat = [(ti, j) for ti, ts in enumerate(sents) for j in range(len(ts))]
    post = {w: [flat[i] for i in ids] for w, ids in _postings(sents[ti][j] for ti, j in flat).items()}
    return TurnIndex(tuple(sents), tuple(best), tuple(weight), post)


def coverage(need: set[str], index: TurnIndex, idf: dict[str, float], claim_ratio: float,
             window: int) -> float:
    """Best IDF-weighted share of the unit's content words found in a window of up to
    ``window`` consecutive turn sentences that the unit may claim.

    A turn sentence is claimable only if it resembles the unit nearly as much (``claim_ratio``)
    as it resembles its closest issue sentence: a verbatim copy of *another* requirement cannot
    stand in for a dropped one, while a paraphrase merging two requirements serves both. Only windows
    holding a sentence that shares a word with the unit can score, so only those are looked at.
    """
    total = _wsum(need, idf)
    if total <= 0:
        return 1.0
    claim: dict[tuple[int, int], set[str]] = {}

    def claimable(ti: int, j: int) -> set[str]:
        if (ti, j) not in claim:
            t, b = index.sents[ti][j], index.best[ti][j]
            claim[ti, j] = t if _f1(need, t, idf, total, index.weight[ti][j]) >= claim_ratio * b else set()
        return claim[ti, j]

    best = 0.0
    for ti, j in _candidates(need, index.postings):
        n = len(index.sents[ti])
        for start in range(max(0, j - window + 1), j + 1):
            acc: set[str] = set().union(*(claimable(ti, i) for i in range(start, min(n, start + window))))
            best = max(best, _wsum(need & acc, idf) / total)
    return best



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
