"""References of sandbox-checked augmentation turns, derived from what their proof script printed.

The creation-time check (builder/turns) and ``verify --reprove`` both call these functions on a
proof run's stdout, so a re-run in a fresh sandbox that prints the same output reproduces the same
reference: :func:`reproduce` says which stored facts a re-run's output no longer gives.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

from .outcomes import counts, failure_message, outcome_of, parse_outcomes

#: Prefix of the lines the sandbox scripts add themselves (``swe-taskflow: exit status 1``).
MARK = "swe-taskflow: "
EXECUTE_STYLES = ("counts", "failing", "output")
MAX_OUTPUT_FACTS = 5


def exit_status(output: str) -> int | None:
    m = re.search(rf"^{re.escape(MARK)}exit status (\d+)$", output, re.M)
    return int(m.group(1)) if m else None


def _fact(name: str, value: Any) -> dict[str, str]:
    return {"name": name, "value": str(value)}


def fact_value(item: Mapping[str, Any], name: str) -> str:
    """The value of ``item``'s first fact called ``name`` ("" when it has none)."""
    return next((str(f.get("value", "")) for f in item.get("facts") or () if f.get("name") == name), "")


def execute_facts(style: str, output: str) -> list[dict[str, str]]:
    """The facts an execute turn of ``style`` asks for, read from its script's output."""
    if style == "output":
        lines = [ln.strip() for ln in output.splitlines() if ln.strip() and not ln.startswith(MARK)]
        return [_fact("line", ln) for ln in lines[:MAX_OUTPUT_FACTS]]
    outcomes = parse_outcomes(output)
    if not outcomes:
        return []
    c = counts(outcomes)
    if style == "counts":
        facts = [_fact("passed", c.passed), _fact("failed", c.failed)]
        facts += [_fact(n, getattr(c, n)) for n in ("error", "skipped") if getattr(c, n)]
        return facts
    if style == "failing":
        bad = [t for t, r in outcomes.items() if r in ("failed", "error")]
        return [_fact("failing_test", t) for t in bad] or [_fact("failed", 0)]
    raise ValueError(f"unknown execute style {style!r}")


def execute_style(facts: Iterable[Mapping[str, Any]]) -> str:
    names = {f["name"] for f in facts}
    if "line" in names:
        return "output"
    if "failing_test" in names or names == {"failed"}:
        return "failing"
    return "counts"


def debug_facts(test: str, output: str) -> tuple[list[dict[str, str]], str]:
    """([test, outcome, failure] facts, problem) for a debug turn's run before the patch; the
    problem is "" when the test ran and failed with a readable message."""
    outcomes = parse_outcomes(output)
    res = outcome_of(outcomes, test)
    if res is None:
        return [], f"test {test!r} did not run (the runner printed no outcome for it)"
    if res not in ("failed", "error"):
        return [], f"test {test!r} {res} on the untouched repository: nothing to diagnose"
    msg = failure_message(output, test)
    if not msg:
        return [], f"test {test!r} fails but its failure message could not be read"
    return [_fact("test", test), _fact("outcome", res), _fact("failure", msg)], ""


def failing_tests(output: str, among: Iterable[str] = ()) -> list[str]:
    """Tests that did not pass in ``output``: with ``among`` (any spelling), each of those that failed,
    errored or did not run at all (SWE-bench's rule: a missing test is not a passed one); without it,
    every test that failed or errored."""
    outcomes = parse_outcomes(output)
    among = list(among)
    if among:
        return [t for t in among if outcome_of(outcomes, t) not in ("passed", "skipped")]
    return [t for t, r in outcomes.items() if r in ("failed", "error")]


def review_facts(output: str, among: Iterable[str] = ()) -> list[dict[str, str]]:
    return [_fact("failing_test", t) for t in failing_tests(output, among)]


def derive(item: Mapping[str, Any], output: str) -> list[dict[str, str]]:
    """The facts ``item``'s kind derives from ``output`` (execute, debug, review); [] for others."""
    kind = item.get("kind")
    facts = list(item.get("facts") or ())
    if kind == "execute":
        return execute_facts(execute_style(facts), output)
    if kind == "debug":
        return debug_facts(fact_value(item, "test"), output)[0]
    if kind == "review":
        return review_facts(output, [f["value"] for f in facts if f["name"] == "failing_test"])
    return []


def reproduce(item: Mapping[str, Any], output: str) -> list[str]:
    """Stored facts of ``item`` that ``output`` does not give again (empty: the reference is reproduced)."""
    got = {(f["name"], f["value"]) for f in derive(item, output)}
    want = [(str(f["name"]), str(f["value"])) for f in item.get("facts") or ()]
    missing = [f"{n}={v!r}" for n, v in want if (n, v) not in got]
    extra = sorted(f"{n}={v!r}" for n, v in got - set(want))
    return missing + [f"new {x}" for x in extra]


__all__ = ["MARK", "EXECUTE_STYLES", "exit_status", "fact_value", "execute_facts", "execute_style", "debug_facts",
           "failing_tests", "review_facts", "derive", "reproduce"]
