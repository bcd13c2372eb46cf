"""The ``harbor`` proof sandbox (issue 21) on the project's local Harbor environment.

The same evidence as docker for the example's proofs, the existing hostile cases run through it (root-only
files, a hostile repository, kill -9 and signals of a proof run), and a build killed mid-stage: nothing
left running after the next command, the rerun's results identical.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from builder.proofs import ProofConfig, run_proof

from tests.container.test_hostile_sandbox import SECRET, Slow, hostile_repo, make_repo, wait_for

pytestmark = [pytest.mark.harbor, pytest.mark.docker]
ROOT = Path(__file__).resolve().parents[2]
CFG = ProofConfig(mem_mb=256, pids=32, tmpfs_mb=8, max_output_bytes=256 << 10, timeout_s=10)
PROOF_SESSION = "swe-taskflow.harbor-session"


@pytest.fixture(scope="module")
def image(example_image):
    return example_image


@pytest.fixture(autouse=True)
def _harbor_env(harbor_venv, monkeypatch):
    monkeypatch.setenv("SWE_TASKFLOW_HARBOR_VENV", str(harbor_venv))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))


def proof_containers() -> list[str]:
    """Containers of the harbor sandbox (their Harbor session is ``proof-...``)."""
    out = subprocess.run(["docker", "ps", "-a", "--filter", f"label={PROOF_SESSION}", "--format",
                          f'{{{{.ID}}}} {{{{.Label "{PROOF_SESSION}"}}}}'], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.split()[1:2] and line.split()[1].startswith("proof-")]


def cli(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "builder.cli", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


# ------------------------------------------------------------------ the same evidence as docker

def evidence(report: dict) -> tuple:
    runs = report.get("runs") or {}
    return (report["status"], report["stdout_sha256"], report["exit_codes"],
            tuple((k, v["stdout_sha256"], v["tree_sha_before"], v["tree_sha_after"], v["exit_code"])
                  for k, v in sorted(runs.items()) if isinstance(v, dict)))


def test_a_single_proof_gives_the_docker_evidence(tmp_path, image):
    repo = make_repo(tmp_path / "repo", {"a.txt": "hello\n", "run.sh": "#!/bin/sh\necho run\n"})
    patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-hello\n+hello, patched\n"
    script = "grep -c hello a.txt; ls -a /tmp | wc -l; id -u\n"
    docker = run_proof(repo, script, sandbox="docker", image=image, config=CFG, gold_patch=patch)
    harbor = run_proof(repo, script, sandbox="harbor", image=image, config=CFG, gold_patch=patch)
    assert docker.status == "passed", docker.reason
    assert evidence(harbor.to_dict()) == evidence(docker.to_dict())
    assert harbor.sandbox == "harbor:swe_taskflow_harbor.environment:DockerEnvironment"
    assert harbor.runs["patched"]["tree_sha_before"] != harbor.runs["base"]["tree_sha_before"]   # patch applied
    assert proof_containers() == []


def test_one_proofs_leftovers_never_reach_the_next_proof_in_the_same_environment(tmp_path, image):
    """Issue 32: two proofs of one task share an environment; what the first leaves (files in every place the
    script user can write, a message queue, a shared-memory segment, a detached process) the second never sees.
    Old code: on this busybox image ``find -delete`` failed silently and /tmp, /logs, /dev/mqueue kept it all."""
    from builder.proofs.harbor_runner import HarborSession

    repo = make_repo(tmp_path / "repo", {"a.txt": "x\n"})
    leave = ("echo l > /tmp/a; echo l > /tmp/.h; echo l > /dev/shm/b; echo l > /logs/c; touch /dev/mqueue/q; "
             "python3 -c 'import ctypes;ctypes.CDLL(None).shmget(0x5158, 4096, 0o1666)'; "
             "setsid sleep 600 </dev/null >/dev/null 2>&1 & echo left\n")
    look = ("ls -A /tmp /dev/shm /logs /dev/mqueue; awk 'NR > 1' /proc/sysvipc/shm; "
            "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done | grep -c '^sleep 600' "
            "| sed 's/$/ sleeping/'\n")
    with HarborSession() as session:
        first = session.prove(repo, leave, image=image, image_id="", config=CFG)
        second = session.prove(repo, look, image=image, image_id="", config=CFG)
        assert session.progress.environments_started == 1
    assert first.status == "passed" and "left" in first.stdout_excerpt, first.reason
    assert second.status == "passed", second.reason
    seen = second.stdout_excerpt
    for name in ("a", ".h", "b", "c", "q", "sleep"):
        assert f"\n{name}\n" not in f"\n{seen}", seen
    assert "0 sleeping" in seen and "65534" not in seen, seen   # the detached process is gone


@pytest.mark.slow
def test_the_example_proofs_give_the_docker_evidence_for_every_item(tmp_path, image):
    """Both sandboxes build the example up to its proofs stage. Every item's status, stdout hash, exit codes and
    tree hashes agree, the deliberate write into the repository included: refused by a read-only mount in
    docker ("Read-only file system") and by ownership in a Harbor environment ("cannot create ...: Permission
    denied"), both read as a blocked write (modified-repo)."""
    example = ROOT / "builder" / "data" / "example"
    built = {}
    for sandbox in ("docker", "harbor"):
        recipe = (ROOT / "builder" / "releases" / "example.toml").read_text()
        recipe = recipe.replace('"../data/example/', f'"{example}/').replace('sandbox = "auto"', f'sandbox = "{sandbox}"')
        (tmp_path / f"{sandbox}.toml").write_text(recipe)
        p = cli("build", str(tmp_path / f"{sandbox}.toml"), "--out", str(tmp_path / sandbox), "--until", "proofs",
                "--quiet")
        assert p.wait(timeout=900) == 0, p.stderr.read()
        rows = next((tmp_path / sandbox / "cache" / "stages" / "proofs").glob("*/pool_validated.jsonl"))
        built[sandbox] = {r["question_id"]: r for r in map(json.loads, rows.read_text().splitlines())}
    docker, harbor = built["docker"], built["harbor"]
    assert docker.keys() == harbor.keys() and len(docker) == 13
    same = blocked = 0
    for qid in docker:
        d, h = docker[qid]["proof_report"], harbor[qid]["proof_report"]
        assert h["sandbox"] == "harbor:swe_taskflow_harbor.environment:DockerEnvironment"
        assert evidence(h) == evidence(d), qid
        assert docker[qid]["status"] == harbor[qid]["status"]
        if d["runs"]["base"]["repo_write_blocked"]:   # the deliberate write: refused in both, worded differently
            blocked += 1
            assert h["runs"]["base"]["repo_write_blocked"] and "Permission denied" in h["runs"]["base"]["stderr_excerpt"]
            continue
        differing = {k for k in d if d[k] != h[k]}
        assert differing <= {"sandbox", "cache_key"}, (qid, differing)
        same += 1
    assert same == 12 and blocked == 1


# ------------------------------------------------------------------ the hostile set, through harbor

@pytest.mark.skipif(os.geteuid() != 0, reason="as in test_hostile_sandbox: files owned by root")
def test_root_only_files_stay_unreadable(tmp_path, image):
    repo = make_repo(tmp_path / "repo", {"pub.txt": "public\n", "secret.txt": SECRET + "\n"})
    os.chmod(repo / "secret.txt", 0o600)
    rep = run_proof(repo, "cat pub.txt; cat secret.txt; id -u\n", sandbox="harbor", image=image, config=CFG)
    assert "public" in rep.stdout_excerpt and SECRET not in json.dumps(rep.to_dict())
    assert "Permission denied" in rep.runs["base"]["stderr_excerpt"]
    assert rep.stdout_excerpt.strip().endswith("65534")


def test_a_hostile_repository_runs_nothing_on_the_host_and_its_tree_is_the_hosts(tmp_path, image):
    from builder.proofs.gitsafe import tree_hash

    repo, markers = hostile_repo(tmp_path)
    patch = "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-two\n+three\n"
    rep = run_proof(repo, "cat a.txt\n", sandbox="harbor", image=image, config=CFG, gold_patch=patch)
    assert rep.status == "passed", rep.reason
    assert rep.runs["base"]["tree_sha_before"] == tree_hash(repo)   # hashed in the environment, as on the host
    assert [m.name for m in markers if m.exists()] == []


def test_no_network_and_limits_inside(tmp_path, image):
    repo = make_repo(tmp_path / "repo", {"a.txt": "x\n"})
    rep = run_proof(repo, "cat /sys/class/net/*/operstate 2>/dev/null | sort | tr '\\n' ' '; ls /sys/class/net; "
                    "ulimit -u; head -c 400000 /dev/zero | tr '\\0' y\n", sandbox="harbor", image=image, config=CFG)
    assert rep.runs["base"]["output_limit_hit"] and rep.status == "failed-exit", rep.reason   # as docker's status
    assert rep.reason.startswith("output-limit: stdout passed 262144 bytes")
    assert rep.stdout_excerpt.split()[:3] == ["unknown", "lo", "32"], rep.stdout_excerpt[:80]


def test_a_timeout_kills_the_script_and_what_it_left_running(tmp_path, image):
    slow = Slow(tmp_path)
    rep = run_proof(slow.repo, f"(sleep {slow.seconds} &) ; sleep {slow.seconds}\n", sandbox="harbor", image=image,
                    config=ProofConfig(timeout_s=3))
    assert rep.status == "timeout", rep.reason
    assert slow.running() == [] and proof_containers() == []


def test_kill_9_of_a_proof_run_leaves_nothing_after_the_next_command(tmp_path, image):
    slow = Slow(tmp_path)
    p = cli("proofs", "run", "--repo", str(slow.repo), "--script", slow.slow, "--sandbox", "harbor", "--image", image,
            "--timeout", "600")
    wait_for(slow.running, 120, "the script to start in its environment")
    p.kill()
    p.wait()
    nxt = cli("proofs", "run", "--repo", str(slow.repo), "--script", slow.quick, "--sandbox", "harbor", "--image", image)
    assert nxt.wait(timeout=300) == 0, nxt.stderr.read()
    wait_for(lambda: not slow.running() and not proof_containers(), 60, "the environments to be removed")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_a_proof_run_and_removes_its_environment(tmp_path, image, sig):
    slow = Slow(tmp_path)
    p = cli("proofs", "run", "--repo", str(slow.repo), "--script", slow.slow, "--sandbox", "harbor", "--image", image,
            "--timeout", "600")
    wait_for(slow.running, 120, "the script to start in its environment")
    p.send_signal(sig)
    rc = p.wait(timeout=60)
    assert rc == 128 + sig, (rc, p.stderr.read())
    assert slow.running() == [] and proof_containers() == []


@pytest.mark.slow
def test_kill_9_of_a_build_mid_stage_then_the_rerun_gives_the_uninterrupted_results(tmp_path, image):
    """The build is killed while a proof runs in its environment; the next command leaves nothing running
    and the rerun's validated pool is byte-identical to an uninterrupted build's."""
    slow = Slow(tmp_path)
    example = ROOT / "builder" / "data" / "example"
    rows = [json.loads(line) for line in (example / "pool.jsonl").read_text().splitlines()]
    slow_row = dict(rows[0], question_id="slow-1", proof_script=slow.script)
    (tmp_path / "pool.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [slow_row, *rows[:3]]))
    recipe = (ROOT / "builder" / "releases" / "example.toml").read_text()
    recipe = recipe.replace('"../data/example/pool.jsonl"', f'"{tmp_path / "pool.jsonl"}"')
    recipe = recipe.replace('"../data/example/', f'"{example}/').replace('sandbox = "auto"', 'sandbox = "harbor"')
    recipe = recipe.replace("timeout_s = 30", "timeout_s = 25")
    recipe = recipe.replace("[source]\n", f'[source]\ninstance_ids = ["{rows[0]["instance_id"]}"]\n')
    (tmp_path / "r.toml").write_text(recipe)

    def validated(out: Path) -> str:
        return next((out / "cache" / "stages" / "proofs").glob("*/pool_validated.jsonl")).read_text()

    out = tmp_path / "out"
    p = cli("build", str(tmp_path / "r.toml"), "--out", str(out), "--until", "proofs", "--quiet")
    wait_for(lambda: slow.running() or p.poll() is not None, 600, "the proofs stage")
    assert p.poll() is None, p.stderr.read()
    p.kill()
    p.wait()
    rerun = cli("build", str(tmp_path / "r.toml"), "--out", str(out), "--until", "proofs", "--quiet")
    assert rerun.wait(timeout=600) == 0, rerun.stderr.read()
    assert slow.running() == [] and proof_containers() == []
    fresh = cli("build", str(tmp_path / "r.toml"), "--out", str(tmp_path / "fresh"), "--until", "proofs", "--quiet")
    assert fresh.wait(timeout=600) == 0, fresh.stderr.read()
    assert validated(out) == validated(tmp_path / "fresh")
    statuses = {json.loads(line)["question_id"]: json.loads(line)["proof_report"]["status"]
                for line in validated(out).splitlines()}
    assert statuses["slow-1"] == "timeout" and len(statuses) == 4


def test_environments_that_never_start_are_retried_then_reported_per_item(tmp_path, image):
    """A flaky environment (tests/support/harbor_flaky_env.py) that always fails to start: every item ends as an
    infrastructure error after the bounded retries, none is lost or called a failed proof."""
    from builder.proofs import validate_pool
    from builder.proofs import harbor_runner
    from swe_taskflow.schema import QAItem

    make_repo(tmp_path / "repos" / "owner__proj", {"a.txt": "x\n"})
    items = [QAItem(question_id=f"q{i}", instance_id="owner__proj-1", question="?", reference_answer="r",
                    proof_script=f"echo {i}\n") for i in range(3)]
    sleeps = []
    orig = harbor_runner.prove_tasks

    def fast_backoff(*a, **kw):
        return orig(*a, **{**kw, "sleep": sleeps.append})

    harbor_runner.prove_tasks = fast_backoff
    try:
        result = validate_pool(items, tmp_path / "repos", image=image, sandbox="harbor", config=CFG,
                               harbor={"environment": "tests.support.harbor_flaky_env:SlowFlakyEnvironment",
                                       "environment_kwargs": {"failure_rate": 1.0, "start_latency_s": 0.1},
                                       "concurrency": 2})
    finally:
        harbor_runner.prove_tasks = orig
    assert [q.status for q in result.items] == ["error"] * 3
    assert all("did not start" in q.proof_report["reason"] and "simulated start failure" in q.proof_report["reason"]
               for q in result.items)
    assert sleeps == [2.0, 4.0, 8.0] and result.summary.error == 3
    assert result.summary.sandbox == "harbor:tests.support.harbor_flaky_env:SlowFlakyEnvironment"
    assert proof_containers() == []


def test_the_sandbox_seam_runs_one_script_as_docker_does(tmp_path, image):
    from builder.proofs.run import SANDBOX_ADAPTERS
    from builder.proofs.gitsafe import tree_hash

    repo = make_repo(tmp_path / "repo", {"a.txt": "x\n"})
    script = "cat a.txt; echo oops >&2; exit 3\n"
    docker = SANDBOX_ADAPTERS["docker"].run(repo, script, image=image, config=CFG)
    harbor = SANDBOX_ADAPTERS["harbor"].run(repo, script, image=image, config=CFG)
    assert (harbor.exit_code, harbor.stdout_sha256, harbor.stderr_excerpt, harbor.command) == \
        (docker.exit_code, docker.stdout_sha256, docker.stderr_excerpt, docker.command) == \
        (3, docker.stdout_sha256, "oops\n", ("/bin/sh", "/proof/script"))
    assert harbor.tree_sha_before == harbor.tree_sha_after == tree_hash(repo)


# ------------------------------------------------------------------ the augmentation checks: one environment per task

@pytest.mark.slow
def test_the_example_augmentation_checks_give_the_docker_evidence_in_one_environment(tmp_path, image):
    """The example's own task through the augment stage's checks (its proposed items and the hand-written broken
    ones) in docker and in the harbor sandbox: every item ends the same (status, reason, checks, facts, reference)
    and its proof report carries the same evidence (status, stdout hash, exit codes, tree hashes), the harbor
    sandbox using one environment for all of the task's checks (it used one per check run before), none left."""
    from builder.turns import TemplateWriter, augment_tasks, read_specs
    from builder.turns.registry import PROPOSERS, realize
    from builder.turns.sandbox import CheckSandbox
    from builder.bundled.repo import commit_folder
    from builder.pipeline.repos import example_task
    from builder.split.structural import StructuralSplitter

    task = example_task().task
    repo = tmp_path / "repo"
    assert commit_folder(ROOT / "builder" / "data" / "example" / "repo", repo) == task.base_commit
    specs = read_specs(ROOT / "builder" / "data" / "example" / "augment_specs.jsonl", pool="augment_specs")
    got, started = {}, {}
    for kind in ("docker", "harbor"):
        with CheckSandbox(kind) as sandbox:
            items, _ = augment_tasks([task], {task.instance_id: StructuralSplitter().split(task)},
                                     writer=TemplateWriter(), realize=realize, proposers=PROPOSERS,
                                     sandbox=sandbox, repos={task.instance_id: repo},
                                     images={task.instance_id: image}, hand_specs=specs)
            started[kind] = sandbox.environments_started
        got[kind] = {i.question_id: i.to_dict() for i in items}
    docker, harbor = got["docker"], got["harbor"]
    assert started == {"docker": 0, "harbor": 1} and proof_containers() == []
    assert docker.keys() == harbor.keys()
    assert {i["kind"] for i in docker.values() if i["status"] == "accepted"} >= {"execute", "debug", "review"}
    proved = 0
    for qid, d in docker.items():
        h = harbor[qid]
        for i, name in ((d, "docker"), (h, "harbor:swe_taskflow_harbor.environment:DockerEnvironment")):
            for c in i["checks"]:   # a passed run's detail names the sandbox, then the image
                if c["name"] == "sandbox-run" and c["passed"]:
                    assert c["detail"] == f"{name} {image}", (qid, c)
                    c["detail"] = image
        assert {k: v for k, v in d.items() if k != "proof_report"} == \
            {k: v for k, v in h.items() if k != "proof_report"}, qid
        if d["proof_report"] is not None:
            assert evidence(h["proof_report"]) == evidence(d["proof_report"]), qid
            assert h["proof_report"]["sandbox"] == "harbor:swe_taskflow_harbor.environment:DockerEnvironment"
            proved += 1
    assert proved >= 3


def test_a_signal_during_the_augmentation_checks_removes_the_tasks_environment(tmp_path, image):
    """`augment run --sandbox harbor` interrupted while a task's second check runs in the task's environment (the
    first one ran there): the command exits 130 and no environment, container or script is left."""
    from tests.support.augment_cart import FIX, cart_task
    from builder.bundled.repo import commit_folder

    task = cart_task()
    slow = Slow(tmp_path)
    (tmp_path / "tasks.jsonl").write_text(json.dumps(task.to_dict()) + "\n")
    commit_folder(FIX / "repo", tmp_path / "repos" / task.instance_id)
    specs = [{"item_id": f"x{k}", "instance_id": task.instance_id, "kind": "execute", "command": command,
              "style": "counts", "provenance": "hand-written"} for k, command in
             enumerate(("python3 -m unittest -v", f"sleep {slow.seconds}"))]
    (tmp_path / "specs.jsonl").write_text("".join(json.dumps(s) + "\n" for s in specs))
    p = cli("augment", "run", "--tasks", str(tmp_path / "tasks.jsonl"), "--out", str(tmp_path / "items.jsonl"),
            "--repos", str(tmp_path / "repos"), "--kinds", "planning", "--specs", str(tmp_path / "specs.jsonl"),
            "--sandbox", "harbor", "--image", image)
    wait_for(lambda: slow.running() or p.poll() is not None, 300, "the second check to start in the environment")
    assert p.poll() is None, p.stderr.read()
    assert len(proof_containers()) >= 1
    p.send_signal(signal.SIGINT)
    rc = p.wait(timeout=120)
    assert rc == 130, (rc, p.stderr.read())
    wait_for(lambda: not slow.running() and not proof_containers(), 60, "the environment to be removed")
