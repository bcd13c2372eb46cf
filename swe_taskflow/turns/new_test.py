"""The ``tests`` answer turn: before the work starts, the user asks for a test that fails now and passes once
the requested change is made (the paper's open ``tests`` intent; docs/augmentations.md).

The agent writes the test; its step verifier (``builder/evaluation/data/new_test.py``) runs it in the task's
container on the repository as the agent left it, then with the gold patch applied, and puts the repository
back. Correct: every file the turn changed is a test file (:data:`TEST_PATH_RE`: the user asked for a test,
not the change), the gold patch applies, some test of those files does not pass before it and all of them pass
after it. The reference is one hidden test file of the task that does just that (its FAIL_TO_PASS tests fail
on the untouched repository with the file added, and pass with the gold patch), proved at creation in the
sandbox.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from .outcomes import outcome_of, parse_outcomes, same_test
from .reference import fact_value
from .score import AnswerScore
from .visible import hidden_test_file

TESTS = "tests"
#: The paths a test file may have: a ``test``/``tests``/``__tests__``/``spec`` folder or a test file name of
#: Python, Go or JavaScript/TypeScript. Anything else the turn changed is code, not a test.
TEST_PATH_RE = (r"(^|/)(tests?|__tests__|spec)/|(^|/)test_[^/]*\.py$|_test\.(py|go)$|"
                r"\.(test|spec)\.[cm]?[jt]sx?$")
#: What the verifier's ``verdict.json`` states; the scorer reads the four verdict booleans.
VERDICT_BOOLS = ("only_tests", "gold_applies", "fails_before", "passes_after", "correct")
VERDICT_LISTS = ("files", "tests", "failing_before", "other_files")


def step_config(item: Mapping[str, Any], **_: Any) -> dict[str, Any]:
    """The verifier's own config keys: which changed paths count as test files."""
    return {"test_path_re": TEST_PATH_RE}


def reference_tests(item: Mapping[str, Any]) -> list[str]:
    """The hidden tests the reference shows failing before and passing after (the item's ``failing_test`` facts)."""
    return [str(f["value"]) for f in item.get("facts") or () if f.get("name") == "failing_test"]


def score_tests(item: Mapping[str, Any], answer: str, *, verdict: Mapping[str, Any] | None = None,
                **_: Any) -> AnswerScore:
    """Correct when the verifier ran the turn's tests and found them failing before and passing after the change,
    with nothing but test files changed; without a verdict (the tests never ran) it is not."""
    if verdict is None:
        return AnswerScore(TESTS, 0.0, False, {"state_checked": False,
                                               "why": "no verifier verdict: the turn's tests were not run"})
    parts = {k: bool(verdict.get(k)) for k in ("only_tests", "gold_applies", "fails_before", "passes_after")}
    ok = all(parts.values())
    why = ("fails before the change and passes after it" if ok else
           "the turn changed code outside test files" if not parts["only_tests"] else
           "the gold patch does not apply over the turn's changes" if not parts["gold_applies"] else
           "no test of the turn fails before the change" if not parts["fails_before"] else
           "the turn's tests do not all pass after the change")
    return AnswerScore(TESTS, 1.0 if ok else 0.0, ok, {**parts, "state_checked": True, "why": why,
                                                       "files": list(verdict.get("files") or ())[:50]})


def recheck_tests(q: Mapping[str, Any], turn_text: str, *, result: Any = None, task: Any = None,
                  repo: Path | None = None) -> list[tuple[str, str]]:
    """``verify --reprove``: the re-run (the hidden test file added to the untouched repository) still fails each
    reference test; the source task, when given, still lists each as FAIL_TO_PASS in a file its hidden test
    patch adds or changes."""
    out: list[tuple[str, str]] = []
    tests = reference_tests(q)
    if not tests:
        out.append(("the item names no reference test", "facts"))
    if result is not None:
        seen = parse_outcomes(getattr(result, "stdout_excerpt", "") or "")
        passing = [t for t in tests if outcome_of(seen, t) == "passed"]
        if passing:
            out.append((f"the re-run passes reference tests that must fail before the change: {passing[:5]}", "facts"))
    if task is not None:
        f2p = tuple(getattr(task, "fail_to_pass", ()) or ())
        patch = getattr(task, "test_patch", "") or ""
        for t in tests:
            if not any(same_test(t, x) for x in f2p):
                out.append((f"{t!r} is not a FAIL_TO_PASS test of the source task", "facts"))
            elif hidden_test_file(t, patch) is None:
                out.append((f"{t!r} is not in a file the hidden test patch adds or changes", "facts"))
    if fact_value(q, "test_file") and task is not None:
        if fact_value(q, "test_file") not in {hidden_test_file(t, getattr(task, "test_patch", "") or "") for t in tests}:
            out.append(("the reference test file is not the hidden file of its tests", "facts"))
    return out


__all__ = ["TESTS", "TEST_PATH_RE", "VERDICT_BOOLS", "VERDICT_LISTS", "step_config", "reference_tests",
           "score_tests", "recheck_tests"]
