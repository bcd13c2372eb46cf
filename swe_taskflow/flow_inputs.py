"""What ``flow score`` / ``flow gap`` compare: a target and a benchmark, each a Task-Flow file or sessions.

The core owns which kind a file is, the paper's default session filters and the resolution of
shipped target names, so every caller (the CLI, a notebook, a measurer's script) reads inputs the
same way. Labelling unlabelled messages needs a classifier (the builder's): callers inject it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .errors import InputError
from .jsonl import decode, iter_lines, read_json

if TYPE_CHECKING:   # numpy-backed: imported when a flow is loaded, so the CLI starts fast
    from .bootstrap import SessionCounts
    from .flow import Flow
    from .session_table import SessionTable

#: Session filter of a target given as sessions: at least 3 user messages (the paper's target).
TARGET_MIN_MESSAGES = 3
#: Session filter of a benchmark given as sessions: every session is scored.
BENCHMARK_MIN_MESSAGES = 1

#: ``read_labelled(path, select) -> (table, classifier info, empty sessions skipped)``: the sessions of
#: ``path`` that ``select`` keeps, every message labelled (a :class:`~swe_taskflow.session_table.SessionTable`,
#: read with :func:`~swe_taskflow.session_table.read_session_table`).
ReadLabelled = Callable[[str, Callable[["SessionTable"], "SessionTable"]],
                        tuple["SessionTable", dict[str, Any], int]]


def is_flow_file(path: str) -> bool:
    """A target Task-Flow file is one JSON document with this format; anything else is sessions JSONL."""
    from .target import FORMAT

    lineno, first = next(((n, raw) for n, raw in iter_lines(path) if raw.strip()), (1, b""))
    try:
        doc = json.loads(decode(first, path=path, row=lineno))   # line 1 parses: a JSONL session or a one-line flow file
    except (json.JSONDecodeError, RecursionError):
        try:
            doc = read_json(path)
        except InputError:
            return False                   # read_sessions will name the bad line
    return isinstance(doc, dict) and doc.get("format") == FORMAT


def resolve_target(name: str) -> str:
    """``default`` or a shipped target's name means the packaged file, unless a file of that name exists."""
    from .target import default_target_path, shipped_targets, target_path

    if Path(name).exists():
        return name
    if name == "default":
        return str(default_target_path())
    if name in shipped_targets():
        return str(target_path(name))
    return name


@dataclass(frozen=True)
class FlowInput:
    """One side of a comparison: its flow, its per-session counts (sessions only: for bootstrap), what it was."""

    flow: Flow
    counts: SessionCounts | None
    description: dict[str, Any]

    @property
    def kind(self) -> str:
        return self.description["kind"]


def load_flow_input(path: str, *, min_messages: int, role: str, read_labelled: ReadLabelled) -> FlowInput:
    """A target or benchmark given as a Task-Flow file or as sessions (filtered by ``min_messages``)."""
    from .target import load_target

    if is_flow_file(path):
        t = load_target(path)
        return FlowInput(t.flow, None, {"file": path, "kind": "flow", "name": t.name, "corrected": t.corrected,
                                        "min_messages": t.min_messages, "sample_size": dict(t.sample_size)})
    n_read = 0

    def select(table):
        nonlocal n_read
        n_read = table.n_sessions
        return table.filter_min_messages(min_messages)

    kept, clf_info, n_skipped = read_labelled(path, select)
    if not kept.n_sessions:
        raise InputError(f"no {role} session has at least {min_messages} message(s)", path=path,
                         field="min_messages", actual=min_messages)
    sc = kept.session_counts()
    desc = {"file": path, "kind": "sessions", "min_messages": min_messages, "sessions_read": n_read,
            "sessions_kept": kept.n_sessions, "empty_skipped": n_skipped, "classifier": clf_info}
    return FlowInput(sc.totals().normalized(), sc, desc)


def load_pair(target: str, benchmark: str, *, read_labelled: ReadLabelled, target_min_messages: int | None = None,
              benchmark_min_messages: int = BENCHMARK_MIN_MESSAGES,
              note: Callable[[str], None] = lambda _msg: None) -> tuple[FlowInput, FlowInput]:
    """Target and benchmark with the default filters; ``target`` may name a shipped target (see resolve_target)."""
    t = load_flow_input(resolve_target(target), role="target", read_labelled=read_labelled,
                        min_messages=TARGET_MIN_MESSAGES if target_min_messages is None else target_min_messages)
    if target_min_messages is not None and t.kind == "flow":
        note("note: --target-min-messages is ignored for a Task-Flow file (its filter is part of the file)")
    b = load_flow_input(benchmark, min_messages=benchmark_min_messages, role="benchmark", read_labelled=read_labelled)
    return t, b


__all__ = ["TARGET_MIN_MESSAGES", "BENCHMARK_MIN_MESSAGES", "FlowInput", "is_flow_file", "resolve_target",
           "load_flow_input", "load_pair"]
