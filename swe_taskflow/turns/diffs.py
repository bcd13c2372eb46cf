"""Unified diffs as data: files, hunks, changed lines and the code locations a patch touches.

Pure and language-agnostic: a *location* is a file plus the enclosing symbol of the changed lines,
found from definitions seen in the patch itself (changed and context lines, hunk headers). For
Python sources, :func:`python_symbol_at` gives the exact enclosing qualified name from the file's
text when the caller has it (the builder passes the repository's files).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Mapping, Sequence

from ..errors import InputError

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")
_DIFF_GIT = re.compile(r"^diff --git a/(.+?) b/(.+)$")
#: Definitions in common languages: (regex, group holding the name). Order matters: first match wins.
_DEFS = (
    re.compile(r"^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)"),                                   # python
    re.compile(r"^\s*class\s+([A-Za-z_]\w*)"),                                              # python, js, java...
    re.compile(r"^\s*func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)"),                              # go
    re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?fn\s+([A-Za-z_]\w*)"),           # rust
    re.compile(r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)"),  # js
    re.compile(r"^\s*([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+)\s*=\s*(?:async\s+)?(?:function\b|\()"),  # js: a.b = function
    re.compile(r"^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*=>)"),
)
_NOT_NAMES = {"module.exports", "exports", "if", "for", "while", "switch", "catch", "return"}
_TEST_PATH = re.compile(r"(^|/)(tests?|__tests__|spec|testing)(/|$)|(^|/)test_[^/]*$|_test\.[a-z]+$|"
                        r"\.(test|spec)\.[a-z]+$|(^|/)conftest\.py$", re.I)


@dataclass(frozen=True)
class Line:
    """One line of a hunk: ``op`` is ' ', '+' or '-'; line numbers on each side (0 where absent)."""

    op: str
    text: str
    old_no: int
    new_no: int
    index: int          # position of the line in the patch text (0-based), for edits


@dataclass(frozen=True)
class Hunk:
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    header: str
    lines: tuple[Line, ...]

    def changed(self) -> tuple[Line, ...]:
        return tuple(ln for ln in self.lines if ln.op in "+-")


@dataclass(frozen=True)
class FilePatch:
    old_path: str | None
    new_path: str | None
    hunks: tuple[Hunk, ...]

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or ""

    @property
    def is_test(self) -> bool:
        return is_test_path(self.path)


@dataclass(frozen=True)
class Location:
    """A code location: a file, the enclosing symbol ("" at module level) and a line range.

    Lines count on the base (old) side for code the patch changes or deletes, and on the new side
    for files the patch creates (``new_file``)."""

    path: str
    symbol: str
    line_start: int
    line_end: int

    def to_dict(self) -> dict:
        return {"path": self.path, "symbol": self.symbol, "line_start": self.line_start, "line_end": self.line_end}

    @classmethod
    def from_dict(cls, d: Mapping) -> "Location":
        return cls(str(d.get("path") or ""), str(d.get("symbol") or ""), int(d.get("line_start") or 0),
                   int(d.get("line_end") or 0))


def is_test_path(path: str) -> bool:
    return bool(_TEST_PATH.search(path))


def _strip_prefix(p: str) -> str | None:
    p = p.split("\t")[0].strip()
    if p == "/dev/null":
        return None
    return p[2:] if p[:2] in ("a/", "b/") else p


def parse_patch(text: str, *, where: str = "patch") -> list[FilePatch]:
    """Parse a unified (git) diff; a hunk whose line counts do not add up is an InputError.

    Lines end at "\\n" only, as in git: ``str.splitlines`` would also break at form feeds and other
    separators that a changed line may hold (and ``Line.index`` must count the lines ``mutate`` counts)."""
    lines = text.removesuffix("\n").split("\n") if text else []
    files: list[FilePatch] = []
    i, n = 0, len(lines)
    old = new = None
    pending: list[Hunk] = []
    started = False

    def flush():
        nonlocal pending, started
        if started:
            files.append(FilePatch(old, new, tuple(pending)))
        pending, started = [], False

    while i < n:
        line = lines[i]
        m = _DIFF_GIT.match(line)
        if m:
            flush()
            old, new, started = m.group(1), m.group(2), True
            i += 1
            continue
        if line.startswith("--- ") and i + 1 < n and lines[i + 1].startswith("+++ "):
            if not started or pending:
                flush()
                started = True
            old, new = _strip_prefix(line[4:]), _strip_prefix(lines[i + 1][4:])
            i += 2
            continue
        if line.startswith("new file mode") and started:
            old = None
        if line.startswith("deleted file mode") and started:
            new = None
        h = _HUNK.match(line)
        if h and started:
            hunk, i = _read_hunk(lines, i, h, where)
            pending.append(hunk)
            continue
        i += 1
    flush()
    return [f for f in files if f.hunks or f.old_path != f.new_path]


def _read_hunk(lines: list[str], i: int, h: re.Match, where: str) -> tuple[Hunk, int]:
    """The hunk whose header ``h`` is line ``i``, and the index of the line after it (and its ``\\`` notes)."""
    n = len(lines)
    o0, ol = int(h.group(1)), int(h.group(2) or 1)
    n0, nl = int(h.group(3)), int(h.group(4) or 1)
    body: list[Line] = []
    o, nn = o0, n0
    seen_o = seen_n = 0
    j = i + 1
    while j < n and (seen_o < ol or seen_n < nl):
        t = lines[j]
        op = t[:1] if t else " "
        if op == "\\":
            j += 1
            continue
        if op not in " +-":
            raise InputError("hunk ends early", path=where, row=j + 1, field="patch",
                             expected=f"-{ol} +{nl} lines", actual=f"-{seen_o} +{seen_n}")
        body.append(Line(op, t[1:], o if op != "+" else 0, nn if op != "-" else 0, j))
        if op != "+":
            o += 1
            seen_o += 1
        if op != "-":
            nn += 1
            seen_n += 1
        j += 1
    if seen_o != ol or seen_n != nl:
        raise InputError("hunk line counts do not match its header", path=where, row=i + 1,
                         field="patch", expected=f"-{ol} +{nl}", actual=f"-{seen_o} +{seen_n}")
    while j < n and lines[j].startswith("\\"):
        j += 1
    return Hunk(o0, ol, n0, nl, h.group(5).strip(), tuple(body)), j


def definition_name(line: str) -> str:
    """The name a line defines (``def f``, ``class C``, ``func F``, ``a.b = function``), or ""."""
    for rx in _DEFS:
        m = rx.match(line)
        if m and m.group(1) not in _NOT_NAMES:
            return m.group(1)
    return ""


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" \t"))


def python_symbol_at(source: str, line: int) -> str:
    """The qualified name (``Class.method``) of the innermost def/class holding ``line`` in Python source,
    "" at module level or when the source does not parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ""
    best: tuple[int, str] = (-1, "")

    def walk(node, prefix: str, depth: int):
        nonlocal best
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                q = f"{prefix}.{child.name}" if prefix else child.name
                start = min([child.lineno] + [d.lineno for d in child.decorator_list])
                if start <= line <= (child.end_lineno or child.lineno) and depth > best[0]:
                    best = (depth, q)
                walk(child, q, depth + 1)
            else:
                walk(child, prefix, depth)

    walk(tree, "", 0)
    return best[1]


def _symbols_in_file(fp: FilePatch) -> list[tuple[Line, str, bool]]:
    """(changed line, enclosing symbol, whether the patch alone knows it) for each changed line, from
    definitions seen above it in the patch.

    Python: nesting by indentation (``Class.method``); known once a line of the hunk at column 0
    has fixed the nesting. Other languages: the last definition seen."""
    out = []
    py = fp.path.endswith(".py")
    stack: list[tuple[int, str]] = []   # python: (indent, name) of open definitions
    current = ""
    known = False
    for h in fp.hunks:
        name = definition_name(h.header)
        if name:
            stack, current = [(_indent(h.header), name)], name
            known = False       # the header names the outer definition, not what lies between
        for ln in h.lines:
            d = definition_name(ln.text)
            if py:
                if ln.text.strip():
                    ind = _indent(ln.text)
                    known = known or ind == 0
                    while stack and stack[-1][0] >= ind:
                        stack.pop()
                    if d:
                        stack.append((ind, d))
                sym = ".".join(s for _, s in stack)
            else:
                current = d or current
                sym = current
            if ln.op in "+-":
                out.append((ln, sym, known))
    return out


def symbol_of_line(patch: str, index: int) -> str:
    """The enclosing symbol of the patch line at text position ``index`` ("" when none is known)."""
    for fp in parse_patch(patch):
        for ln, sym, _ in _symbols_in_file(fp):
            if ln.index == index:
                return sym
    return ""


def touched(patch: str | Sequence[FilePatch], *, include_tests: bool = False,
            sources: Mapping[str, str] | None = None) -> list[tuple[Location, tuple[str, ...]]]:
    """The locations a patch changes, each with the texts of its changed lines (see touched_locations)."""
    files = parse_patch(patch) if isinstance(patch, str) else list(patch)
    out: dict[tuple[str, str], tuple[list[int], list[str]]] = {}
    for fp in files:
        if fp.is_test and not include_tests:
            continue
        src = (sources or {}).get(fp.old_path or "") if fp.old_path else None
        new_defs = {definition_name(x.text) for h in fp.hunks for x in h.lines if x.op == "+"} - {""}
        for ln, sym, known in _symbols_in_file(fp):
            if not ln.text.strip() or ln.text.lstrip().startswith("@"):
                continue          # blank lines and decorators carry no location of their own
            line = ln.old_no if ln.op == "-" else (ln.new_no if fp.old_path is None else _anchor(fp, ln))
            if src is not None and fp.path.endswith(".py"):
                # added code at module level or inside a definition the patch adds keeps the patch's
                # own nesting; everything else takes the base file's exact enclosing definition
                own = ln.op == "+" and (known or (bool(sym) and sym.rsplit(".", 1)[-1] in new_defs))
                sym = sym if own else python_symbol_at(src, line)
            lines, texts = out.setdefault((fp.path, sym), ([], []))
            lines.append(line)
            texts.append(ln.text)
    return [(Location(p, s, min(v[0]), max(v[0])), tuple(v[1])) for (p, s), v in out.items()]


def touched_locations(patch: str | Sequence[FilePatch], *, include_tests: bool = False,
                      sources: Mapping[str, str] | None = None) -> list[Location]:
    """The locations a patch changes: one per (file, enclosing symbol), lines merged into a range.

    ``sources`` maps a path to its base text; for Python files it gives exact enclosing symbols of
    changed and deleted lines (added lines take the symbol of the base line they follow)."""
    return [loc for loc, _ in touched(patch, include_tests=include_tests, sources=sources)]


def _anchor(fp: FilePatch, ln: Line) -> int:
    """Base-side line an added line sits at: the last base line before it in its hunk (or the hunk start)."""
    for h in fp.hunks:
        if h.lines and h.lines[0].index <= ln.index <= h.lines[-1].index:
            last = h.old_start
            for x in h.lines:
                if x.index == ln.index:
                    return max(last, 1)
                if x.op != "+":
                    last = x.old_no
    return 0


def identifiers(text: str) -> set[str]:
    """Code-like identifiers of a text: words with ``_`` or camelCase or dots, and backticked spans."""
    out = set()
    for m in re.finditer(r"`([^`\n]{1,80})`", text):
        out.update(re.findall(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*", m.group(1)))
    for tok in re.findall(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*", text):
        if "_" in tok or "." in tok or re.search(r"[a-z][A-Z]", tok):
            out.add(tok)
    return out


__all__ = ["Line", "Hunk", "FilePatch", "Location", "parse_patch", "definition_name", "python_symbol_at",
           "symbol_of_line", "touched", "touched_locations", "identifiers", "is_test_path"]
