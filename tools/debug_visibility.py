"""How many FAIL_TO_PASS tests sit in a file the hidden test patch adds or changes, so the agent's checkout lacks
the test as it fails, and how many tasks keep one the agent can see fail: only those get debug turns
(issue 36; ``swe_taskflow.turns.visible``, ``builder.turns.propose``).

    python -m tools.debug_visibility TASKS.jsonl [...]     # SWE-bench-style rows: fail_to_pass, test_patch

Rows without a test patch (SWE-Bench Pro's public file, whose tests come from run scripts) are counted apart.
"""

from __future__ import annotations

import ast
import json
import sys

from swe_taskflow.turns.visible import hidden_test_file


def _tests(row: dict) -> list[str]:
    raw = row.get("fail_to_pass") or row.get("FAIL_TO_PASS") or []
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raw = ast.literal_eval(raw)
    return [str(t) for t in raw]


def count(path: str) -> tuple[int, int, int, int, int]:
    """(hidden tests, tests, tasks, tasks without a test patch, tasks with a visible test) of one JSONL file."""
    hidden = tests = tasks = no_patch = debuggable = 0
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            row = json.loads(line)
            tasks += 1
            patch = row.get("test_patch") or ""
            if not patch:
                no_patch += 1
                continue
            seen = [hidden_test_file(t, patch) is None for t in _tests(row)]
            tests += len(seen)
            hidden += seen.count(False)
            debuggable += any(seen)
    return hidden, tests, tasks, no_patch, debuggable


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for path in argv:
        try:
            h, n, tasks, no_patch, debuggable = count(path)
        except (OSError, ValueError) as exc:
            print(f"debug_visibility: {path}: {exc}", file=sys.stderr)
            return 2
        print(f"{path}: {h:,} of {n:,} FAIL_TO_PASS tests sit in a file the hidden test patch adds or changes "
              f"({tasks:,} tasks, {no_patch:,} without a test patch); {debuggable:,} tasks have one the agent can "
              f"see fail")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
