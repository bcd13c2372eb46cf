"""A four-turn release of the example's own task (swe-taskflow__ticketdesk-1), for the Harbor tests.

The task row, its repository, gold patch, tests and question pool are the example's (hand-written,
builder/data/example/); the three issue turns come from the project's structural splitter and the
answer turn is the pool's first question about the task. Rows are built by the project's row builder
and written by its release writer, so what the tests export is a real release.
"""

from __future__ import annotations

import json
from pathlib import Path

from builder.release import write_release
from tests.support.synthetic import uniform_target
from builder.sources import load_tasks
from builder.split.structural import StructuralSplitter
from swe_taskflow.rows import build_row
from swe_taskflow.schema import QAItem, Session, Turn

EXAMPLE = Path(__file__).resolve().parents[2] / "builder" / "data" / "example"
TASKS = EXAMPLE / "tasks.jsonl"
INSTANCE = "swe-taskflow__ticketdesk-1"
CONDITION = "qa_last"


def example_task():
    return next(t for t in load_tasks(str(TASKS)).ok if t.instance_id == INSTANCE)


def source_provenance() -> dict:
    return load_tasks(str(TASKS)).provenance


def example_question() -> QAItem:
    for line in (EXAMPLE / "pool.jsonl").read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        if d["instance_id"] == INSTANCE:
            return QAItem.from_dict({**d, "status": "accepted"})
    raise LookupError("the example pool has no question about the example task")


def build_example_release(dest: Path) -> Path:
    task = example_task()
    split = StructuralSplitter().split(task)
    assert split.status == "ok", split.reason
    q = example_question()
    turns = [Turn(n, "issue", p, it, (n,)) for n, (p, it) in enumerate(zip(split.parts, ("bug-fix", "new-feature",
                                                                                        "tests")))]
    turns.append(Turn(3, "qa", q.question, q.intent, (), q.question_id))
    row = build_row(task, Session(task.instance_id, CONDITION, tuple(turns), question_pool="example"), split, [q])
    uniform_target(dest.parent / "target.json")
    write_release(dest, name="ticketdesk-harbor", version="0.1.0", splits={CONDITION: [row]},
                  target_path=dest.parent / "target.json",
                  provenance={"source": source_provenance()},
                  repo_id="swe-taskflow/ticketdesk-harbor")
    return dest
