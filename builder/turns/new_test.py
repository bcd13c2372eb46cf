"""The ``tests`` turn, builder side: which tasks get one, and its creation-time check (docs/augmentations.md).

Proposed for the FAIL_TO_PASS tests the agent's checkout lacks (they sit in a file the hidden test patch adds
or changes: what a user would ask the agent to write), one spec per such file. The check proves in the
sandbox that the ask is answerable: with that hidden file added, its FAIL_TO_PASS tests fail on the untouched
repository (twice, identically: the published proof) and pass with the gold patch. The turn states the
requirement and the folder the task keeps its tests in, and asks for a test only.
"""

from __future__ import annotations

import posixpath
from typing import Any

from swe_taskflow.proofs import INFRA_ERROR
from swe_taskflow.turns.new_test import TESTS
from swe_taskflow.turns.outcomes import outcome_of, parse_outcomes, same_test
from swe_taskflow.turns.visible import hidden_test_file

from .checks import AugmentSpec, CheckLog, Rejected, TaskContext, require_sandbox, run_twice, script, word_turn


def requirement(ctx: TaskContext) -> str:
    """What the test is for: the first issue turn's text (the whole prompt without an ok split)."""
    text = ctx.parts[0] if ctx.parts else (ctx.task.problem_statement or ctx.task.original_prompt)
    return text.strip()


def propose_tests(ctx: TaskContext, config: Any, gen: dict[str, Any]) -> tuple[list[AugmentSpec], str]:
    """One spec per hidden test file holding FAIL_TO_PASS tests, in the tests' given order."""
    task = ctx.task
    if (why := ctx.no_sandbox_reason()) or not task.fail_to_pass:
        return [], why or "the task has no FAIL_TO_PASS test"
    files: dict[str, str] = {}
    for t in task.fail_to_pass:
        hidden = hidden_test_file(t, task.test_patch)
        if hidden is not None:
            files.setdefault(hidden, t)
    if not files:
        return [], "every FAIL_TO_PASS test is in the agent's checkout already (a debug turn asks about those)"
    req = requirement(ctx)
    return [AugmentSpec(f"{task.instance_id}::tests-{i}", task.instance_id, TESTS, test=test, requirement=req,
                        generator=gen) for i, test in enumerate(list(files.values())[:config.per_kind])], ""


def check_tests(spec: AugmentSpec, ctx: TaskContext, writer, rec: CheckLog) -> dict[str, Any]:
    task = ctx.task
    rec.require(any(same_test(t, spec.test) for t in task.fail_to_pass), "fail-to-pass",
                f"{spec.test!r} is not a FAIL_TO_PASS test of the task")
    hidden = hidden_test_file(spec.test, task.test_patch)
    rec.require(hidden is not None, "hidden-test-file", "the test is in the agent's checkout already: the agent "
                "could just point at it (a debug turn asks about such tests)")
    assert hidden is not None
    rec.require(bool(spec.requirement.strip()), "requirement", "the spec states no requirement to test")
    require_sandbox(ctx, rec, tests=True)
    reference = [t for t in task.fail_to_pass if hidden_test_file(t, task.test_patch) == hidden]
    command = task.test_command
    text = script(command, patches=(("the hidden test patch", task.test_patch),), kind=TESTS)
    base = run_twice(ctx, rec, text)
    before = parse_outcomes(base.stdout_excerpt)
    passing = [t for t in reference if outcome_of(before, t) == "passed"]
    rec.require(not passing, "fails-before-patch", f"with {hidden} added, {passing[:3]} already pass on the "
                "untouched repository", ok_detail=f"{len(reference)} test(s) of {hidden} do not pass")
    fixed = ctx.sandbox.run_patched(ctx.repo, task.patch, text, image=ctx.image)
    if fixed.status == INFRA_ERROR:
        raise Rejected("passes-with-gold-patch", fixed.reason, status="error")
    after = parse_outcomes(fixed.stdout_excerpt)
    failing = [t for t in reference if outcome_of(after, t) != "passed"]
    rec.require(not failing, "passes-with-gold-patch", f"with the gold patch {failing[:3]} still do not pass",
                ok_detail=f"all {len(reference)} pass")
    folder = posixpath.dirname(hidden) or "."
    turn = word_turn(spec, writer, {"requirement": spec.requirement, "folder": folder}, rec)
    rec.require(folder in turn, "text-contract", f"the turn does not name the test folder {folder!r}", ok_detail="kept")
    facts = [{"name": "test_file", "value": hidden}] + [{"name": "failing_test", "value": t} for t in reference]
    return {"text": turn, "script": text, "report": base, "facts": facts, "command": command,
            "reference_answer": (f"A test in {folder}/ that fails before the change and passes after it, as the "
                                 f"task's hidden {hidden} does: {', '.join(reference[:5])} fail on the untouched "
                                 "repository and pass once the change is made.")}


__all__ = ["propose_tests", "check_tests", "requirement"]
