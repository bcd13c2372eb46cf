"""Interaction sessions as JSON Lines: reading, writing, per-repo capping and length filters.

Three line formats are read, one session a line:

- ours: ``{"session_id", "repo"?, "messages": [{"text", "intent"?, "confidence"?}, ...]}``;
- the shared corpus (SpecStory / Aider exports): ``{"session_id", "repo", "user_messages": [{"index", "text", ...}]}``
  (no intent: every message is unlabelled until a classifier labels it);
- benchmark sessions (:class:`swe_taskflow.schema.Session`): ``{"instance_id", "condition", "turns": [{"text", "intent"}]}``.

Every malformed line fails with an error naming the file, the line and the field: a corpus is
never measured on partial input. Empty sessions are an error unless the caller asks to skip them,
and then each skipped one is reported (:class:`Skipped`), never dropped silently.
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from .errors import InputError
from .jsonl import parse_jsonl_lines, write_jsonl
from .taxonomy import check_intent

#: Keys that hold a session's messages, in the order they are looked for.
MESSAGE_KEYS = ("messages", "user_messages", "turns")


@dataclass(frozen=True)
class SessionRecord:
    """One session: its user messages in order, with an intent (or None) per message.

    ``confidences`` is empty or has one entry per message (None where unknown). ``source`` names
    the corpus (e.g. ``specstory``) when the input says so; ``message_index`` keeps the corpus's
    own message indexes (``user_messages[].index``) so labels can be keyed without copying text.
    """

    session_id: str
    texts: tuple[str, ...]
    intents: tuple[str | None, ...]
    repo: str = ""
    confidences: tuple[float | None, ...] = ()
    source: str = ""
    message_index: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        for name in ("texts", "intents", "confidences", "message_index"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if not isinstance(self.session_id, str) or not self.session_id:
            raise InputError("a session needs a non-empty session_id", field="session_id", actual=self.session_id)
        n = len(self.texts)
        if n == 0:
            raise InputError("empty session (no user message)", field="messages", actual=0, expected=">= 1")
        if len(self.intents) != n:
            raise InputError("one intent (or None) per message", field="intents", expected=n, actual=len(self.intents))
        if not self.confidences:
            object.__setattr__(self, "confidences", (None,) * n)
        elif len(self.confidences) != n:
            raise InputError("one confidence (or None) per message", field="confidences", expected=n,
                             actual=len(self.confidences))
        if not self.message_index:
            object.__setattr__(self, "message_index", tuple(range(n)))
        elif len(self.message_index) != n:
            raise InputError("one index per message", field="message_index", expected=n, actual=len(self.message_index))
        for i, label in enumerate(self.intents):
            if label is not None:
                check_intent(label, field=f"messages[{i}].intent")

    @property
    def n_messages(self) -> int:
        return len(self.texts)

    @property
    def labelled(self) -> bool:
        """True when every message carries an intent."""
        return all(label is not None for label in self.intents)

    def intent_list(self) -> list[str]:
        """The intents as plain labels; raises if a message is unlabelled."""
        for i, label in enumerate(self.intents):
            if label is None:
                raise InputError("message has no intent", row=None, field=f"messages[{i}].intent",
                                 hint=f"session {self.session_id!r}: classify the sessions first")
        return list(self.intents)  # type: ignore[arg-type]

    def with_intents(self, intents: Sequence[str | None], confidences: Sequence[float | None] | None = None) -> "SessionRecord":
        return SessionRecord(self.session_id, self.texts, tuple(intents), self.repo,
                             tuple(confidences) if confidences is not None else self.confidences,
                             self.source, self.message_index)

    def to_dict(self) -> dict[str, Any]:
        """Our line format (intent and confidence per message)."""
        d: dict[str, Any] = {"session_id": self.session_id, "repo": self.repo}
        if self.source:
            d["source"] = self.source
        d["messages"] = [{"index": idx, "text": t, "intent": it, "confidence": c}
                         for idx, t, it, c in zip(self.message_index, self.texts, self.intents, self.confidences)]
        return d


@dataclass(frozen=True)
class Skipped:
    """A session that was read but left out, and why (reported, never silent)."""

    line: int
    session_id: str
    reason: str


def _session_id(obj: Mapping[str, Any], path: str, line: int) -> str:
    sid = obj.get("session_id")
    if sid is None and "instance_id" in obj:          # benchmark session rows
        sid = f"{obj['instance_id']}::{obj.get('condition', '')}" if obj.get("condition") else obj["instance_id"]
    if sid is None:
        raise InputError("missing session id", path=path, row=line, field="session_id")
    if isinstance(sid, int) and not isinstance(sid, bool):
        sid = str(sid)
    if not isinstance(sid, str) or not sid.strip():
        raise InputError("session id must be a non-empty string", path=path, row=line, field="session_id",
                         actual=sid)
    return sid


def _parse_line(obj: Mapping[str, Any], path: str, line: int, require_intents: bool) -> tuple[str, SessionRecord | None]:
    sid = _session_id(obj, path, line)
    key = next((k for k in MESSAGE_KEYS if k in obj), None)
    if key is None:
        raise InputError("missing messages", path=path, row=line, field="messages",
                         expected="one of " + ", ".join(MESSAGE_KEYS))
    msgs = obj[key]
    if not isinstance(msgs, list):
        raise InputError("messages must be a list", path=path, row=line, field=key, actual=type(msgs).__name__)
    if not msgs:
        return sid, None
    texts: list[str] = []
    intents: list[str | None] = []
    confs: list[float | None] = []
    indexes: list[int] = []
    for i, m in enumerate(msgs):
        where = f"{key}[{i}]"
        if not isinstance(m, dict):
            raise InputError("a message must be a JSON object", path=path, row=line, field=where,
                             actual=type(m).__name__)
        text = m.get("text")
        if not isinstance(text, str):
            raise InputError("message without text", path=path, row=line, field=f"{where}.text",
                             actual=None if text is None else type(text).__name__)
        label = m.get("intent")
        if label is None:
            if require_intents:
                raise InputError("message without intent", path=path, row=line, field=f"{where}.intent",
                                 hint="classify the sessions first (swe-taskflow flow measure --classifier ...)")
        else:
            check_intent(label, path=path, row=line, field=f"{where}.intent")
        conf = m.get("confidence")
        if conf is not None:
            if isinstance(conf, bool) or not isinstance(conf, (int, float)) or not math.isfinite(conf) \
                    or not 0.0 <= conf <= 1.0:
                raise InputError("confidence must be a number in [0, 1]", path=path, row=line,
                                 field=f"{where}.confidence", actual=conf)
            conf = float(conf)
        idx = m.get("index", m.get("turn_index", i))
        if isinstance(idx, bool) or not isinstance(idx, int):
            raise InputError("message index must be an integer", path=path, row=line, field=f"{where}.index",
                             actual=idx)
        texts.append(text)
        intents.append(label)
        confs.append(conf)
        indexes.append(idx)
    repo = obj.get("repo") or ""
    if not isinstance(repo, str):
        raise InputError("repo must be a string", path=path, row=line, field="repo", actual=repo)
    source = obj.get("source") or ""
    return sid, SessionRecord(sid, tuple(texts), tuple(intents), repo, tuple(confs), str(source), tuple(indexes))


def parse_session_lines(numbered: Iterable[tuple[int, bytes]], path: str, *, require_intents: bool, skip_empty: bool,
                        seen: dict[str, int], records: list[SessionRecord], record_lines: list[int],
                        skipped: list[Skipped]) -> None:
    """The line-by-line reader: validate ``(line_number, raw bytes)`` lines, appending to the given lists.

    This is the one implementation of the per-line checks. :func:`read_sessions_report` with
    ``engine="lines"`` runs it over a whole file; the Arrow reader (:mod:`swe_taskflow.session_table`)
    runs it over a block whose vectorized checks found anything wrong, so that the error it raises
    (file, line, field, reason) is the one a plain line-by-line read raises. ``seen`` maps every
    session id read so far to its line (duplicates are found across blocks).
    """
    for line, obj in parse_jsonl_lines(numbered, path):
        sid, rec = _parse_line(obj, path, line, require_intents)
        if sid in seen:
            raise InputError("duplicate session_id", path=path, row=line, field="session_id", actual=sid,
                             hint=f"first seen on line {seen[sid]}")
        seen[sid] = line
        if rec is None:
            if not skip_empty:
                raise InputError("empty session (no user message)", path=path, row=line,
                                 field=next(k for k in MESSAGE_KEYS if k in obj), expected=">= 1 message", actual=0,
                                 hint="pass skip_empty / --skip-empty to leave empty sessions out (they are reported)")
            skipped.append(Skipped(line, sid, "empty session (no user message)"))
            continue
        records.append(rec)
        record_lines.append(line)


def no_session_error(path: str) -> InputError:
    return InputError("no session to read", path=path, hint="the file is empty or every session was empty")


def write_sessions(path: str | os.PathLike, records: Iterable[SessionRecord]) -> int:
    """Write sessions in our format (intent and confidence per message), atomically."""
    return write_jsonl(path, (r.to_dict() for r in records))


def filter_min_messages(records: Iterable[SessionRecord], n: int) -> list[SessionRecord]:
    """Sessions with at least ``n`` raw user messages (the session filter of a target)."""
    if n < 1:
        raise InputError("min_messages must be >= 1", field="min_messages", actual=n)
    return [r for r in records if r.n_messages >= n]


def cap_per_repo(records: Sequence[SessionRecord], cap: int, rng: np.random.Generator) -> list[SessionRecord]:
    """At most ``cap`` sessions per repo, sampled with ``rng``; the result keeps the input order.

    Repos are visited in sorted order so the draws depend only on the input and the seed. Sessions
    without a repo form one group (``""``).
    """
    return [records[i] for i in cap_indices([r.repo for r in records], cap, rng)]


def cap_indices(repos: Sequence[str], cap: int, rng: np.random.Generator) -> list[int]:
    """The positions :func:`cap_per_repo` keeps, sorted (one sampler for records and session tables)."""
    if cap < 1:
        raise InputError("cap must be >= 1", field="cap", actual=cap)
    by_repo: dict[str, list[int]] = defaultdict(list)
    for i, repo in enumerate(repos):
        by_repo[repo].append(i)
    keep: list[int] = []
    for repo in sorted(by_repo):
        idx = by_repo[repo]
        if len(idx) <= cap:
            keep.extend(idx)
        else:
            chosen = rng.choice(len(idx), size=cap, replace=False)
            keep.extend(idx[j] for j in chosen)
    return sorted(keep)


def intent_lists(records: Iterable[SessionRecord]) -> list[list[str]]:
    """Each session's intents; raises (naming session and message) if any message is unlabelled."""
    return [r.intent_list() for r in records]


def label_sessions(records: Sequence[SessionRecord],
                   predict: Callable[[Sequence[str]], Sequence[Any]]) -> list[SessionRecord]:
    """Fill in the intent of every unlabelled message with ``predict`` (one batched call).

    ``predict(texts)`` returns one object per text with ``.intent`` and ``.confidence`` (e.g. a
    classifier's ``predict``). Messages that already carry an intent keep it.
    """
    todo = [(i, j) for i, r in enumerate(records) for j, label in enumerate(r.intents) if label is None]
    if not todo:
        return list(records)
    preds = list(predict([records[i].texts[j] for i, j in todo]))
    if len(preds) != len(todo):
        raise InputError("classifier returned a wrong number of predictions", expected=len(todo), actual=len(preds))
    intents = [list(r.intents) for r in records]
    confs = [list(r.confidences) for r in records]
    for (i, j), p in zip(todo, preds):
        intents[i][j] = check_intent(p.intent, field="predicted intent")
        confs[i][j] = float(p.confidence)
    return [r.with_intents(intents[k], confs[k]) for k, r in enumerate(records)]


__all__ = ["SessionRecord", "Skipped", "MESSAGE_KEYS",
           "parse_session_lines", "write_sessions", "filter_min_messages", "cap_per_repo", "cap_indices", "intent_lists",
           "label_sessions"]
