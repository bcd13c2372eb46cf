"""Per-test results from a test command's output, and the FAIL_TO_PASS / PASS_TO_PASS verdict.

Standard library only and free of project imports, so a verifier can run this very file inside a
task's image (``python3 testlog.py F2P.json P2P.json < output``). It reads ``unittest -v`` output
(``test_x (pkg.mod.Class.test_x) ... ok``; Python <= 3.10 omits the method from the parentheses, and a
test with a docstring puts its first line between the name and `` ... ``) and names each test like
SWE-Bench Pro does for Python: ``pkg/mod.py::Class::test_x``.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Iterable, Mapping

PASSED, FAILED, ERROR, SKIPPED = "passed", "failed", "error", "skipped"
_STATUS = {"ok": PASSED, "FAIL": FAILED, "ERROR": ERROR, "skipped": SKIPPED, "expected failure": PASSED,
           "unexpected success": FAILED}
_HEAD = re.compile(r"^(?P<method>\w+) \((?P<where>[\w.]+)\)")
_TAIL = re.compile(r" \.\.\. (?P<status>ok|FAIL|ERROR|skipped|expected failure|unexpected success)\b")


def test_id(method: str, where: str) -> str:
    """``tests.test_store.PagingTests.test_x`` (or ``tests.test_store.PagingTests``) -> ``tests/test_store.py::PagingTests::test_x``."""
    parts = where.split(".")
    if parts[-1] == method:
        parts = parts[:-1]
    module, cls = parts[:-1], parts[-1]
    return f"{'/'.join(module)}.py::{cls}::{method}"


def parse_unittest(text: str) -> dict[str, str]:
    """Test id -> passed | failed | error | skipped, for every result line of ``unittest -v`` output."""
    results: dict[str, str] = {}
    pending: tuple[str, str] | None = None
    for line in text.splitlines():
        head = _HEAD.match(line)
        if head:
            pending = (head.group("method"), head.group("where"))
            line = line[head.end():]
        tail = _TAIL.search(line)
        if tail and pending is not None:
            if not pending[1].startswith("unittest.loader."):   # a module that failed to import: no test id
                results[test_id(*pending)] = _STATUS[tail.group("status")]
            pending = None
    return results


def grade(results: Mapping[str, str], fail_to_pass: Iterable[str], pass_to_pass: Iterable[str]) -> dict:
    """SWE-bench's rule: resolved when every FAIL_TO_PASS and every PASS_TO_PASS test passed.

    A named test missing from the output counts as not passed (``missing``)."""
    def split(names: Iterable[str]) -> dict:
        names = list(names)
        return {"passed": [n for n in names if results.get(n) == PASSED],
                "not_passed": {n: results.get(n, "missing") for n in names if results.get(n) != PASSED}}
    f2p, p2p = split(fail_to_pass), split(pass_to_pass)
    return {"resolved": not f2p["not_passed"] and not p2p["not_passed"], "fail_to_pass": f2p, "pass_to_pass": p2p,
            "tests_seen": len(results)}


def main(argv: list[str]) -> int:
    """``python3 testlog.py [F2P.json P2P.json] < output``: print the results (and the grade) as JSON."""
    results = parse_unittest(sys.stdin.read())
    if len(argv) == 2:
        lists = [json.loads(open(p, encoding="utf-8").read()) for p in argv]
        out = grade(results, *lists)
        print(json.dumps({"results": results, **out}, sort_keys=True))
        return 0 if out["resolved"] else 1
    print(json.dumps({"results": results}, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
