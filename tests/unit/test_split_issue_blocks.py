"""The structural splitter on an issue with no requirements section (SWE-bench Verified): the issue's own blocks,
in order, in three parts; fences never cut; too short stays single-turn."""

from __future__ import annotations

from pathlib import Path

from builder.sources import load_tasks
from builder.split import get_splitter
from builder.split.structural import issue_blocks, thirds
from swe_taskflow.schema import Task

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "swe-bench-verified" / "verified_sample.jsonl"


def _task(text: str) -> Task:
    return Task(instance_id="o__r-1", source="swe-bench-verified", source_revision="", repo="o/r", base_commit="c",
                original_prompt=text, problem_statement=text)


def test_fenced_code_with_blank_lines_stays_in_one_block():
    text = "Title\n\nIt breaks:\n\n```python\nx = 1\n\ny = 2\n```\n\nExpected: no error.\n"
    assert issue_blocks(text) == ["Title", "It breaks:", "```python\nx = 1\n\ny = 2\n```", "Expected: no error."]


def test_thirds_are_consecutive_non_empty_and_balanced():
    assert thirds(["a" * 10, "b" * 10, "c" * 10, "d" * 1]) == ["a" * 10, "b" * 10, "c" * 10 + "\n\n" + "d"]
    assert thirds(["x", "y", "z"]) == ["x", "y", "z"]


def test_real_verified_issues_split_in_order_and_pass_the_contract():
    splitter = get_splitter("structural")
    for task in load_tasks(str(FIXTURE)).tasks:
        res = splitter.split(task)
        if task.instance_id == "sympy__sympy-11618":   # a title with its code, then one sentence: two blocks
            assert res.status == "ineligible" and not res.parts, res
            continue
        assert res.status == "ok", (task.instance_id, res.reason, res.violations)
        assert len(res.parts) == 3 and all(p.strip() for p in res.parts)
        squeeze = lambda s: "".join(s.split())  # noqa: E731   (only white space between blocks may differ)
        assert squeeze("".join(res.parts)) == squeeze(task.problem_statement)   # verbatim, in order, nothing added


def test_short_issue_stays_single_turn_with_the_reason():
    res = get_splitter("structural").split(_task("One sentence only, no blank line"))
    assert res.status == "ineligible" and "fewer than three blocks or sentences" in res.reason
    ok = get_splitter("structural").split(_task("It fails. Run foo. Expected bar."))
    assert ok.status == "ok" and list(ok.parts) == ["It fails.", "Run foo.", "Expected bar."]


def test_cuts_where_each_later_turn_asks_for_something_are_preferred():
    from swe_taskflow.context_checks import check_context
    tb = "Traceback (most recent call last):\n" + "".join(f'  File "lib/mod{i}.py", line {i}, in f{i}\n'
                                                          for i in range(6)) + "ValueError: bad record"
    issue = ("The parser drops empty lines between records in the export of a table.\n\n" + tb + "\n\n"
             "Please keep empty lines when the records are exported.\n\n"
             "It happens with version 2.1 on Linux and macOS both, with any file we tried so far, large or small, "
             "old or new.\n\nAlso make the importer accept them.")
    blocks = issue_blocks(issue)
    balanced = thirds(blocks)               # by length only: turn 2 is the traceback alone, asking nothing
    assert [v.kind for v in check_context(issue, balanced, ()).violations] == ["no-request-turn"]
    parts = thirds(blocks, issue)
    assert check_context(issue, parts, ()).violations == ()
    assert parts[1].startswith("Traceback") and parts[1].endswith("exported.")
    assert "\n\n".join(parts) == "\n\n".join(blocks)   # the same blocks, in order
