"""The type an issue declares about itself (``Labels: bug``, ``Issue Type: Feature Idea``, a ``Bug Report`` or
``Feature Request`` template heading, ``[Bug]:``): a development signal for the classifier, never a feature.

SWE-Bench Pro issue texts often keep the label or template of the tracker they came from. These give a
second, independent reading of "bug-fix or new-feature" for ~140 of the 731 tasks, used to measure (and,
on a development half, to fit) the classifier. So that the classifier cannot read the answer off the
text, :func:`strip_declared` removes every marker this module recognises, and the embedded classifier
applies it to every message before it looks at one: the declared type can never act as a feature.

Only markers are read: a title verb ("Add ...", "Fix ...") is the issue's content, not a declared label.
"""

from __future__ import annotations

import re

BUG, FEATURE, REFACTOR = "bug-fix", "new-feature", "refactor"

# A field naming the type or labels, e.g. "**Labels:** bug, back-end" or "Issue Type: Feature Idea".
_FIELD = re.compile(r"^[\W_]*(labels?|issue type|type of issue|type)[\W_]*:[\W_]*(?P<value>.*)$", re.I)
# A field name alone on its line (its value is on the next non-blank line).
_FIELD_ALONE = re.compile(r"^[\W_]*(labels?|issue type|type of issue)[\W_]*:?[\W_]*$", re.I)
_VALUE_BUG = re.compile(r"\bbug(s|fix| report| fix)?\b", re.I)
_VALUE_FEATURE = re.compile(r"\b(feature|enhancement|improvement)\b", re.I)
_VALUE_REFACTOR = re.compile(r"\brefactor(ing)?\b", re.I)

# Template headings (a whole line once markdown is removed) that declare the type.
_HEADINGS = {
    BUG: re.compile(r"^(bug( report| description| details)?|describe the bug|reproducing the bug|"
                    r"bugfix pull request)\s*:?$", re.I),
    FEATURE: re.compile(r"^(feature( request| idea| description| proposal| pull request)?|enhancement|"
                        r"feature ?/ ?enhancement to add|is your feature request related to a problem\??.*|"
                        r"what would you like teleport to do\??|what'?s the problem this feature will solve\??)"
                        r"\s*[:.]?$", re.I),
}
# A type tag in front of a title: "[Bug]: ...", "Bug report: ...", "Feature request: ...".
_TITLE_TAG = re.compile(r"\[(?P<t1>bug|feature|enhancement|feature request)\]\s*:?\s*|"
                        r"\b(?P<t2>bug report|bug|feature request|feature|enhancement)\s*:\s+(?=\S)", re.I)


def _plain(line: str) -> str:
    """A line without markdown emphasis, heading hashes, list dashes and the leading ``Title:``."""
    s = re.sub(r"[*_`#>]+", " ", line)
    s = re.sub(r"^\s*[-+]\s+", "", s)
    s = re.sub(r"^\s*title\s*:\s*", "", s, flags=re.I)
    return re.sub(r"\s+", " ", s).strip()


def _value_types(value: str) -> set[str]:
    out = set()
    if _VALUE_BUG.search(value):
        out.add(BUG)
    if _VALUE_FEATURE.search(value):
        out.add(FEATURE)
    if _VALUE_REFACTOR.search(value):
        out.add(REFACTOR)
    return out


def _scan(text: str) -> tuple[set[str], list[str]]:
    """(declared types found, the text's lines with every marker removed)."""
    types: set[str] = set()
    kept: list[str] = []
    lines = text.splitlines()
    pending_value = False
    for line in lines:
        plain = _plain(line)
        if pending_value and plain:
            pending_value = False
            found = _value_types(plain)
            if found and len(plain) <= 60:
                types |= found
                continue
        m = _FIELD.match(plain)
        if m and m.group("value") and len(plain) <= 120:
            found = _value_types(m.group("value"))
            if found:
                types |= found
                continue
        if _FIELD_ALONE.match(plain):
            pending_value = True
            continue
        heading = next((t for t, rx in _HEADINGS.items() if rx.match(plain)), None)
        if heading:
            types.add(heading)
            continue
        tags = list(_TITLE_TAG.finditer(line)) if len(plain) <= 160 else []
        for tag in tags:
            word = (tag.group("t1") or tag.group("t2")).lower()
            types.add(BUG if word.startswith("bug") else FEATURE)
        kept.append(_TITLE_TAG.sub("", line) if tags else line)
    return types, kept


def declared_type(text: str) -> str | None:
    """The one type the issue declares (bug-fix, new-feature or refactor), or None (none, or conflicting)."""
    types, _ = _scan(text)
    return types.pop() if len(types) == 1 else None


def strip_declared(text: str) -> str:
    """``text`` without any type marker :func:`declared_type` reads (what the classifier sees)."""
    if not re.search(r"bug|feature|enhancement|improvement|refactor|label|type|teleport", text, re.I):
        return text
    return "\n".join(_scan(text)[1])
