"""Test-runner output as per-test outcomes (pytest, unittest, go test), and failure messages.

unittest output is read by :func:`swe_taskflow.testlog.parse_unittest` (the project's one reader of
it, which also grades FAIL_TO_PASS / PASS_TO_PASS); this module adds pytest and go test lines and the
failing assertion of a test.

The sandbox scripts of execute, debug and review print their runner's output through the filter
:data:`KEEP_ERE` (an extended regular expression ``grep -E`` understands), with durations removed
by :data:`DURATION_SED`, so that two runs of a deterministic suite print the same bytes and the
printed text stays small. :func:`parse_outcomes` reads either the raw or the filtered output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from ..testlog import parse_unittest, test_id

OUTCOMES = ("passed", "failed", "error", "skipped")

#: Lines a sandbox script keeps from a runner's output (grep -E syntax; also valid Python ``re``).
KEEP_ERE = (r"^[A-Za-z_][A-Za-z0-9_]* \(.*\)( \.\.\. |$)|^.* \.\.\. (ok|FAIL|ERROR|skipped.*|expected failure)$"
            r"|^(FAIL|ERROR): |^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) |^[^ ]+::[^ ]+ (PASSED|FAILED|ERROR|SKIPPED)"
            r"|^E +[^ ]|^[A-Za-z_.]*(Error|Exception)(: |$)|^--- (PASS|FAIL|SKIP): |^(OK|FAILED)( \(.*\))?$"
            r"|^Ran [0-9]+ tests?|^[= ]*[0-9]+ (passed|failed|errors?|skipped|deselected)|^swe-taskflow: ")
#: sed -E expression that removes durations ("in 0.12s", "(0.00s)") so runs compare byte for byte.
DURATION_SED = r"s/ in [0-9]+([.][0-9]+)?s//; s/ ?[(][0-9]+([.][0-9]+)?s[)]//"
_KEEP = re.compile(KEEP_ERE)
_DUR = (re.compile(r" in [0-9]+(?:\.[0-9]+)?s"), re.compile(r" ?\([0-9]+(?:\.[0-9]+)?s\)"))

_PYTEST_RA = re.compile(r"^(?P<out>PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (?P<id>[^ \n]+::[^ \n]+)(?: - (?P<msg>.*))?$", re.M)
_PYTEST_V = re.compile(r"^(?P<id>[^ \n]+::[^ \n]+) (?P<out>PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b", re.M)
_GO = re.compile(r"^\s*--- (?P<out>PASS|FAIL|SKIP): (?P<id>\S+)", re.M)
_MAP = {"PASSED": "passed", "PASS": "passed", "XFAIL": "passed", "FAILED": "failed", "XPASS": "failed",
        "ERROR": "error", "SKIPPED": "skipped", "SKIP": "skipped"}


def keep_lines(text: str) -> str:
    """What the sandbox filter prints for ``text`` (the Python twin of ``grep -E KEEP_ERE | sed``)."""
    out = []
    for line in text.splitlines():
        if _KEEP.search(line):
            for rx in _DUR:
                line = rx.sub("", line)
            out.append(line)
    return "\n".join(out) + ("\n" if out else "")


def parse_outcomes(text: str) -> dict[str, str]:
    """Test id -> outcome (passed | failed | error | skipped), in order of appearance.

    unittest results first (swe_taskflow.testlog, pytest-style ids), then pytest ids as printed and go
    test names; a test seen twice keeps its last outcome (pytest prints -v and -rA lines)."""
    found = [(m.start(), m.group("id"), _MAP[m.group("out")])
             for rx in (_PYTEST_V, _PYTEST_RA, _GO) for m in rx.finditer(text)]
    out: dict[str, str] = dict(parse_unittest(text))
    for _, tid, res in sorted(found, key=lambda x: x[0]):
        out.pop(tid, None)
        out[tid] = res
    return out


@dataclass(frozen=True)
class Counts:
    passed: int
    failed: int
    error: int
    skipped: int

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.error + self.skipped


def counts(outcomes: Mapping[str, str]) -> Counts:
    vals = list(outcomes.values())
    return Counts(*(vals.count(k) for k in OUTCOMES))


def _norm_id(tid: str) -> tuple[str, ...]:
    """A test id as (module-ish parts..., name) so pytest and unittest spellings compare equal."""
    tid = tid.strip()
    m = re.match(r"^([A-Za-z_]\w*) \(([\w.]+)\)$", tid)
    if m:
        tid = test_id(m.group(1), m.group(2))
    tid = re.sub(r"\[.*\]$", lambda x: x.group(0), tid)
    path, _, rest = tid.partition("::")
    if not rest:
        return tuple(re.split(r"[./]", tid))
    mod = re.sub(r"\.py$", "", path).replace("/", ".").split(".")
    return tuple(mod + rest.split("::"))


def same_test(a: str, b: str) -> bool:
    """Whether two spellings name the same test (pytest id, unittest line, dotted name)."""
    x, y = _norm_id(a), _norm_id(b)
    if x == y:
        return True
    short, long_ = (x, y) if len(x) < len(y) else (y, x)
    return len(short) >= 2 and long_[-len(short):] == short


def outcome_of(outcomes: Mapping[str, str], test: str) -> str | None:
    """The outcome of ``test`` in ``outcomes`` (any spelling), or None when it did not run."""
    if test in outcomes:
        return outcomes[test]
    for tid, res in outcomes.items():
        if same_test(tid, test):
            return res
    return None


def failure_message(text: str, test: str) -> str:
    """The failing assertion of ``test`` in runner output: its exception line(s), without the traceback.

    unittest: the last ``...Error: ...`` line of the test's FAIL/ERROR block; pytest: the ``E`` lines
    (or the ``-rA`` message); "" when none is found."""
    lines = text.splitlines()
    name = _norm_id(test)[-1]
    for i, line in enumerate(lines):        # unittest: "FAIL: name (where)" block
        m = re.match(r"^(FAIL|ERROR): ([A-Za-z_]\w*) \(([\w.]+)\)", line)
        if m and same_test(test_id(m.group(2), m.group(3)), test):
            block = []
            for nxt in lines[i + 1:]:
                if re.match(r"^(FAIL|ERROR): |^Ran \d+ test|^={20,}$", nxt):
                    break
                block.append(nxt)
            errs = [b for b in block if re.match(r"^[A-Za-z_.]*(Error|Exception)(: |$)", b)]
            if errs:
                return errs[-1].strip()
    for m in _PYTEST_RA.finditer(text):
        if m.group("msg") and same_test(m.group("id"), test):
            return m.group("msg").strip()
    elines = [ln[1:].strip() for ln in lines if re.match(r"^E +\S", ln)]
    if elines and name in text:
        return " / ".join(elines[:3])
    return ""


__all__ = ["OUTCOMES", "KEEP_ERE", "DURATION_SED", "keep_lines", "parse_outcomes", "Counts",
           "counts", "same_test", "outcome_of", "failure_message"]
