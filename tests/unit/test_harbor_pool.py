"""The harbor sandbox's scheduling (builder.proofs.harbor_runner.prove_tasks) on the simulated backend:
one environment per task, bounded retries with backoff, infrastructure failures per item, nothing lost,
the same results at every concurrency, every environment stopped on an interrupt."""

from __future__ import annotations

import hashlib
import json
import threading

import pytest

from builder.proofs.config import ProofConfig
from builder.proofs.harbor_runner import HarborItem, HarborTask, Progress, Scheduling, prove_tasks
from tests.support.harbor_sim import SimulatedBackend
from swe_taskflow.proofs import INFRA_ERROR, PASSED

CFG = ProofConfig()


def work(tasks: int = 12, items: int = 3):
    return [(HarborTask(key=f"t{t}", image=f"img{t}"),
             [HarborItem(t * items + i, f"echo {t} {i}\n", "a patch" if i % 2 else "", f"k{t}.{i}")
              for i in range(items)]) for t in range(tasks)]


def run(backend, concurrency=4, retries=3, **kw):
    got: dict[int, dict] = {}
    sleeps: list[float] = []
    lock = threading.Lock()

    def done(i, report):
        with lock:
            assert i not in got, f"item {i} reported twice"
            got[i] = report.to_dict()

    progress = prove_tasks(kw.pop("work", None) or work(), backend, CFG, sandbox="harbor:sim", image_ids={},
                           scheduling=Scheduling(concurrency=concurrency, retries=retries, backoff_s=2.0),
                           on_done=done, sleep=sleeps.append, **kw)
    return got, progress, sleeps


def digest(got):
    for r in got.values():
        r["duration_s"] = None
        for v in r["runs"].values():
            if isinstance(v, dict):
                v["duration_s"] = None
    return hashlib.sha256(json.dumps([got[i] for i in sorted(got)], sort_keys=True).encode()).hexdigest()


def test_one_environment_per_task_and_every_item_proved():
    backend = SimulatedBackend(time_scale=0)
    got, progress, _ = run(backend)
    assert sorted(got) == list(range(36))
    assert {r["status"] for r in got.values()} == {PASSED}
    assert backend.stats["starts"] == 12 and backend.running == {}
    assert backend.stats["runs"] == 12 * (3 + 1)   # an item with a gold patch runs twice
    assert progress.items_done == progress.items_total == 36 and progress.environments_running == 0


def test_start_failures_are_retried_with_backoff_then_reported_per_item_as_infrastructure():
    backend = SimulatedBackend(failure_rate=1.0, time_scale=0)
    got, progress, sleeps = run(backend, retries=2)
    assert sorted(got) == list(range(36))                      # none lost
    assert {r["status"] for r in got.values()} == {INFRA_ERROR}   # not a failed proof
    assert all("did not start" in r["reason"] and "after 3 attempts" in r["reason"] for r in got.values())
    assert backend.stats["starts"] == 12 * 3 and progress.retries == 12 * 2
    assert sorted(sleeps) == sorted([2.0, 4.0] * 12)
    assert progress.infra_failures == 36


def test_results_are_identical_at_every_concurrency_with_failures_and_deaths():
    hashes = set()
    for concurrency in (1, 3, 16):
        backend = SimulatedBackend(failure_rate=0.3, die_rate=0.1, seed=7, time_scale=0)
        got, progress, _ = run(backend, concurrency=concurrency)
        assert sorted(got) == list(range(36)) and backend.running == {}
        assert backend.stats["start_failures"] > 0 and backend.stats["deaths"] > 0
        hashes.add(digest(got))
    assert len(hashes) == 1


def test_a_dying_environment_resumes_on_a_fresh_one_for_the_items_left():
    backend = SimulatedBackend(die_rate=0.2, seed=3, time_scale=0)
    got, progress, _ = run(backend, retries=5)
    assert backend.stats["deaths"] > 0 and progress.retries >= backend.stats["deaths"] - progress.infra_failures
    assert sum(r["status"] == PASSED for r in got.values()) + progress.infra_failures == 36


def test_an_interrupt_stops_every_environment_and_starts_no_other():
    backend = SimulatedBackend(time_scale=0)
    seen = []

    def done(i, report):
        seen.append(i)
        if len(seen) == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        prove_tasks(work(40), backend, CFG, sandbox="harbor:sim", image_ids={},
                    scheduling=Scheduling(concurrency=4), on_done=done)
    assert backend.running == {}
    assert backend.stats["starts"] < 40


def test_progress_line_names_environments_items_failures_and_time_left():
    p = Progress(items_total=10, items_done=5, environments_running=2, infra_failures=1)
    line = p.line()
    assert "environments running 2" in line and "items 5/10" in line and "failures 1" in line and "left ~" in line


def test_an_image_whose_repository_is_not_the_tasks_is_an_infrastructure_error_without_retries():
    class WrongImage(SimulatedBackend):
        def start(self, task):
            env, tree, _ = super().start(task)
            return env, tree, "0" * 40

    backend = WrongImage(time_scale=0)
    tasks = [(HarborTask(key="t0", image="img", base_commit="a" * 40), [HarborItem(0, "echo\n", "", "k0"),
                                                                       HarborItem(1, "echo\n", "", "k1")]),
             (HarborTask(key="t1", image="img", expected_tree="b" * 40), [HarborItem(2, "echo\n", "", "k2")])]
    got, progress, sleeps = run(backend, work=tasks)
    assert [got[i]["status"] for i in range(3)] == [INFRA_ERROR] * 3
    assert "not the task's base_commit " + "a" * 40 in got[0]["reason"]
    assert "not the checkout's " + "b" * 40 in got[2]["reason"]
    assert backend.stats["starts"] == 2 and sleeps == [] and backend.stats["runs"] == 0 and backend.running == {}


def test_the_recipe_declares_the_harbor_settings_once(tmp_path):
    from builder.pipeline.recipe import parse_recipe
    from swe_taskflow.errors import ConfigError

    base = {"release": {"name": "x", "version": "1"}, "source": {"spec": "tasks.jsonl"},
            "questions": {"mode": "none"}, "conditions": {"names": ["single_prompt"]}}
    r = parse_recipe({**base, "proofs": {"sandbox": "harbor", "environment": "daytona", "concurrency": 64,
                                         "environment_kwargs": {"region": "eu"}}}, tmp_path / "r.toml")
    assert (r.proofs.sandbox, r.proofs.environment, r.proofs.concurrency) == ("harbor", "daytona", 64)
    assert dict(r.proofs.environment_kwargs) == {"region": "eu"}
    with pytest.raises(ConfigError) as exc:
        parse_recipe({**base, "proofs": {"environment_kwargs": "region=eu"}}, tmp_path / "r.toml")
    assert exc.value.field == "proofs.environment_kwargs"
    with pytest.raises(ConfigError):
        parse_recipe({**base, "proofs": {"concurrency": 0}}, tmp_path / "r.toml")
