"""Each exported checkpoint runs in a network-less container of the example's own image, with the gold
patch parts applied in order (as an oracle would): rewards rise to resolved, the clean repository is
graded too, the agent's repository is left exactly as it was, and answer steps only copy the answer."""

from __future__ import annotations

import json
import tomllib

import pytest

from builder.evaluation.export import export_harbor
from tests.support.containers import docker, idle_container
from tests.support.example_release import CONDITION, build_example_release, example_task

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def image(example_image):
    return example_image


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ckpt")
    rel = build_example_release(tmp / "release")
    res = export_harbor(rel, CONDITION, tmp / "out")
    return tmp / "out" / res.tasks[0]["dir"]


@pytest.fixture
def container(image):
    with idle_container(image, "stf-ckpt") as name:
        yield name


def _state(c: str) -> str:
    """The agent's repository as the agent sees it: status, full diff and untracked file contents."""
    return docker("exec", "-u", "agent", "-w", "/app", c, "bash", "-c",
                   "git status --porcelain=v1 -uall; git diff --binary HEAD; "
                   "git ls-files -o --exclude-standard -z | xargs -0 -r cat").stdout


def _verify(c: str, step_dir) -> dict:
    docker("exec", "-u", "root", c, "rm", "-rf", "/tests", "/logs/verifier")
    docker("cp", str(step_dir / "tests"), f"{c}:/tests")
    run = docker("exec", "-u", "root", "-w", "/app", c, "bash", "/tests/test.sh", check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(docker("exec", c, "cat", "/logs/verifier/reward.json").stdout)


def test_checkpoints_rise_to_resolved_and_never_touch_the_repository(exported, container):
    cfg = tomllib.loads((exported / "task.toml").read_text())
    steps = cfg["metadata"]["swe_taskflow"]["steps"]
    task = example_task()
    rewards, patches = [], []
    for step in steps:
        d = exported / "steps" / step["step"]
        if step["kind"] == "issue":
            part = (d / "solution" / "part.patch").read_text()
            if part:
                applied = docker("exec", "-i", "-u", "agent", "-w", "/app", container, "git", "apply", "-",
                                  stdin=part, check=False)
                assert applied.returncode == 0, applied.stderr
        else:   # the oracle's answer for the answer turn
            docker("exec", "-i", "-u", "agent", container, "bash", "-c",
                    f"mkdir -p /tmp/answers && cat > {step['answer_path']}", stdin="the pool's answer\n")
        before = _state(container)
        reward = _verify(container, d)
        assert _state(container) == before, f"{step['step']} changed the agent's repository"
        rewards.append(reward)
        if step["kind"] == "issue":
            patches.append(docker("exec", container, "cat", "/logs/verifier/agent.patch").stdout)
    issue = [r for r, s in zip(rewards, steps) if s["kind"] == "issue"]
    f2p = [r["f2p_pass_rate"] for r in issue]
    assert issue[0]["clean_resolved"] == 0.0 and issue[0]["clean_f2p_pass_rate"] == 0.0
    assert issue[0]["clean_p2p_pass_rate"] == 1.0            # the clean repository passes its old tests
    assert f2p == sorted(f2p) and f2p[0] < f2p[-1] == 1.0     # rising to every FAIL_TO_PASS test passing
    assert [r["resolved"] for r in issue][-1] == 1.0 and issue[-1]["p2p_pass_rate"] == 1.0
    assert all(r["tests_passed"] + r["tests_failed"] == len(task.fail_to_pass) + len(task.pass_to_pass)
               for r in issue)
    assert patches[-1].count("diff --git") == task.patch.count("diff --git")   # cumulative agent change
    answer = rewards[-1]
    assert answer["answered"] == 1.0 and answer["resolved"] == 1.0           # the last checkpoint carried forward
    out = docker("exec", container, "cat", "/logs/verifier/answer.md").stdout
    assert out == "the pool's answer\n"


def test_checkpoint_grades_a_broken_repository_as_unresolved(exported, container):
    d = exported / "steps" / "turn-01-issue"
    docker("exec", "-u", "agent", "-w", "/app", container, "bash", "-c",
            "echo 'raise SystemExit(3)' > ticketdesk/__init__.py")
    reward = _verify(container, d)
    assert reward["resolved"] == 0.0 and reward["p2p_pass_rate"] < 1.0
    assert reward["clean_p2p_pass_rate"] == 1.0   # the clean run ignores the agent's change
