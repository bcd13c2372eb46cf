"""Evaluation-context checks of a split (Appendix E contract), deterministic, no model.

The splitting contract asks that every turn be actionable in the repository state the earlier turns
leave, and the evaluation asks that the task's FAIL_TO_PASS tests stay attributable to the requirements
the turns reveal (each issue turn is scored only against what was revealed so far). Checked here:

- ``no-request-turn``: a turn after the first carries no request: none of the issue's requirement
  sentences (:func:`swe_taskflow.split_checks.requirement_sentences`, verbatim or with most of their
  content words in one turn sentence), no sentence with a modal (must, should...) and no imperative
  sentence; or the first turn is too short to state a problem. Such a turn gives the agent nothing to
  act on.
- ``lost-test``: a FAIL_TO_PASS test that the original issue's text can be tied to, but no turn can.
- ``unattributed-test`` (``strict`` only): a FAIL_TO_PASS test no turn can be tied to, even when the
  original issue cannot be either (e.g. Go suite names such as ``TestCore``).

A test is tied to a text when a distinctive word of its identifier (split at ``_``, ``/``, ``::``,
camelCase; test vocabulary such as ``test``, ``should``, ``suite`` dropped) occurs among the text's
words. Its checkpoint turn is the turn with the largest IDF-weighted overlap (ties: the earliest);
a test tied to no turn is scored at the last checkpoint only. This is lexical: it cannot know what a
test exercises, so a wrongly tied test is possible, and ``strict`` fails tasks for their test naming.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

from .split_checks import _MODAL, Violation, _stem, content_words, normalize, requirement_sentences, sentences

#: ``on``: split-relative checks (a turn without a request, a test the split lost); ``strict``: also every
#: FAIL_TO_PASS test tied to some turn (the contract read literally); ``off``: none.
MODES = ("on", "strict", "off")
KINDS = ("no-request-turn", "lost-test", "unattributed-test")
#: The first turn (the issue) must have at least this many words to state a problem.
MIN_FIRST_TURN_WORDS = 5
#: A turn sentence carries an issue requirement when it holds this share of the requirement's content words.
REQUIREMENT_OVERLAP = 0.6

_TEST_WORDS = frozenset("""test tests testing unit units spec specs should suite suites it its when then and or the a an
of to in on for with is are be by js ts tsx jsx py go mjs cjs rs does do not no can if as at from return returns
get set new old case cases that this default works work correctly correct properly valid invalid src lib pkg
internal cmd app init main util utils helper helpers mock mocks fixture fixtures assertion assertions""".split())
_PARAMS = re.compile(r"\[[^\]]*\]")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_REQUEST = re.compile(
    r"^\W*(?:(?:please|also|now|then|next|finally|additionally)\W+)*(?:add|make|update|change|fix|implement|create|"
    r"remove|delete|rename|support|allow|ensure|handle|return|use|move|replace|extend|introduce|provide|expose|"
    r"write|refactor|keep|let|set|raise|throw|emit|log|store|save|validate|check|include|display|show|accept|"
    r"reject|prevent|avoid|convert|parse|migrate|register|enable|disable|expand|restrict|limit|treat|normalize|"
    r"document|report|read|load|send|compute|calculate|map|sort|filter|cache|skip)\b", re.I)


def words(text: str) -> set[str]:
    """Stemmed lower-case words of ``text``, identifiers split at ``_``, digits and camelCase."""
    out = set()
    for w in _WORD.findall(text):
        for part in _CAMEL.split(w):
            part = part.lower()
            if len(part) > 2:
                out.add(_stem(part))
    return out


def words_of_test(test_id: str) -> set[str]:
    """The distinctive words of a test identifier (parameters in ``[...]`` and test vocabulary dropped)."""
    return {w for w in words(_PARAMS.sub(" ", test_id)) if w not in _TEST_WORDS}


@dataclass(frozen=True)
class ContextReport:
    """The checks' verdict for one split, and each FAIL_TO_PASS test's checkpoint turn."""

    violations: tuple[Violation, ...]
    tests_by_turn: tuple[tuple[str, ...], ...]     # turn i -> the tests first scored after turn i
    unattributed: tuple[str, ...] = ()             # tied to no turn: scored at the last checkpoint only
    untraceable_in_issue: tuple[str, ...] = field(default=())   # tied to nothing in the original issue either

    @property
    def ok(self) -> bool:
        return not self.violations

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "violations": [v.to_dict() for v in self.violations],
                "tests_by_turn": [list(t) for t in self.tests_by_turn], "unattributed": list(self.unattributed),
                "untraceable_in_issue": list(self.untraceable_in_issue)}


def _has_request(turn: str, units: Sequence[tuple[str, set[str]]]) -> bool:
    sents = sentences(turn)
    if any(_MODAL.search(s) or _REQUEST.search(s) for s in sents):
        return True
    flat = normalize(turn)
    sent_words = [content_words(s) for s in sents]
    return any(u in flat or any(len(cw & sw) >= REQUIREMENT_OVERLAP * len(cw) for sw in sent_words)
               for u, cw in units)


def check_context(issue: str, turns: Sequence[str], fail_to_pass: Sequence[str], *, mode: str = "on") -> ContextReport:
    """Every evaluation-context violation of ``turns`` (a split of ``issue``) under ``mode`` (:data:`MODES`)."""
    if mode not in MODES:
        from .errors import ConfigError

        raise ConfigError("unknown context-check mode", field="context_checks", expected=MODES, actual=mode)
    units = [(normalize(u), content_words(u)) for u in requirement_sentences(issue)]
    turn_words = [words(t) for t in turns]
    issue_words = words(issue)
    df = Counter(w for ws in turn_words for w in ws)
    k = len(turns)
    by_turn: list[list[str]] = [[] for _ in turns]
    unattributed, untraceable, lost = [], [], []
    for test in dict.fromkeys(fail_to_pass):
        tw = words_of_test(test)
        # fsum: exactly rounded, so the order of set iteration (hash seed) cannot break a tie differently
        weights = [math.fsum(math.log((k + 1) / (df[w] + 0.5)) for w in tw & ws) if tw & ws else -1.0
                   for ws in turn_words]
        in_issue = bool(tw & issue_words)
        if not in_issue:
            untraceable.append(test)
        if not turns or max(weights) < 0:
            unattributed.append(test)
            if in_issue:
                lost.append(test)
            continue
        by_turn[max(range(k), key=lambda i: (weights[i], -i))].append(test)
    out: list[Violation] = []
    if mode != "off":
        for i, t in enumerate(turns):
            if i == 0 and len(_WORD.findall(t)) < MIN_FIRST_TURN_WORDS:
                out.append(Violation("no-request-turn", "turn 1 is too short to state a problem"))
            elif i > 0 and not _has_request(t, units):
                out.append(Violation("no-request-turn", f"turn {i + 1} states no requirement or request"))
        out += [Violation("lost-test", f"no turn names what {t!r} tests, the issue does") for t in lost]
        if mode == "strict":
            out += [Violation("unattributed-test", f"no turn names what {t!r} tests") for t in unattributed
                    if t not in lost]
    return ContextReport(tuple(out), tuple(tuple(t) for t in by_turn), tuple(unattributed), tuple(untraceable))


__all__ = ["MODES", "KINDS", "MIN_FIRST_TURN_WORDS", "ContextReport", "words", "words_of_test", "check_context"]
