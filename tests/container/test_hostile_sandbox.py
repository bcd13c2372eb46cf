"""Issue 11, sandbox side: the three ways out of the proof sandbox, and what interrupted runs leave.

Each case failed before its fix. Escapes: a pool row choosing the mounted folder, bubblewrap started
as root giving host root inside, a hostile repository's git configuration running on the host. Leaks:
``kill -9``, SIGTERM, SIGHUP or Ctrl-C of a proof run or a build must leave no container, cgroup or
staged folder once a second command has run. Docker cases skip without a daemon (fail in CI); root
cases skip when not root.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from builder.proofs import ProofConfig, run_proof

ROOT = Path(__file__).resolve().parents[2]
CFG = ProofConfig(mem_mb=128, pids=32, tmpfs_mb=8, max_output_bytes=256 << 10, timeout_s=10)
SECRET = "TOPSECRET-4f1c"
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the escape needs the tests to run as root")


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=repo, check=True,
                   capture_output=True)


def make_repo(path: Path, files: dict[str, str]) -> Path:
    path.mkdir(parents=True)
    for name, text in files.items():
        (path / name).write_text(text)
    git(path, "init", "-q")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "init")
    return path


@pytest.fixture()
def sandbox(request) -> str:
    if request.param == "docker":
        request.getfixturevalue("docker_available")
        from builder.proofs import build_test_image

        build_test_image()
    elif shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    return request.param


BOTH = pytest.mark.parametrize("sandbox", [pytest.param("docker", marks=pytest.mark.docker), "bwrap"],
                               indirect=True)


# ------------------------------------------------------------------ escapes

@needs_bwrap
@pytest.mark.parametrize("how", ["absolute", "dotdot", "link"])
def test_a_pool_row_cannot_choose_the_mounted_folder(tmp_path, how):
    from builder.proofs import validate_pool_file

    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "secret.txt").write_text(SECRET)
    repos = tmp_path / "repos"
    make_repo(repos / "owner__proj", {"a.py": "x = 1\n"})
    (repos / "linked").symlink_to(secret)
    iid = {"absolute": str(secret), "dotdot": "../secret", "link": "linked"}[how]
    pool = tmp_path / "pool.jsonl"
    pool.write_text(json.dumps({"question_id": "q1", "instance_id": iid, "question": "?", "reference_answer": "r",
                                "proof_script": "cat secret.txt\n"}) + "\n")
    summary = validate_pool_file(pool, repos, tmp_path / "out.jsonl", sandbox="bwrap", config=CFG, progress=False)
    out = (tmp_path / "out.jsonl").read_text()
    row = json.loads(out)
    assert SECRET not in out and summary["accepted"] == 0
    assert row["status"] == "rejected" and "refused" in row["reason"] and "instance_id" in row["reason"], row


def test_verify_reprove_never_uses_a_checkout_outside_repos(tmp_path):
    from swe_taskflow.verify import find_repo

    (tmp_path / "secret").mkdir()
    (tmp_path / "repos").mkdir()
    assert find_repo(tmp_path / "repos", {"instance_id": "../secret", "repo": "../secret"}) is None
    assert find_repo(tmp_path / "repos", {"instance_id": str(tmp_path / "secret"), "repo": "a/b"}) is None


@needs_root
@BOTH
def test_root_only_files_stay_unreadable_when_started_as_root(tmp_path, sandbox):
    repo = make_repo(tmp_path / "repo", {"pub.txt": "public\n", "secret.txt": SECRET + "\n"})
    os.chmod(repo / "secret.txt", 0o600)   # owned by root, like the repository's other files
    seen_uids: list[int] = []
    stop = threading.Event()

    def watch() -> None:   # the sandboxed script as the host sees it: which uid does it run as?
        while not stop.is_set():
            for status in glob.glob("/proc/[0-9]*/status"):
                try:
                    text = Path(status).read_text()
                    cmd = Path(status).with_name("cmdline").read_bytes()
                except OSError:
                    continue
                if b"/proof/script" in cmd and b"bwrap" not in cmd and b"docker" not in cmd:
                    seen_uids.append(int(text.split("\nUid:")[1].split()[0]))
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    rep = run_proof(repo, "cat pub.txt; cat secret.txt; sleep 1\n", sandbox=sandbox, config=CFG, timeout_s=10)
    stop.set()
    watcher.join()
    assert rep.status == "passed" or rep.status == "failed-exit", rep.reason
    assert "public" in rep.stdout_excerpt and SECRET not in rep.stdout_excerpt
    assert SECRET not in json.dumps(rep.to_dict())
    assert "Permission denied" in rep.runs["base"]["stderr_excerpt"]
    if sandbox == "bwrap":
        assert seen_uids and set(seen_uids) == {65534}, seen_uids   # host uid 65534, never 0


def hostile_repo(tmp_path: Path) -> tuple[Path, list[Path]]:
    """A repository whose own git config and attributes would run commands in `git add` / `git apply`."""
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n", "b.txt": "two\n"})
    markers = [tmp_path / f"PWNED-{k}" for k in ("clean", "process", "fsmonitor", "hook")]
    with open(repo / ".git" / "config", "a") as fh:
        fh.write(f'[filter "x"]\n\tclean = "touch {markers[0]}; cat"\n\tsmudge = cat\n\trequired = true\n'
                 f'[filter "y"]\n\tprocess = "touch {markers[1]}"\n'
                 f'[core]\n\tfsmonitor = "touch {markers[2]}; echo"\n\thooksPath = hooks\n')
    (repo / ".gitattributes").write_text("*.txt filter=x\nb.txt filter=y\n")
    (repo / "hooks").mkdir()
    for hook in ("pre-commit", "post-checkout", "post-index-change", "pre-applypatch", "post-applypatch"):
        (repo / "hooks" / hook).write_text(f"#!/bin/sh\ntouch {markers[3]}\n")
        os.chmod(repo / "hooks" / hook, 0o755)
    (repo / "a.txt").write_text("one, changed\n")   # a dirty file: git add must read (and filter) it
    return repo, markers


def test_a_hostile_repository_runs_nothing_on_the_host(tmp_path):
    from builder.proofs.gitsafe import patched_copy, tree_hash

    repo, markers = hostile_repo(tmp_path)
    first = tree_hash(repo)
    assert first == tree_hash(repo) and len(first) == 40
    patch = "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-two\n+three\n"
    with patched_copy(repo, patch) as tmp:
        assert (Path(tmp) / "repo" / "b.txt").read_text() == "three\n"
    assert [m.name for m in markers if m.exists()] == []


@needs_bwrap
def test_stderr_flood_is_reported_as_stderr(tmp_path):
    repo = make_repo(tmp_path / "repo", {"a.txt": "x\n"})
    rep = run_proof(repo, "head -c 2000000 /dev/zero >&2; echo done\n", sandbox="bwrap", config=CFG, timeout_s=10)
    assert rep.status == "failed-exit" and "stderr" in rep.reason and "stdout" not in rep.reason, rep.reason


# ------------------------------------------------------------------ leaks on interruption

def cli(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "builder.cli", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


class Slow:
    """A proof that sleeps with a unique duration, so its processes, containers and staged copies can be
    found on this host whatever the code under test names them (before the fix nothing carried an owner)."""

    def __init__(self, tmp_path: Path) -> None:
        self.seconds = 300 + int.from_bytes(os.urandom(2), "big") % 10_000
        self.script = f"echo started; sleep {self.seconds}\n"
        self.repo = make_repo(tmp_path / "repo", {"a.txt": "x\n"})
        (tmp_path / "slow.sh").write_text(self.script)
        (tmp_path / "quick.sh").write_text("echo ok\n")
        self.slow, self.quick = str(tmp_path / "slow.sh"), str(tmp_path / "quick.sh")
        self.mount_roots = [str(self.repo.resolve())]   # a container mounting any of these is ours
        self.cgroups_before = set(self._cgroups())

    @staticmethod
    def _cgroups() -> list[str]:
        return glob.glob("/sys/fs/cgroup/pids/swe-taskflow-*") + glob.glob("/sys/fs/cgroup/swe-taskflow-*")

    def running(self) -> list[str]:
        hits = []
        for cmd in glob.glob("/proc/[0-9]*/cmdline"):
            try:
                if f"sleep {self.seconds}".encode() in Path(cmd).read_bytes().replace(b"\0", b" "):
                    hits.append(cmd)
            except OSError:
                pass
        return hits

    def containers(self) -> list[str]:
        if not shutil.which("docker"):
            return []
        ids = subprocess.run(["docker", "ps", "-aq", "--filter", "label=swe-taskflow.proof"], capture_output=True,
                             text=True).stdout.split()
        out = []
        for cid in ids:
            info = subprocess.run(["docker", "inspect", cid, "--format", "{{json .Mounts}}"], capture_output=True,
                                  text=True).stdout
            if any(root in info for root in self.mount_roots):
                out.append(cid)
        return out

    def staged(self) -> list[str]:
        found = []
        for path in glob.glob("/tmp/swe-taskflow-*/**/script", recursive=True) + glob.glob("/tmp/swe-taskflow-*/script"):
            try:
                if Path(path).read_text() == self.script:
                    found.append(path)
            except OSError:
                pass
        return found

    def leftovers(self, pid: int) -> dict[str, list[str]]:
        new_cgroups = [c for c in self._cgroups() if c not in self.cgroups_before and (
            f"-{pid}." in c or not (Path(c) / "cgroup.procs").read_text().strip())]
        found = {"running": self.running(), "containers": self.containers(), "staged": self.staged(),
                 "scratch": glob.glob(f"/tmp/swe-taskflow-{pid}.*"), "cgroups": new_cgroups}
        return {k: v for k, v in found.items() if v}


def wait_for(pred, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.2)


@BOTH
def test_kill_9_of_a_proof_run_leaves_nothing_after_the_next_command(sandbox, tmp_path):
    slow = Slow(tmp_path)
    p = cli("proofs", "run", "--repo", str(slow.repo), "--script", slow.slow, "--sandbox", sandbox, "--timeout", "600")
    wait_for(slow.running, 120, "the sandboxed script to start")
    p.kill()
    p.wait()
    nxt = cli("proofs", "run", "--repo", str(slow.repo), "--script", slow.quick, "--sandbox", sandbox)
    assert nxt.wait(timeout=300) == 0, nxt.stderr.read()
    assert slow.leftovers(p.pid) == {}


@pytest.mark.parametrize("sandbox, sig", [pytest.param("docker", signal.SIGINT, marks=pytest.mark.docker),
                                          pytest.param("docker", signal.SIGTERM, marks=pytest.mark.docker),
                                          pytest.param("docker", signal.SIGHUP, marks=pytest.mark.docker),
                                          ("bwrap", signal.SIGINT), ("bwrap", signal.SIGTERM)], indirect=["sandbox"])
def test_a_signal_stops_a_proof_run_at_once_and_cleans_up(sandbox, sig, tmp_path):
    slow = Slow(tmp_path)
    p = cli("proofs", "run", "--repo", str(slow.repo), "--script", slow.slow, "--sandbox", sandbox, "--timeout", "600")
    wait_for(slow.running, 120, "the sandboxed script to start")
    t0 = time.monotonic()
    p.send_signal(sig)
    try:
        rc = p.wait(timeout=30)   # before: Ctrl-C waited for the 600 s timeout
    except subprocess.TimeoutExpired:
        p.kill()
        pytest.fail(f"{sig.name} did not stop the proof run within 30 s")
    assert time.monotonic() - t0 < 30
    assert slow.leftovers(p.pid) == {}, "left behind without a second command"
    assert rc == 128 + sig, (rc, p.stderr.read())


@pytest.mark.slow
@BOTH
def test_kill_9_of_a_build_during_proofs_leaves_nothing_after_the_rerun(tmp_path, sandbox):
    """The build is killed while a proof sleeps; rerunning it (any build command) sweeps what it left."""
    slow = Slow(tmp_path)
    example = ROOT / "builder" / "data" / "example"
    row = json.loads((example / "pool.jsonl").read_text().splitlines()[0])
    row.update(question_id="slow-1", proof_script=slow.script)
    (tmp_path / "pool.jsonl").write_text(json.dumps(row) + "\n")
    recipe = (ROOT / "builder" / "releases" / "example.toml").read_text()
    recipe = recipe.replace('"../data/example/pool.jsonl"', f'"{tmp_path / "pool.jsonl"}"')
    recipe = recipe.replace('"../data/example/', f'"{example}/').replace('sandbox = "auto"', f'sandbox = "{sandbox}"')
    recipe = recipe.replace("timeout_s = 30", "timeout_s = 600")
    recipe = recipe.replace("[source]\n", f'[source]\ninstance_ids = ["{row["instance_id"]}"]\n')   # the pool's task
    (tmp_path / "r.toml").write_text(recipe)
    out = tmp_path / "out"
    slow.mount_roots.append(str(out.resolve()))
    p = cli("build", str(tmp_path / "r.toml"), "--out", str(out), "--quiet")
    wait_for(lambda: slow.running() or p.poll() is not None, 600, "the proofs stage")
    assert p.poll() is None, p.stderr.read()
    p.kill()
    p.wait()
    nxt = cli("build", str(tmp_path / "r.toml"), "--out", str(out), "--until", "ingest", "--quiet")
    assert nxt.wait(timeout=300) == 0, nxt.stderr.read()
    assert slow.leftovers(p.pid) == {}
    staged = [str(x) for x in (out / "cache" / "tmp").glob("*")] + [str(x) for x in out.glob(".*.tmp-*")] + \
        [str(x) for x in (out / "cache" / "work").glob(".repos-*")]
    assert staged == []
