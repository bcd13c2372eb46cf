"""Issue reports (a SWE-Bench Pro prompt, a pasted GitHub issue): detection, parts, and structural cues.

Issue texts are long, structured and written for a tracker, unlike the terse IDE chat the exemplars
model; almost all of them ask for a bug fix, a new feature or a refactor. The embedded classifier
therefore splits an issue report's share of those three intents with a head of its own that reads the
issue's title, its opening prose and cues of its structure (a "Steps to reproduce" section, a title
that starts with "Add", "no new interfaces"), never a label the issue declares about itself
(:mod:`.declared` removes those first).
"""

from __future__ import annotations

import re

import numpy as np

from ..sources.normalize import PRO_INTERFACE_HEADER, PRO_REQUIREMENTS_HEADER

#: the intents an issue report is split between (the rest of the taxonomy comes from the general head)
ISSUE_INTENTS = ("bug-fix", "new-feature", "refactor")

_SECTION = re.compile(
    r"^[\s#*_>-]*(title|description|summary|problem( description| statement)?|expected( behaviou?r| results?| outcome)?|"
    r"actual( behaviou?r| results?)?|current behaviou?r|steps? to (reproduce|play)|reproduc\w*|impact|motivation|"
    r"proposed (solution|changes)|ideal solution|context|additional (context|information)|environment|"
    r"what (did you do|happened|did you expect)\b.*|why is this needed|what would you like\b.*|requirements|"
    r"new interfaces introduced|component( name)?|version|issue)\s*[:.?]*[\s*_]*$", re.I | re.M)

_ADD = re.compile(r"^\W*(add|adds|adding|support|implement|introduce|allow|enable|new|provide|expose|create|extend|"
                  r"include)\b", re.I)
_BUG = re.compile(r"\b(fix(es|ed)?|incorrect(ly)?|fail(s|ed|ing|ure)?|errors?|crash(es|ing)?|broken|bug|wrong(ly)?|"
                  r"not (work|load|show|apply|applied|respect|handled|recogni[sz]ed|correctly|properly|displayed|updated|"
                  r"removed|deleted|preserved|saved)|doesn.?t|does not|don.?t|unable|cannot|can.?t|inconsistent|ignored|"
                  r"unexpected(ly)?|invalid|panic|regression|leaks?|misses|missing|lost|loses|hangs?|stuck|improperly|"
                  r"mismatch|incomplete|duplicated?|spoof\w*|vulnerab\w+|exposes?|bypass\w*)\b", re.I)
_LACK = re.compile(r"\b(lack(s|ing)?|no support|not support(ed)?|missing support|does not support|doesn.?t support|"
                   r"no (way|mechanism|option|ability|built-in)|cannot (configure|specify|set)|unsupported)\b", re.I)
_REFACTOR = re.compile(r"^\W*(refactor\w*|move|rename|extract|consolidat\w+|standardi[sz]\w+|unify|clean ?up|decouple|"
                       r"simplif\w+|reorgani[sz]\w+|migrate|replace|remove (unused|dead|legacy)|deprecat\w+|revert|"
                       r"centrali[sz]\w+|modernize|split)\b", re.I)
_REFACTOR_WORDS = re.compile(r"\b(refactor\w*|maintainab\w+|duplicat\w+|coupl\w+|boilerplate|readab\w+|"
                             r"technical debt|code quality|cleanup|legacy)\b", re.I)
_STEPS = re.compile(r"steps? (to|for) (repro|play|cause)|reproduc|to reproduce", re.I)
_ACTUAL = re.compile(r"actual (behaviou?r|result)|what happened|observed", re.I)
_CURRENT = re.compile(r"current behaviou?r", re.I)
_CRASH = re.compile(r"\b(crash\w*|traceback|exception|panic|error:|stack trace)\b", re.I)
_VERSION = re.compile(r"\b(version|environment|affected version)\b", re.I)
_WISH = re.compile(r"why is this needed|what would you like|proposed (solution|changes)|ideal solution|would improve|"
                   r"use case|motivation|opportunity", re.I)
_NO_INTERFACE = re.compile(r"\bno (new )?(public )?interfaces?\b|^none\.?$|^n/?a\b", re.I)

#: names of :func:`cue_features`' columns, in order
CUE_NAMES = ("title_add", "title_bug", "title_lack", "title_refactor", "title_refactor_words", "steps_to_reproduce",
             "actual_behaviour", "current_behaviour", "lack_of_support", "crash", "version_or_environment",
             "wish_template", "refactor_words", "no_new_interfaces")


def is_issue(text: str) -> bool:
    """Whether ``text`` reads as an issue report: long, with at least two distinct tracker-style sections."""
    if len(text) < 300:
        return False
    return len({m.group(1).lower().split()[0] for m in _SECTION.finditer(text)}) >= 2


def parts(text: str) -> tuple[str, str]:
    """(the issue statement, its "New interfaces introduced" text or "") of a Pro-style prompt or a plain issue."""
    statement, _, rest = text.partition(PRO_REQUIREMENTS_HEADER)
    interface = (rest or text).partition(PRO_INTERFACE_HEADER)[2]
    return statement.partition(PRO_INTERFACE_HEADER)[0], interface


def _plain(line: str) -> str:
    s = re.sub(r"[#*_`]+", " ", line).strip()
    return re.sub(r"(?i)^(issue title|title)\s*:?\s*", "", s).strip()


def title(statement: str) -> str:
    """The issue's first content line (markdown and a ``Title:`` prefix removed)."""
    for line in statement.splitlines():
        s = _plain(line)
        if len(s) > 3 and not re.match(r"(?i)^(title|description|summary|problem( statement)?)\W*$", s):
            return s[:300]
    return statement.strip()[:200]


def body(statement: str, n: int = 800) -> str:
    """The issue's prose after its title, flattened (markdown removed), at most ``n`` characters."""
    t = title(statement)
    flat = re.sub(r"\s+", " ", re.sub(r"[#*_`]+", " ", statement)).strip()
    k = flat.find(t)
    rest = flat[k + len(t):] if k >= 0 else flat
    return rest.strip()[:n]


def cue_features(statement: str, interface: str = "") -> np.ndarray:
    """0/1 structural cues (:data:`CUE_NAMES`) of one issue."""
    t, iface = title(statement), interface.strip()
    return np.array([
        bool(_ADD.search(t)), bool(_BUG.search(t)), bool(_LACK.search(t)), bool(_REFACTOR.search(t)),
        bool(_REFACTOR_WORDS.search(t)), bool(_STEPS.search(statement)), bool(_ACTUAL.search(statement)),
        bool(_CURRENT.search(statement)), bool(_LACK.search(statement)), bool(_CRASH.search(statement)),
        bool(_VERSION.search(statement)), bool(_WISH.search(statement)), bool(_REFACTOR_WORDS.search(statement)),
        len(iface) < 200 and bool(_NO_INTERFACE.search(iface)),
    ], dtype=np.float64)
