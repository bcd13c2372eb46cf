"""Sessions as columns, read with Arrow: what ``flow measure``, ``flow score/gap/plot`` and the bootstrap count.

Why: checking a million messages one Python object at a time (``json.loads``, a dataclass and a
label check per message) took several seconds where Arrow's JSON reader and a few vectorized
checks take a fraction of one, and counting needs only each message's intent code and each
session's length, never a Python object per message.

How it stays exact: the file is read in blocks of whole lines (so memory is bounded by the block,
not the file). Each block is screened (valid UTF-8; every non-blank line starts with ``{``, which also
keeps a top-level ``null`` from Arrow, whose JSON reader crashes the process on one (pyarrow 26); no line
with enough brackets to be nested past Python's parser limit unless Python parses it; no key
written as ``null`` that Arrow could not tell from a missing one), parsed by Arrow with a fixed
schema (a value of another type is an Arrow error) and checked vectorized (known intents with
``is_in``, confidences in [0, 1], a session id, a text per message, empty sessions). A block in
which anything is unusual is read again by the line-by-line reader
(:func:`swe_taskflow.sessions.parse_session_lines`, the one implementation of the per-line checks):
it raises the error a plain line-by-line read raises (file, line, field, reason) or, when the block
was only unusual, returns its sessions. Duplicate session ids are found across blocks, and the
earliest error in the file is the one raised. So the sessions, the skipped ones and the first
error are the line reader's by construction (``tests/unit/test_session_table.py`` compares them).
"""

from __future__ import annotations

import io
import json
import os
import re
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from .errors import InputError
from .jsonl import check_input_file, iter_lines
from .sessions import (MESSAGE_KEYS, SessionRecord, Skipped, cap_indices, no_session_error,
                       parse_session_lines)
from .taxonomy import INTENT_INDEX, INTENTS

if TYPE_CHECKING:
    from .bootstrap import SessionCounts
    from .flow import FlowCounts

#: Bytes read per block (whole lines; a longer line makes its block longer).
BLOCK_BYTES = 8 << 20
#: A line with more opening brackets than this is parsed by Python too (its parser stops near 1000 levels,
#: less the caller's stack).
MAX_OPEN_BRACKETS = 400
#: Intent code of an unlabelled message.
UNLABELLED = -1

_MESSAGE = pa.struct([("text", pa.string()), ("intent", pa.string()), ("confidence", pa.float64()),
                      ("index", pa.int64()), ("turn_index", pa.int64())])
_SCHEMA = pa.schema([("session_id", pa.string()), ("instance_id", pa.string()), ("condition", pa.string()),
                     ("repo", pa.string()), ("source", pa.string())]
                    + [(key, pa.list_(_MESSAGE)) for key in MESSAGE_KEYS])
_PARSE = pj.ParseOptions(explicit_schema=_SCHEMA, unexpected_field_behavior="ignore")
#: The system allocator reuses a freed block's pages for the next block; Arrow's default pool faulted in
#: fresh pages per block (measured: 0.15 s of system time and 45 MiB more per million messages).
_POOL = pa.system_memory_pool()


# pyarrow imports pandas (a second or so of start-up) the first time it converts a Python value
# (pa.array, pa.scalar, a Python scalar given to a compute function) or calls Array.to_numpy; the
# helpers below move data through buffers instead, so `flow measure` never pays for it.

def _strings(values: Sequence[str]) -> pa.Array:
    """A string array built from its buffers."""
    data = [v.encode("utf-8") for v in values]
    offsets = np.zeros(len(data) + 1, dtype=np.int32)
    np.cumsum([len(d) for d in data], out=offsets[1:])
    return pa.Array.from_buffers(pa.string(), len(data), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))])


def _int64s(values: np.ndarray) -> pa.Array:
    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), values.size, [None, pa.py_buffer(values)])


def _numbers(arr: pa.Array, dtype, fill) -> np.ndarray:
    """A fixed-width Arrow array as numpy (a copy), nulls replaced by ``fill``."""
    dtype = np.dtype(dtype)
    values = np.frombuffer(arr.buffers()[1], dtype=dtype, count=len(arr), offset=arr.offset * dtype.itemsize).copy()
    if arr.null_count:
        values[~_valid(arr)] = fill
    return values


def _valid(arr: pa.Array) -> np.ndarray:
    """Validity of each entry as a numpy bool array."""
    if not arr.null_count:
        return np.ones(len(arr), dtype=bool)
    bits = np.unpackbits(np.frombuffer(arr.buffers()[0], dtype=np.uint8), bitorder="little")
    return bits[arr.offset:arr.offset + len(arr)].astype(bool)


_INTENTS = _strings(INTENTS)
_EMPTY = _strings([""])[0]
_SEPARATOR = _strings(["::"])[0]
#: The characters ``str.strip()`` removes (``str.isspace``), so a session id is blank exactly as Python says.
PY_WHITESPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
                 + "\u2028\u2029\u202f\u205f\u3000")
_NOT_BLANK = "[^" + "".join(f"\\x{{{ord(c):x}}}" for c in PY_WHITESPACE) + "]"
#: Keys whose ``null`` the line reader reads differently from a missing key (``"messages": null`` is an
#: error, a missing ``messages`` falls through to ``user_messages``); Arrow reads both as null.
_NULL_SENSITIVE = MESSAGE_KEYS + ("index", "turn_index")


def _key_pattern(key: str) -> re.Pattern[bytes]:
    """A JSON key spelled with or without ``\\uXXXX`` escapes (Python and Arrow both decode them)."""
    def one(ch: str) -> str:
        hexes = "".join(f"[{h}{h.upper()}]" if h.isalpha() else h for h in f"{ord(ch):04x}")
        return f"(?:{re.escape(ch)}|\\\\u{hexes})"
    return re.compile(('"' + "".join(one(c) for c in key) + '"').encode())


_KEY_PATTERNS = {key: _key_pattern(key) for key in _NULL_SENSITIVE}


def _key_count(block: bytes | bytearray, key: str, escapes: bool) -> int:
    return len(_KEY_PATTERNS[key].findall(block)) if escapes else block.count(b'"' + key.encode() + b'"')


@dataclass(frozen=True, eq=False)
class SessionTable:
    """Sessions as columns: one entry per session, message columns concatenated in session order.

    ``codes`` holds each message's index into :data:`~swe_taskflow.taxonomy.INTENTS` (-1 =
    unlabelled). ``texts``, ``confidences`` (NaN = unknown), ``message_index`` and ``sources`` are
    kept only when the reader is asked for messages (to classify or write them); counting needs
    ``codes`` and ``lengths`` alone. ``lines`` are the sessions' line numbers in their file (0 when
    built from records).
    """

    session_ids: pa.Array
    repos: pa.Array
    lines: np.ndarray
    lengths: np.ndarray
    codes: np.ndarray
    sources: pa.Array | None = None
    texts: pa.ChunkedArray | None = None
    confidences: np.ndarray | None = None
    message_index: np.ndarray | None = None

    # ------------------------------------------------------------------ shape
    @property
    def n_sessions(self) -> int:
        return int(self.lengths.size)

    @property
    def n_messages(self) -> int:
        return int(self.codes.size)

    def __len__(self) -> int:
        return self.n_sessions

    @property
    def has_messages(self) -> bool:
        """True when texts, confidences and indexes were kept (records can be made)."""
        return self.texts is not None

    def message_columns(self) -> tuple[pa.Array, pa.ChunkedArray, np.ndarray, np.ndarray]:
        """Sources, texts, confidences and message indexes: kept only when the table was read with its messages."""
        if self.sources is None or self.texts is None or self.confidences is None or self.message_index is None:
            raise InputError("the sessions were read without their messages", field="texts",
                             hint="read with keep_messages=True to classify or write them")
        return self.sources, self.texts, self.confidences, self.message_index

    @property
    def labelled(self) -> bool:
        """True when every message carries an intent."""
        return not self.codes.size or int(self.codes.min()) > UNLABELLED

    def offsets(self) -> np.ndarray:
        return np.concatenate(([0], np.cumsum(self.lengths, dtype=np.int64)))

    # ------------------------------------------------------------------ selection
    def take(self, rows: Sequence[int] | np.ndarray) -> "SessionTable":
        """The sessions at ``rows`` (in that order)."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        offsets = self.offsets()
        lengths = self.lengths[rows]
        starts = np.repeat(offsets[:-1][rows], lengths)
        # each kept session's first message in the new table (cumsum - length: also right when none is kept)
        new_starts = np.repeat((np.cumsum(lengths, dtype=np.int64) - lengths).astype(np.int64), lengths)
        msg = starts + (np.arange(int(lengths.sum()), dtype=np.int64) - new_starts)
        keep = _int64s(rows)
        return SessionTable(
            self.session_ids.take(keep), self.repos.take(keep), self.lines[rows], lengths, self.codes[msg],
            None if self.sources is None else self.sources.take(keep),
            None if self.texts is None else self.texts.take(_int64s(msg)),
            None if self.confidences is None else self.confidences[msg],
            None if self.message_index is None else self.message_index[msg])

    def filter_min_messages(self, n: int) -> "SessionTable":
        """Sessions with at least ``n`` raw user messages (as :func:`swe_taskflow.sessions.filter_min_messages`)."""
        if n < 1:
            raise InputError("min_messages must be >= 1", field="min_messages", actual=n)
        keep = self.lengths >= n
        return self if keep.all() else self.take(np.flatnonzero(keep))

    def cap_per_repo(self, cap: int, rng: np.random.Generator) -> "SessionTable":
        """At most ``cap`` sessions per repo: the same draws as :func:`swe_taskflow.sessions.cap_per_repo`."""
        return self.take(cap_indices(self.repos.to_pylist(), cap, rng))

    # ------------------------------------------------------------------ counting
    def check_labelled(self) -> None:
        """Raise, naming the session and message, if a message has no intent (as ``SessionRecord.intent_list``)."""
        if self.labelled:
            return
        at = int(np.flatnonzero(self.codes == UNLABELLED)[0])
        row = int(np.searchsorted(self.offsets(), at, side="right") - 1)
        raise InputError("message has no intent", row=None, field=f"messages[{at - int(self.offsets()[row])}].intent",
                         hint=f"session {self.session_ids[row].as_py()!r}: classify the sessions first")

    def counts(self, *, messages_per_step: int = 1 << 20) -> FlowCounts:
        """The corpus's Task-Flow counts (``flow.counts_from_codes``; every message must be labelled).

        Counted over runs of whole sessions of about ``messages_per_step`` messages and added up: the
        counts are per-session sums of integers (exact in float64), so the result is the one-pass result,
        and the counting core's int64 temporaries stay bounded however large the corpus.
        """
        from .flow import FlowCounts, counts_from_codes

        self.check_labelled()
        offsets = self.offsets()
        cuts = np.unique(np.searchsorted(offsets, np.arange(0, offsets[-1], messages_per_step), side="right") - 1)
        cuts = np.append(cuts, self.n_sessions)
        total = FlowCounts.zeros()
        for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
            total = total + counts_from_codes(self.codes[offsets[a]:offsets[b]], self.lengths[a:b])
        return total if self.n_sessions else counts_from_codes(self.codes, self.lengths)

    def session_counts(self) -> SessionCounts:
        """Per-session counts for the bootstrap (``bootstrap.session_counts_from_codes``)."""
        from .bootstrap import session_counts_from_codes

        self.check_labelled()
        return session_counts_from_codes(self.codes, self.lengths)

    def intent_lists(self) -> list[list[str]]:
        """Each session's intents as labels (every message must be labelled)."""
        self.check_labelled()
        names = np.asarray(INTENTS, dtype=object)[self.codes].tolist()
        offsets = self.offsets().tolist()
        return [names[a:b] for a, b in zip(offsets[:-1], offsets[1:])]

    # ------------------------------------------------------------------ records
    def records(self) -> list[SessionRecord]:
        """The sessions as :class:`SessionRecord` objects (needs a table read with messages)."""
        sources_col, texts_col, confs_col, index_col = self.message_columns()
        ids, repos, sources = self.session_ids.to_pylist(), self.repos.to_pylist(), sources_col.to_pylist()
        texts = texts_col.to_pylist()
        labels = list(INTENTS) + [None]           # code -1 -> None
        intents = [labels[c] for c in self.codes.tolist()]
        confs = [None if c != c else c for c in confs_col.tolist()]
        index = index_col.tolist()
        offsets = self.offsets().tolist()
        return [SessionRecord(ids[i], tuple(texts[a:b]), tuple(intents[a:b]), repos[i], tuple(confs[a:b]), sources[i],
                              tuple(index[a:b]))
                for i, (a, b) in enumerate(zip(offsets[:-1], offsets[1:]))]

    @staticmethod
    def from_records(records: Sequence[SessionRecord], lines: Sequence[int] | None = None) -> "SessionTable":
        """A table holding ``records`` (with their messages)."""
        lengths = np.fromiter((r.n_messages for r in records), dtype=np.int64, count=len(records))
        codes = np.fromiter((UNLABELLED if x is None else INTENT_INDEX[x] for r in records for x in r.intents),
                            dtype=np.int8, count=int(lengths.sum()))
        confs = np.fromiter((np.nan if c is None else c for r in records for c in r.confidences), dtype=np.float64,
                            count=int(lengths.sum()))
        index_list = [i for r in records for i in r.message_index]
        try:
            index = np.array(index_list, dtype=np.int64)
        except OverflowError:                         # JSON integers are unbounded; keep them exact
            index = np.array(index_list, dtype=object)
        return SessionTable(
            _strings([r.session_id for r in records]), _strings([r.repo for r in records]),
            np.zeros(len(records), dtype=np.int64) if lines is None else np.asarray(lines, dtype=np.int64),
            lengths, codes, _strings([r.source for r in records]),
            pa.chunked_array([_strings([t for r in records for t in r.texts])]), confs, index)

    @staticmethod
    def concat(tables: Sequence["SessionTable"]) -> "SessionTable":
        msgs = [t.message_columns() for t in tables] if tables and all(t.has_messages for t in tables) else None
        return SessionTable(
            pa.concat_arrays([t.session_ids for t in tables]) if tables else _strings([]),
            pa.concat_arrays([t.repos for t in tables]) if tables else _strings([]),
            np.concatenate([t.lines for t in tables] or [np.zeros(0, np.int64)]),
            np.concatenate([t.lengths for t in tables] or [np.zeros(0, np.int64)]),
            np.concatenate([t.codes for t in tables] or [np.zeros(0, np.int8)]),
            pa.concat_arrays([m[0] for m in msgs]) if msgs else None,
            pa.chunked_array([c for m in msgs for c in m[1].chunks], pa.string()) if msgs else None,
            np.concatenate([m[2] for m in msgs]) if msgs else None,
            _concat_index([m[3] for m in msgs]) if msgs else None)


def _concat_index(parts: list[np.ndarray]) -> np.ndarray:
    if any(p.dtype == object for p in parts):
        return np.concatenate([p.astype(object) for p in parts])
    return np.concatenate(parts)


# ====================================================================== reading

@dataclass
class _Block:
    """What one block of lines gave: its sessions, and every session id it read (empty ones too) with its line."""

    table: SessionTable
    ids: pa.Array
    id_lines: np.ndarray
    skipped: list[Skipped]


@dataclass(frozen=True)
class _Options:
    path: str
    require_intents: bool
    skip_empty: bool
    keep_messages: bool


def read_session_table(path: str | os.PathLike, *, require_intents: bool = False, skip_empty: bool = False,
                       keep_messages: bool = True, block_bytes: int = BLOCK_BYTES) -> tuple[SessionTable, list[Skipped]]:
    """Read a sessions file (any of the three line formats) into a :class:`SessionTable`.

    Same checks, same sessions, same skipped sessions and same first error as
    ``read_sessions_report(path, engine="lines")``. ``keep_messages=False`` keeps only what counting
    needs (ids, repos, lines, lengths, intent codes), so a file far larger than memory is measured
    in memory proportional to its messages' intents.
    """
    p = check_input_file(path)
    opts = _Options(str(path), require_intents, skip_empty, keep_messages)
    blocks: list[_Block] = []
    seen: dict[str, int] = {}          # built only when a block goes to the line reader
    seen_blocks = 0
    line = 1
    for chunk in _line_blocks(p, block_bytes):
        block = _read_block_arrow(chunk, line, opts)
        if block is None:
            _raise_first_duplicate(blocks, opts.path)   # an earlier duplicate is the first error
            for b in blocks[seen_blocks:]:
                seen.update(zip(b.ids.to_pylist(), b.id_lines.tolist()))
            seen_blocks = len(blocks)
            block = _read_block_lines(chunk, line, opts, seen)
            seen_blocks += 1
        blocks.append(block)
        line += chunk.count(b"\n")
    _raise_first_duplicate(blocks, opts.path)
    table = SessionTable.concat([b.table for b in blocks])
    if not table.n_sessions:
        raise no_session_error(opts.path)
    return table, [s for b in blocks for s in b.skipped]


def _line_blocks(path, block_bytes: int):
    """Whole-line blocks of about ``block_bytes`` (the last one may lack its final newline), read in place."""
    with path.open("rb") as fh:
        while True:
            block = bytearray(block_bytes)
            n = fh.readinto(block)
            if not n:
                return
            del block[n:]
            if not block.endswith(b"\n"):
                block += fh.readline()          # finish the last line
            yield block


def _raise_first_duplicate(blocks: Sequence[_Block], path: str) -> None:
    if not blocks:
        return
    ids = pa.concat_arrays([b.ids for b in blocks])
    if pc.count_distinct(ids).as_py() == len(ids):
        return
    lines = np.concatenate([b.id_lines for b in blocks])
    codes = _numbers(ids.dictionary_encode().indices, np.int32, 0)
    _, first = np.unique(codes, return_index=True)      # dictionary codes count up in order of first appearance
    repeat = np.ones(len(ids), dtype=bool)
    repeat[first] = False
    row = int(np.argmax(repeat))
    raise InputError("duplicate session_id", path=path, row=int(lines[row]), field="session_id",
                     actual=ids[row].as_py(), hint=f"first seen on line {int(lines[first[codes[row]]])}")


def _read_block_lines(chunk: bytes | bytearray, first_line: int, opts: _Options, seen: dict[str, int]) -> _Block:
    """The line-by-line reader over one block: raises its first error, or returns its sessions."""
    records: list[SessionRecord] = []
    record_lines: list[int] = []
    skipped: list[Skipped] = []
    n_seen = len(seen)
    parse_session_lines(enumerate(io.BytesIO(chunk), start=first_line), opts.path,
                        require_intents=opts.require_intents, skip_empty=opts.skip_empty, seen=seen,
                        records=records, record_lines=record_lines, skipped=skipped)
    new = list(islice(seen.items(), n_seen, None))
    table = SessionTable.from_records(records, record_lines)
    if not opts.keep_messages:
        table = _counting_only(table)
    return _Block(table, _strings([k for k, _ in new]),
                  np.array([v for _, v in new], dtype=np.int64), skipped)


def _json_lines(chunk: bytes | bytearray, first_line: int) -> tuple[np.ndarray, int] | None:
    """Line numbers of the block's JSON lines and its longest line's length when Arrow may read it.

    None sends the block to the line reader."""
    if not chunk.isascii():
        try:
            chunk.decode("utf-8")
        except UnicodeDecodeError:
            return None
    a = np.frombuffer(chunk, dtype=np.uint8)
    ends = np.flatnonzero(a == 10)
    starts = np.concatenate(([0], ends + 1))
    if starts[-1] >= a.size:
        starts = starts[:-1]
    is_json = a[starts] == ord("{")
    for k in np.flatnonzero(~is_json):   # blank lines are skipped as the line reader skips them; others go there
        end = int(ends[k]) if k < ends.size else a.size
        if chunk[int(starts[k]):end].strip(b" \t\r"):
            return None
    sizes = np.diff(np.append(starts, a.size))
    # Arrow parses any depth, Python's parser stops near 1000 levels. A line Arrow accepts is valid JSON, so
    # its depth is at most half its length: only long lines with many brackets are parsed by Python too.
    for k in np.flatnonzero(sizes > 2 * MAX_OPEN_BRACKETS):
        line = chunk[int(starts[k]):int(starts[k] + sizes[k])]
        if line.count(b"{") + line.count(b"[") > MAX_OPEN_BRACKETS:
            try:
                json.loads(line)
            except (ValueError, RecursionError):
                return None
    longest = int(sizes.max())
    return first_line + np.flatnonzero(is_json).astype(np.int64), longest


def _read_block_arrow(chunk: bytes | bytearray, first_line: int, opts: _Options) -> _Block | None:
    """One block through Arrow and vectorized checks; None when anything needs the line reader."""
    screened = _json_lines(chunk, first_line)
    if screened is None:
        return None
    row_lines, longest = screened
    if not row_lines.size:
        empty = SessionTable.from_records([], [])
        return _Block(empty if opts.keep_messages else _counting_only(empty), _strings([]),
                      np.zeros(0, np.int64), [])
    try:
        tbl = pj.read_json(pa.BufferReader(chunk), parse_options=_PARSE, memory_pool=_POOL,
                           read_options=pj.ReadOptions(block_size=max(1 << 20, longest + 2)))
    except pa.ArrowException:
        return None
    if tbl.num_rows != row_lines.size:
        return None
    return _check_block(tbl, chunk, row_lines, opts)


def _counting_only(t: SessionTable) -> SessionTable:
    return SessionTable(t.session_ids, t.repos, t.lines, t.lengths, t.codes)


def _session_ids(cols: dict[str, pa.Array]) -> pa.Array | None:
    """``session_id``, else ``instance_id::condition`` (or ``instance_id``), as the line reader builds it."""
    sid = cols["session_id"]
    if sid.null_count:
        inst, cond = cols["instance_id"], cols["condition"]
        has_cond = pc.coalesce(pc.not_equal(cond, _EMPTY), pc.is_valid(cond))   # null condition -> False
        sid = pc.coalesce(sid, pc.if_else(has_cond, pc.binary_join_element_wise(inst, cond, _SEPARATOR), inst))
        if sid.null_count:
            return None
    if not pc.all(pc.match_substring_regex(sid, _NOT_BLANK)).as_py():
        return None
    return sid


def _check_block(tbl: pa.Table, chunk: bytes | bytearray, row_lines: np.ndarray, opts: _Options) -> _Block | None:
    n = tbl.num_rows
    cols = {name: tbl.column(name).combine_chunks() for name in _SCHEMA.names}
    nulls = b"null" in chunk                               # without a null token, missing == null exactly
    escapes = nulls and b"\\u" in chunk
    if nulls and any(_key_count(chunk, k, escapes) != n - cols[k].null_count for k in MESSAGE_KEYS):
        return None                                        # a message key written as null, or a nested one
    lists = [cols[k] for k in MESSAGE_KEYS]
    lst = lists[0] if all(x.null_count == n for x in lists[1:]) else pc.coalesce(*lists)
    if lst.null_count:
        return None                                        # no messages list
    sid = _session_ids(cols)
    if sid is None:
        return None
    lengths = _numbers(pc.list_value_length(lst), np.int32, 0).astype(np.int64)
    empty = lengths == 0
    if empty.any() and not opts.skip_empty:
        return None
    flat = lst.flatten()
    if flat.null_count:
        return None                                        # a message that is not an object
    text, intent, conf, index, turn_index = (pc.struct_field(flat, [i]) for i in range(5))
    if text.null_count:
        return None
    codes = pc.index_in(intent, value_set=_INTENTS)
    if codes.null_count != intent.null_count or (opts.require_intents and intent.null_count):
        return None                                        # an unknown label, or a missing one where required
    conf_values = _numbers(conf, np.float64, np.nan)     # null -> NaN
    known = _valid(conf)
    if not np.all(np.isfinite(conf_values[known]) & (conf_values[known] >= 0.0) & (conf_values[known] <= 1.0)):
        return None
    if nulls and (_key_count(chunk, "index", escapes) != len(index) - index.null_count
                  or _key_count(chunk, "turn_index", escapes) != len(turn_index) - turn_index.null_count):
        return None                                        # an index written as null (an error there)
    idx = pc.coalesce(index, turn_index)
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    position = np.arange(len(flat), dtype=np.int64) - np.repeat(offsets[:-1], lengths)
    message_index = np.where(_valid(idx), _numbers(idx, np.int64, 0), position)
    skipped = [Skipped(int(row_lines[r]), sid[int(r)].as_py(), "empty session (no user message)")
               for r in np.flatnonzero(empty)]
    keep = np.flatnonzero(~empty)
    rows = _int64s(keep)
    table = SessionTable(
        sid.take(rows), pc.coalesce(cols["repo"], _EMPTY).take(rows), row_lines[keep], lengths[keep],
        _numbers(codes, np.int32, UNLABELLED).astype(np.int8))
    if opts.keep_messages:
        table = SessionTable(table.session_ids, table.repos, table.lines, table.lengths, table.codes,
                             pc.coalesce(cols["source"], _EMPTY).take(rows), pa.chunked_array([text]),
                             conf_values.astype(np.float64), message_index.astype(np.int64))
    return _Block(table, sid, row_lines, skipped)


#: Readers of :func:`read_sessions_report`: ``arrow`` (vectorized, the default) and ``lines`` (the reference).
ENGINES = ("arrow", "lines")


def read_sessions_report(path: str | os.PathLike, *, require_intents: bool = False, skip_empty: bool = False,
                         engine: str = "arrow") -> tuple[list[SessionRecord], list[Skipped]]:
    """Read a sessions file; returns the records and the sessions skipped (only empty ones, on request).

    Raises :class:`InputError` naming file, line and field for a non-JSON line, a missing session
    id, a duplicate session id, an empty session (unless ``skip_empty``), a message without text,
    an unknown intent label, and (with ``require_intents``) a message without intent.

    ``engine="arrow"`` reads through :func:`swe_taskflow.session_table.read_session_table` (Arrow's
    JSON reader, vectorized checks); ``engine="lines"`` is the reference line-by-line reader. Both give
    the same records, the same skipped sessions and the same first error.
    """
    if engine == "arrow":
        table, skipped = read_session_table(path, require_intents=require_intents, skip_empty=skip_empty)
        return table.records(), skipped
    if engine != "lines":
        raise InputError("unknown sessions reader", field="engine", expected=" or ".join(ENGINES), actual=engine)
    path_s = str(path)
    records: list[SessionRecord] = []
    skipped = []
    parse_session_lines(iter_lines(path), path_s, require_intents=require_intents, skip_empty=skip_empty,
                        seen={}, records=records, record_lines=[], skipped=skipped)
    if not records:
        raise no_session_error(path_s)
    return records, skipped


def read_sessions(path: str | os.PathLike, *, require_intents: bool = False, engine: str = "arrow") -> list[SessionRecord]:
    """Read every session of a file (any of the three formats); any bad line is an error."""
    return read_sessions_report(path, require_intents=require_intents, engine=engine)[0]



__all__ = ["SessionTable", "read_session_table", "read_sessions_report", "read_sessions", "ENGINES", "BLOCK_BYTES", "MAX_OPEN_BRACKETS", "UNLABELLED", "PY_WHITESPACE"]
