"""Augmentation turns through the Harbor export: each becomes an answer-file step like a QA turn, and
none of its hidden reference reaches a file the agent can read (the example's own task, hand-written)."""

from __future__ import annotations

import tomllib

from builder.evaluation.export import answer_instruction, export_harbor, step_name
from builder.release import write_release
from tests.support.synthetic import uniform_target
from builder.split.structural import StructuralSplitter
from swe_taskflow.rows import build_row
from swe_taskflow.schema import QAItem, Session, Turn

from tests.support.example_release import example_task, source_provenance

SECRET = "augmentation-reference-secret"


def _items(task):
    return [
        QAItem("x1", task.instance_id, "Run `python3 -B -m unittest discover -v -s tests -t .` and count the tests.",
               SECRET, kind="execute", intent="execute", command=task.test_command, status="accepted",
               facts=[{"name": "passed", "value": SECRET}]),
        QAItem("d1", task.instance_id, "A test fails: why? Don't change anything.", SECRET, kind="debug",
               intent="debug", status="accepted",
               locations=[{"path": f"ticketdesk/{SECRET}.py", "symbol": SECRET, "line_start": 1, "line_end": 2}]),
        QAItem("r1", task.instance_id, "Please do a code review of this change.", SECRET, kind="review",
               intent="code-review", status="accepted",
               mutation={"operator": "off-by-one", "path": "ticketdesk/store.py", "line": 55, "before": "x",
                         "after": SECRET}),
    ]


def test_augmentation_turns_export_as_answer_steps_without_their_references(tmp_path):
    task = example_task()
    split = StructuralSplitter().split(task)
    items = _items(task)
    issue = [Turn(n + 2, "issue", p, "new-feature", (n,)) for n, p in enumerate(split.parts)]
    turns = (Turn(0, "execute", items[0].question, "execute", (), "x1"),
             Turn(1, "debug", items[1].question, "debug", (), "d1"), *issue,
             Turn(5, "review", items[2].question, "code-review", (), "r1"))
    row = build_row(task, Session(task.instance_id, "tfas_optimized", turns), split, items)
    uniform_target(tmp_path / "target.json")
    rel = tmp_path / "release"
    write_release(rel, name="augment-harbor", version="0.1.0", splits={"tfas_optimized": [row]},
                  target_path=tmp_path / "target.json", provenance={"source": source_provenance()},
                  repo_id="swe-taskflow/augment-harbor")
    result = export_harbor(rel, "tfas_optimized", tmp_path / "out")
    (rec,) = result.tasks
    task_dir = tmp_path / "out" / rec["dir"]
    steps = tomllib.loads((task_dir / "task.toml").read_text())["steps"]
    assert [s["name"] for s in steps] == [step_name(t.turn_index, t.kind) for t in turns]
    for turn, step in zip(turns, steps):
        tests = task_dir / "steps" / step["name"] / "tests"
        if turn.kind != "issue":
            text = (task_dir / "steps" / step["name"] / "instruction.md").read_text()
            assert text == answer_instruction(turn.text, step["name"]) and (tests / "answer.json").exists()
    visible = [p for p in task_dir.rglob("*") if p.is_file()
               and not {"tests", "solution"} & set(p.relative_to(task_dir).parts)]
    assert visible and not any(SECRET in p.read_text(encoding="utf-8") for p in visible)
    # the check can fail: the oracle's solution files hold the reference answers
    assert any(SECRET in p.read_text(encoding="utf-8") for p in task_dir.rglob("reference.md"))
