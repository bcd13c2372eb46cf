"""One Harbor environment per task for the callers that prove one script at a time (issue 21): the augmentation
creation checks (CheckSandbox), ``verify --reprove --sandbox harbor`` and ``run_proof``. The environments are
counted on a stand-in for the Harbor worker (a simulated backend in place of ``WorkerBackend``); the container
tests (tests/container/test_harbor_sandbox.py) check the evidence on real environments."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import builder.proofs.docker_runner as docker_runner
import builder.proofs.harbor_runner as hr
from builder.turns import AugmentSpec, ProposeConfig, TemplateWriter, augment_tasks
from builder.turns.registry import realize
from builder.turns.sandbox import CheckSandbox
from builder.bundled.repo import commit_folder
from builder.proofs import ProofConfig
from tests.support.harbor_sim import SimulatedBackend
from builder.proofs.gitsafe import tree_hash
from swe_taskflow.errors import SandboxError
from swe_taskflow.proofs import INFRA_ERROR
from tests.support.augment_cart import FIX, cart_task


class Worker(SimulatedBackend):
    """The worker's client as the session sees it: the uploaded tree is the checkout's; every call recorded."""

    def __init__(self) -> None:
        super().__init__(time_scale=0)
        self.calls: list[tuple] = []
        self.closed = False

    def start(self, task):
        env, _, head = super().start(task)
        self.calls.append(("start", task.image, task.upload))
        return env, task.expected_tree, head

    def run(self, env, script, patch, config):
        self.calls.append(("run", env, script, patch, config.timeout_s))
        return super().run(env, script, patch, config)

    def stop(self, env):
        self.calls.append(("stop", env))
        super().stop(env)

    def close(self):
        self.closed = True


@pytest.fixture
def workers(monkeypatch):
    """Every worker a command starts (``WorkerBackend(...)``), each a :class:`Worker`; no Docker, no Harbor."""
    made: list[Worker] = []

    def worker(*_a, **_kw):
        made.append(Worker())
        return made[-1]

    def no_docker():
        raise SandboxError("no docker in this test")

    monkeypatch.setattr(hr, "WorkerBackend", worker)
    monkeypatch.setattr(hr, "harbor_available", lambda: True)
    monkeypatch.setattr(docker_runner, "docker_client", no_docker)
    return made


def starts(made: list[Worker]) -> int:
    return sum(w.stats["starts"] for w in made)


@pytest.fixture
def repos(tmp_path) -> dict[str, Path]:
    out = {}
    for name in ("cart-a", "cart-b"):
        commit_folder(FIX / "repo", tmp_path / name)
        out[name] = tmp_path / name
    return out


def test_the_augmentation_checks_of_a_task_share_one_environment(workers, repos):
    """Two tasks, two execute specs each (each run twice): 8 check runs, 2 environments (one per task, never two at
    once), one worker, all stopped. Before: one worker and one environment per check run (8 and 8)."""
    base = cart_task()
    tasks = [base.__class__.from_dict({**base.to_dict(), "instance_id": f"fixture__{n}-1"}) for n in repos]
    specs = [AugmentSpec(f"{t.instance_id}::x{k}", t.instance_id, "execute", command="python3 -m unittest -v",
                         style="counts", pool="hand") for t in tasks for k in range(2)]
    sandbox = CheckSandbox("harbor", image="img")
    try:
        items, _ = augment_tasks(tasks, {}, writer=TemplateWriter(), realize=realize, proposers={},
                                 sandbox=sandbox,
                                 repos={t.instance_id: repos[n] for t, n in zip(tasks, repos)},
                                 images={t.instance_id: "img" for t in tasks}, hand_specs=specs,
                                 config=ProposeConfig(kinds=()))
    finally:
        getattr(sandbox, "close", lambda: None)()   # (the old CheckSandbox had nothing to close)
    assert len(items) == 4 and all(i.status == "rejected" for i in items)   # the simulated output holds no counts
    runs = [c for w in workers for c in w.calls if c[0] == "run"]
    assert len(runs) == 8
    assert (len(workers), starts(workers)) == (1, 2)   # before: (8, 8)
    assert sandbox.environments_started == 2
    w = workers[0]
    assert w.stats["max_running"] == 1 and w.running == {} and w.closed
    uploads = [c[2] for c in w.calls if c[0] == "start"]
    assert uploads == [str(repos["cart-a"].resolve()), str(repos["cart-b"].resolve())]
    # the first task's environment is stopped before the second task's starts
    kinds = [c[0] for c in w.calls]
    assert kinds.index("stop") < len(kinds) - 1 - kinds[::-1].index("start")


def test_a_patched_check_applies_its_patch_in_the_tasks_environment(workers, repos):
    """``run_patched`` sends the patch to the open environment (applied to its fresh copy there), no host copy
    and no second environment; the report is keyed like run_proof's on a patched copy (by the patched tree)."""
    repo = repos["cart-a"]
    patch = cart_task().patch
    with CheckSandbox("harbor", image="img") as sandbox:
        plain = sandbox.run(repo, "echo one\n")
        patched = sandbox.run_patched(repo, patch, "echo two\n")
        again = sandbox.run(repo, "echo one\n")
    (w,) = workers
    assert starts(workers) == 1 and w.running == {} and w.closed
    runs = [c for c in w.calls if c[0] == "run"]
    assert [(c[2], c[3]) for c in runs] == [("echo one\n", ""), ("echo two\n", patch), ("echo one\n", "")]
    assert plain.status == patched.status == again.status == "passed"
    assert plain.sandbox == "harbor:" + hr.DEFAULT_ENVIRONMENT and plain.gold_patch_sha256 == ""
    from builder.proofs.run import cache_key
    cfg = sandbox.config
    assert plain.cache_key == cache_key("echo one\n", "", tree_hash(repo), None, cfg, plain.sandbox) == again.cache_key
    assert patched.cache_key == cache_key("echo two\n", "", patched.tree_sha_before, None, cfg, plain.sandbox)


def test_a_patch_that_does_not_apply_is_an_infrastructure_error_of_that_check(workers, repos):
    class NoApply(Worker):
        def run(self, env, script, patch, config):
            return {"patch_error": "git apply failed: corrupt patch"} if patch else super().run(env, script, patch,
                                                                                                config)

    hr_worker = NoApply()
    with CheckSandbox("harbor", image="img") as sandbox:
        sandbox._harbor()._backend = hr_worker   # the session's worker
        bad = sandbox.run_patched(repos["cart-a"], "not a patch", "echo\n")
        good = sandbox.run(repos["cart-a"], "echo\n")
    assert bad.status == INFRA_ERROR and bad.reason.endswith("gold patch: git apply failed: corrupt patch")
    assert good.status == "passed" and hr_worker.stats["starts"] == 1 and hr_worker.running == {}


def test_an_interrupt_during_a_check_stops_the_tasks_environment(workers, repos):
    class Interrupted(Worker):
        def run(self, env, script, patch, config):
            if len([c for c in self.calls if c[0] == "run"]) == 1:
                raise KeyboardInterrupt
            return super().run(env, script, patch, config)

    w = Interrupted()
    with pytest.raises(KeyboardInterrupt):
        with CheckSandbox("harbor", image="img") as sandbox:
            sandbox._harbor()._backend = w
            sandbox.run(repos["cart-a"], "echo\n")
            sandbox.run(repos["cart-a"], "echo\n")
    assert w.stats["starts"] == 1 and w.running == {}


def test_an_environment_that_dies_is_started_again_once_then_its_checks_are_infrastructure_errors(workers, repos):
    class Dying(Worker):
        def run(self, env, script, patch, config):
            super().run(env, script, patch, config)
            raise hr.EnvironmentFailed("gone")

    w = Dying()
    with CheckSandbox("harbor", image="img") as sandbox:
        sandbox._harbor()._backend = w
        first = sandbox.run(repos["cart-a"], "echo\n")
        second = sandbox.run(repos["cart-a"], "echo\n")   # the task's attempts are spent
        sandbox.release()
        third = sandbox.run(repos["cart-a"], "echo\n")    # a new task session: attempts again
    assert [r.status for r in (first, second, third)] == [INFRA_ERROR] * 3
    assert "the environment failed: gone (after 2 attempts)" in first.reason and second.reason == first.reason
    assert w.stats["starts"] == 4 and w.running == {}


def test_run_proof_on_harbor_runs_both_runs_in_one_environment(workers, repos):
    from builder.proofs import run_proof

    rep = run_proof(repos["cart-a"], "echo\n", sandbox="harbor", image="img", gold_patch="a patch\n",
                    config=ProofConfig())
    assert rep.status == "passed" and rep.runs["patched"] is not None
    assert starts(workers) == 1 and [c[3] for c in workers[0].calls if c[0] == "run"] == ["", "a patch\n"]
    assert workers[0].closed and workers[0].running == {}


def test_a_proof_runner_batches_reproofs_per_task_with_each_ones_limits(workers, repos):
    """``run_many``: 5 proofs of 2 tasks, one environment per task, each proof with the limits it was given."""
    calls = [(repos["cart-a"], "echo 1\n", {"sandbox": "harbor:x", "image": "img", "timeout_s": 5}),
             (repos["cart-b"], "echo 2\n", {"sandbox": "harbor:x", "image": "img", "timeout_s": 6}),
             (repos["cart-a"], "echo 3\n", {"sandbox": "harbor:x", "image": "img", "limits": {"timeout_s": 7}}),
             (repos["cart-a"], "echo 4\n", {"sandbox": "docker", "image": "img"}),   # forced to harbor below
             (repos["cart-b"] / "nowhere", "echo 5\n", {"sandbox": "harbor:x", "image": "img"})]
    from builder.proofs import ProofRunner

    with ProofRunner("harbor:x", concurrency=2) as runner:
        reports = runner.run_many(calls)
        assert runner.environments_started == 2
    assert [r.status for r in reports] == ["passed"] * 4 + [INFRA_ERROR]
    assert "repository folder not found" in reports[4].reason
    assert {r.sandbox for r in reports} == {"harbor:x"}
    (w,) = workers
    assert starts(workers) == 2 and w.running == {} and w.closed
    timeouts = {c[2]: c[4] for c in w.calls if c[0] == "run"}
    assert timeouts == {"echo 1\n": 5.0, "echo 2\n": 6.0, "echo 3\n": 60.0, "echo 4\n": 60.0}


def test_reprove_with_run_many_gives_the_same_findings_in_the_same_order():
    """The core's reprove asks a batching runner for every re-run first; what it reports does not change."""
    from swe_taskflow.verify import reprove_rows as reprove

    class Report:
        def __init__(self):
            self.errors, self.reproved, self.rechecked = [], 0, 0

    class Result:
        def __init__(self, status, sha):
            self.status, self.stdout_sha256 = status, sha

    def q(qid, status="passed", sha="s"):
        return {"question_id": qid, "proof_script": f"echo {qid}\n", "kind": "qa",
                "proof_report": {"status": status, "stdout_sha256": sha, "sandbox": "harbor", "image": "img"}}

    rows = {"a": [{"instance_id": "t1", "repo": "o/t1", "questions": [q("q1"), q("q2", sha="x")], "turns": []},
                  {"instance_id": "t2", "repo": "o/t2", "questions": [q("q3", status="timeout")], "turns": []}],
            "b": [{"instance_id": "t1", "repo": "o/t1", "questions": [q("q2", sha="x"), q("q4")], "turns": []}]}

    def one(repo, script, **kw):
        return Result("passed", "s")

    class Batching:
        def __init__(self):
            self.batches = []

        def __call__(self, repo, script, **kw):
            raise AssertionError("every re-run comes from run_many")

        def run_many(self, calls):
            self.batches.append([c[1] for c in calls])
            return [one(*c[:2], **c[2]) for c in calls]

    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("t1", "t2"):
            Path(tmp, name).mkdir()
        plain, batched, runner = Report(), Report(), Batching()
        reprove(rows, plain, repos_dir=tmp, run_proof=one)
        reprove(rows, batched, repos_dir=tmp, run_proof=runner)
    assert runner.batches == [["echo q1\n", "echo q2\n", "echo q3\n", "echo q4\n"]]
    assert [str(e) for e in batched.errors] == [str(e) for e in plain.errors] and len(plain.errors) == 2
    assert batched.reproved == plain.reproved == 4


def test_verify_reprove_sandbox_harbor_starts_one_environment_per_task(workers, tmp_path):
    """The CLI, on a release of the example's task with three questions: one environment (before: three, each in
    its own worker). The stand-in prints other evidence, so each re-run is also reported as a mismatch."""
    from builder.cli import main
    from builder.release import write_release
    from builder.split.structural import StructuralSplitter
    from swe_taskflow.rows import build_row
    from swe_taskflow.schema import QAItem, Session, Turn
    from tests.support.example_release import EXAMPLE, example_question, example_task, source_provenance
    from tests.support.synthetic import uniform_target

    task = example_task()
    split = StructuralSplitter().split(task)
    q = example_question()
    qs = [QAItem.from_dict({**q.to_dict(), "question_id": f"{q.question_id}-{k}",
                            "proof_script": f"{q.proof_script}echo {k}\n"}) for k in range(3)]
    turns = [Turn(n, "issue", p, "bug-fix", (n,)) for n, p in enumerate(split.parts)]
    turns += [Turn(3 + k, "qa", x.question, x.intent, (), x.question_id) for k, x in enumerate(qs)]
    row = build_row(task, Session(task.instance_id, "qa_last", tuple(turns), question_pool="example"), split, qs)
    uniform_target(tmp_path / "target.json")
    write_release(tmp_path / "rel", name="three-questions", version="0.1.0", splits={"qa_last": [row]},
                  target_path=tmp_path / "target.json", provenance={"source": source_provenance()},
                  repo_id="swe-taskflow/three-questions")
    shutil.copytree(EXAMPLE / "repo", tmp_path / "repos" / task.instance_id)
    rc = main(["verify", str(tmp_path / "rel"), "--reprove", "--repos", str(tmp_path / "repos"),
               "--sandbox", "harbor", "--quiet"])
    assert rc == 1   # the stand-in's evidence is not the published one
    assert len(workers) == 1 and starts(workers) == 1
    assert len([c for c in workers[0].calls if c[0] == "run"]) == 3
    assert workers[0].running == {} and workers[0].closed
