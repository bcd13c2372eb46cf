"""The ``tests`` turn end to end on the example's own task, without Harbor: its creation-time check in a Docker
sandbox of the example image, a release row with the turn first, ``export harbor``, and its step verifier
(new_test.py) in a network-less container of the same image judging what the agent wrote. The agent's tests
below are hand-written."""

from __future__ import annotations

import json

import pytest

from builder.bundled.repo import commit_folder
from builder.evaluation.export import export_harbor
from builder.release import write_release
from builder.split.structural import StructuralSplitter
from builder.turns import TemplateWriter, TaskContext
from builder.turns.new_test import propose_tests
from builder.turns.propose import ProposeConfig
from builder.turns.registry import realize
from builder.turns.sandbox import CheckSandbox
from swe_taskflow.rows import build_row
from swe_taskflow.schema import Session, Turn
from tests.support.containers import docker, idle_container
from tests.support.example_release import EXAMPLE, example_task, source_provenance
from tests.support.synthetic import uniform_target

pytestmark = pytest.mark.docker
SPLIT = "tests_first"
#: [hand-written] a test of the missing TicketStore.load: an error before the change, a pass after it.
GOOD = '''import tempfile
import unittest
from pathlib import Path

from ticketdesk.store import TicketStore


class SavedTicketsTests(unittest.TestCase):
    def test_saved_tickets_load_back(self):
        with tempfile.TemporaryDirectory() as d:
            store = TicketStore(Path(d, "t.json"))
            store.add("printer jammed")
            store.save()
            self.assertEqual([t.title for t in TicketStore.load(Path(d, "t.json")).page(1)], ["printer jammed"])
'''
#: [hand-written] a test that passes before the change as well: it tests nothing the change brings.
ALWAYS = GOOD.replace("TicketStore.load(Path(d, \"t.json\")).page(1)", "store.page(1)")


@pytest.fixture(scope="module")
def exported(tmp_path_factory, example_image):
    tmp = tmp_path_factory.mktemp("new-test")
    task = example_task()
    repo = tmp / "repo"
    assert commit_folder(EXAMPLE / "repo", repo) == task.base_commit
    split = StructuralSplitter().split(task)
    ctx = TaskContext(task, split.parts, repo, CheckSandbox("docker", image=example_image), image=example_image)
    specs, why = propose_tests(ctx, ProposeConfig(kinds=("tests",)), {"name": "propose", "provenance": "generated"})
    assert specs and why == ""
    item = realize(specs[0], ctx, TemplateWriter())
    assert item.status == "accepted", item.reason
    turns = [Turn(0, "tests", item.question, item.intent, (), item.question_id),
             *(Turn(n + 1, "issue", p, "new-feature", (n,)) for n, p in enumerate(split.parts))]
    row = build_row(task, Session(task.instance_id, SPLIT, tuple(turns)), split, [item])
    uniform_target(tmp / "target.json")
    rel = tmp / "release"
    write_release(rel, name="ticketdesk-tests", version="0.1.0", splits={SPLIT: [row]}, target_path=tmp / "target.json",
                  provenance={"source": source_provenance()}, repo_id="swe-taskflow/ticketdesk-tests")
    res = export_harbor(rel, SPLIT, tmp / "out")
    return item, tmp / "out" / res.tasks[0]["dir"] / "steps" / "turn-01-tests"


@pytest.fixture
def container(example_image):
    with idle_container(example_image, "stf-newtest") as name:
        yield name


def _as_agent(c: str, script: str, stdin: str | None = None):
    return docker("exec", *(["-i"] if stdin is not None else []), "-u", "agent", "-w", "/app", c, "bash", "-c",
                  script, stdin=stdin, check=False)


def _verify(c: str, step) -> tuple[dict, dict]:
    docker("exec", "-u", "root", c, "rm", "-rf", "/tests", "/logs/verifier")
    docker("cp", str(step / "tests"), f"{c}:/tests")
    run = docker("exec", "-u", "root", "-w", "/app", c, "bash", "/tests/test.sh", check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    reward = json.loads(docker("exec", c, "cat", "/logs/verifier/reward.json").stdout)
    return reward, json.loads(docker("exec", c, "cat", "/logs/verifier/verdict.json").stdout)


def test_the_step_ships_its_verifier_the_task_test_run_and_the_gold_patch_only_to_the_verifier(exported):
    item, step = exported
    cfg = json.loads((step / "tests" / "new_test.json").read_text())
    assert cfg["kind"] == "tests" and cfg["gold_patch"] == "gold.patch" and cfg["test"]["kind"] == "command"
    assert cfg["timeout_s"] == (1800 - 120) / 2       # two runs end well inside the verifier's own 1800 s
    assert (step / "tests" / "gold.patch").read_text() == example_task().patch
    assert {"new_test.py", "checkpoint.py", "verifier_state.py", "answer.py", "testlog.py", "test.sh"} <= \
        {p.name for p in (step / "tests").iterdir()}
    assert "TicketStore.load" not in (step / "instruction.md").read_text()     # the reference stays hidden
    assert "`tests/`" in item.question


@pytest.mark.parametrize("case", ["good", "always-passes", "also-implements", "no-test"])
def test_the_verifier_judges_what_the_agent_wrote_and_gives_the_repository_back(exported, container, case):
    _, step = exported
    if case != "no-test":
        wrote = _as_agent(container, "cat > tests/test_saved_tickets.py", stdin=ALWAYS if case == "always-passes"
                          else GOOD)
        assert wrote.returncode == 0, wrote.stderr
    if case == "also-implements":   # the user asked for a test only: the turn changed the code under test too
        applied = _as_agent(container, "git apply -", stdin=example_task().patch)
        assert applied.returncode == 0, applied.stderr
    _as_agent(container, "mkdir -p /tmp/answers && echo 'tests/test_saved_tickets.py' > "
                         "/tmp/answers/turn-01-tests.md")
    before = _as_agent(container, "git status --porcelain; git diff | sha256sum").stdout
    reward, verdict = _verify(container, step)
    assert reward["answered"] == 1.0
    assert reward["correct"] == (1.0 if case == "good" else 0.0), verdict
    if case == "good":
        assert verdict["failing_before"] == verdict["tests"] == [
            "tests/test_saved_tickets.py::SavedTicketsTests::test_saved_tickets_load_back"]
        assert verdict["fails_before"] and verdict["passes_after"] and verdict["only_tests"]
    elif case == "always-passes":
        assert verdict["passes_after"] and not verdict["fails_before"]
    elif case == "also-implements":
        assert not verdict["only_tests"] and verdict["other_files"] == ["ticketdesk/cli.py", "ticketdesk/store.py"]
    else:
        assert verdict["files"] == [] and not verdict["only_tests"]
    # the repository is as the agent left it: no gold patch, the agent's files and owners kept
    assert _as_agent(container, "git status --porcelain; git diff | sha256sum").stdout == before
    if case != "no-test":
        assert _as_agent(container, "stat -c %U tests/test_saved_tickets.py").stdout.strip() == "agent"
