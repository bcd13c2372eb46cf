"""Issue 32: a non-root agent inside the example task's container tries every trick on the exported verifiers
and changes no reward, nor steers a root file operation.

The old verifiers kept their state in /var/tmp/swe-taskflow, which the agent (uid 1000) can create first on
every Debian image (world-writable /var/tmp, recreated here as such: the example image has no /var); answer.py
merged every key of the carried file into the final reward; the checkpoint's snapshot and restore went
through the agent's links. Each case runs the first checkpoint (the repository at its base commit: not
resolved) and the answer step after it as root, the agent's tricks before and between them, and compares
with an untouched run.
"""

from __future__ import annotations

import json
import shlex
import subprocess

import pytest

from builder.evaluation.export import CARRY_PATH, export_harbor
from tests.support.containers import docker, idle_container
from tests.support.example_release import CONDITION, build_example_release

pytestmark = pytest.mark.docker

OLD = "/var/tmp/swe-taskflow"     # the old state folder: guessable and world-creatable
NEW = "/var/lib/swe-taskflow"     # the new one: guessable, but under folders only root can write
FORGED = {"reward": 1.0, "resolved": 1.0, "f2p_pass_rate": 1.0, "p2p_pass_rate": 1.0, "answered": 1.0,
          "safe": 1.0, "correct": 1.0, "bonus": 7.0}
SECRET = "root-only-secret-5d1e"


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("trust")
    rel = build_example_release(tmp / "release")
    res = export_harbor(rel, CONDITION, tmp / "out")
    return tmp / "out" / res.tasks[0]["dir"] / "steps"


@pytest.fixture
def container(example_image):
    with idle_container(example_image, "stf-trust") as name:
        # as on a Debian image: a world-writable /var/tmp, and root's own files the agent must never reach
        _root(name, f"mkdir -p /var/tmp && chmod 1777 /var/tmp && echo {SECRET} > /root/secret && "
                    "mkdir -p /srv/victim && echo keep > /srv/victim/keep.txt")
        yield name


def _root(c: str, script: str) -> subprocess.CompletedProcess:
    return docker("exec", "-u", "root", c, "bash", "-c", script)


def _agent(c: str, script: str) -> subprocess.CompletedProcess:
    return docker("exec", "-u", "agent", "-w", "/app", c, "bash", "-c", script, check=False)


def _verify(c: str, tests) -> tuple[subprocess.CompletedProcess, dict | None]:
    """A step's verifier as Harbor runs it (root, its tests/ uploaded now, /logs/verifier root's but 0777, as
    the project's Harbor environment makes it); its reward, or None without one."""
    _root(c, "rm -rf /tests /logs/verifier && mkdir -p /logs/verifier && chmod 777 /logs/verifier")
    docker("cp", str(tests), f"{c}:/tests")
    run = docker("exec", "-u", "root", "-w", "/app", c, "bash", "/tests/test.sh", check=False)
    out = docker("exec", c, "cat", "/logs/verifier/reward.json", check=False)
    return run, (json.loads(out.stdout) if out.returncode == 0 else None)


def _repo(c: str) -> str:
    """Every entry of the agent's repository (owner, mode, kind, a link's target) and its git state."""
    return _agent(c, "find . -path ./.git -prune -o -print | sort | while read -r f; do stat -c '%n %U %a %F' \"$f\"; "
                     "[ -L \"$f\" ] && readlink \"$f\"; done; git status --porcelain=v1 -uall; "
                     "git diff --binary HEAD").stdout


def _root_files(c: str) -> str:
    return _root(c, "ls -lA /root /srv/victim /etc | sed 's/  */ /g'; cat /root/secret /srv/victim/keep.txt").stdout


def _trial(c: str, steps, between: str = "") -> tuple[dict | None, dict | None]:
    """The first checkpoint, then ``between`` as the agent, then the answer step: both rewards."""
    _, ckpt = _verify(c, steps / "turn-01-issue" / "tests")
    if between:
        _agent(c, between)
    _agent(c, "mkdir -p /tmp/answers && echo 'my answer' > /tmp/answers/turn-04-qa.md")
    _, answer = _verify(c, steps / "turn-04-qa" / "tests")
    return ckpt, answer


@pytest.fixture(scope="module")
def honest(exported, example_image):
    """The rewards of an agent that tries nothing (in a container of its own)."""
    with idle_container(example_image, "stf-trust") as name:
        _root(name, "mkdir -p /var/tmp && chmod 1777 /var/tmp")
        ckpt, answer = _trial(name, exported)
    assert ckpt is not None and ckpt["resolved"] == 0.0 and ckpt["reward"] == 0.0
    assert answer == {"answered": 1.0, "reward": 0.0, "resolved": 0.0, "f2p_pass_rate": ckpt["f2p_pass_rate"],
                      "p2p_pass_rate": ckpt["p2p_pass_rate"]}
    return ckpt, answer


def _forge(path: str) -> str:
    return f"echo '{json.dumps(FORGED)}' > {path}"


#: The agent's tricks: (before the first checkpoint, between the checkpoint and the answer step).
TRICKS = {
    # the old folder made first, world-writable; the carried file replaced by a forged one after the checkpoint
    "old-dir-first": (f"mkdir -p {OLD} && chmod 777 {OLD}",
                      f"rm -f {OLD}/last-checkpoint.json; {_forge(OLD + '/last-checkpoint.json')}"),
    # the old folder as a link to a root-owned folder: root's snapshot and carried file would land in it
    "old-dir-link-to-root-folder": (f"ln -s /srv/victim {OLD}", ""),
    # a half-way snapshot planted in the old folder: its app a link to /root (restored into the agent's /app)
    "old-planted-snapshot": (f"mkdir -p {OLD}/snapshot && ln -s /root {OLD}/snapshot/app && "
                             f"touch {OLD}/snapshot/complete", ""),
    # the old folder's snapshot as a link: the checkpoint's rmtree and cp -a go through it
    "old-snapshot-link": (f"mkdir -p {OLD} && ln -s /srv/victim {OLD}/snapshot", ""),
    # the new folder, guessed: every way to make it or put something in it first
    "new-dir-guessed": (f"mkdir -p {NEW}; ln -s /tmp {NEW}; mkdir -p /var/lib/x; "
                        f"{_forge(NEW + '/last-checkpoint.json')}",
                        _forge(NEW + "/last-checkpoint.json")),
    # a process left running that keeps writing a forged reward where the verifiers write theirs
    "background-forger": (f"{_forge('/tmp/forged.json')} && mkdir -p {OLD} && chmod 777 {OLD} && "
                          "(setsid bash -c 'while :; do for f in /logs/verifier/reward.json "
                          f"{OLD}/last-checkpoint.json {NEW}/last-checkpoint.json; do rm -f $f; "
                          "cp /tmp/forged.json $f; done; sleep 0.05; done' </dev/null >/dev/null 2>&1 &)", ""),
    # links in the repository where the snapshot is copied from and restored to
    "links-in-repository": ("ln -s /srv/victim victim-link && ln -s /root/secret secret-link && "
                            "mkdir -p deep && ln -s /srv deep/srv-link", ""),
}


@pytest.mark.parametrize("trick", sorted(TRICKS))
def test_a_non_root_agent_changes_no_reward(exported, container, honest, trick):
    before, between = TRICKS[trick]
    _agent(container, before)
    repo, root_files = _repo(container), _root_files(container)
    ckpt, answer = _trial(container, exported, between)
    if trick == "background-forger":   # it did run all along, writing where it could
        assert "bonus" in _agent(container, f"cat {OLD}/last-checkpoint.json").stdout
    assert (ckpt, answer) == honest, f"{trick}: the agent changed a reward"
    assert _root_files(container) == root_files, f"{trick}: a root file operation went through the agent's link"
    assert _repo(container) == repo, f"{trick}: the checkpoint left the agent's repository changed"
    assert _agent(container, f"grep -rsl {SECRET} /app /tmp /var/tmp /logs").stdout == ""   # root's file unread
    state = _root(container, f"stat -c '%U %a %F' {NEW}").stdout.split("\n")[0]
    assert state == "root 700 directory", state      # root's own, private, a real folder
    assert _agent(container, f"ls {NEW} || cat {NEW}/last-checkpoint.json").returncode != 0


def test_carried_file_gives_only_its_known_keys(exported, container, honest):
    """Were the carried file ever written by someone else (here root plants it), only the checkpoint's known
    keys with a value in [0, 1] are taken; the rest is ignored and named in carry.json."""
    _verify(container, exported / "turn-01-issue" / "tests")
    planted = {"reward": 0.0, "resolved": 0.0, "f2p_pass_rate": 5.0, "p2p_pass_rate": True, "answered": 1.0,
               "safe": 1.0, "bonus": 7.0}
    _root(container, f"echo '{json.dumps(planted)}' > {CARRY_PATH}")
    _agent(container, "mkdir -p /tmp/answers && echo 'my answer' > /tmp/answers/turn-04-qa.md")
    _, answer = _verify(container, exported / "turn-04-qa" / "tests")
    assert answer == {"answered": 1.0, "reward": 0.0, "resolved": 0.0}
    report = json.loads(docker("exec", container, "cat", "/logs/verifier/carry.json").stdout)
    assert report["accepted"] == ["resolved", "reward"]
    assert sorted(report["ignored"]) == ["answered (not a carried key)", "bonus (not a carried key)",
                                         "f2p_pass_rate", "p2p_pass_rate", "safe (not a carried key)"]


@pytest.mark.parametrize("how", ["world-writable", "agent-owned", "link"])
def test_a_state_folder_that_fails_a_check_is_refused_loudly(exported, container, how):
    """Only root could have made it so (a broken image): the checkpoint refuses, saying why, and gives no reward."""
    make = {"world-writable": f"mkdir -p {NEW} && chmod 777 {NEW}",
            "agent-owned": f"mkdir -p {NEW} && chown agent {NEW}",
            "link": f"mkdir -p /var/lib && ln -s /srv/victim {NEW}"}[how]
    _root(container, make)
    run, reward = _verify(container, exported / "turn-01-issue" / "tests")
    assert run.returncode != 0 and reward is None
    assert NEW in run.stderr and "refusing" in run.stderr
    assert _root(container, "ls /srv/victim").stdout.split() == ["keep.txt"]


#: Planted by the agent in its repository: code the checkpoint runs when it runs the tests. As root (before),
#: it left a process that kept writing a forged carried checkpoint into root's state folder (the answer step's
#: reward became 1.0) and copied the hidden tests where the agent reads them next step.
PLANTED = r'''
import os, shutil, subprocess, unittest

CARRY = "{CARRY_PATH}"

FAKE = ("def parse_unittest(text):\n    import re\n    return {m: 'passed' for m in "
        "re.findall(r'[\\w/.]+::[\\w:]+', open('/tests/checkpoint.json').read())}\n")


class Planted(unittest.TestCase):
    def test_planted(self):
        for path, text in (("/tests/testlog.py", FAKE), ("/logs/verifier/reward.json", '{"reward": 1.0}')):
            try:
                with open(path, "w") as fh:
                    fh.write(text)
            except OSError:
                pass
        for src in ("/tests", "/app/tests"):
            try:
                shutil.copytree(src, "/tmp/leak" + src.replace("/", "-"))
            except OSError:
                pass
        forge = "while :; do echo '%s' > %s; sleep 0.05; done" % ('{"reward": 1.0, "resolved": 1.0}', CARRY)
        subprocess.Popen(["sh", "-c", forge], start_new_session=True, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
'''


#: The agent's (uid 1000) processes that still run (zombies left out: the container's init never reaps them).
LIVE_AGENT_PROCESSES = """
import os
live = []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        status = dict(line.split(":", 1) for line in open("/proc/%s/status" % pid) if ":" in line)
    except OSError:
        continue
    if "1000" in status["Uid"].split() and not status["State"].strip().startswith("Z"):
        live.append(open("/proc/%s/cmdline" % pid).read().replace("\\0", " ").strip())
print(live)
"""


def test_the_repository_tests_run_as_the_agent_and_leave_nothing_behind(exported, container, honest):
    """The tests are the agent's code: run as its user they cannot reach the verifier, the hidden tests they read
    do not outlive the run, and no process of theirs survives it."""
    planted = PLANTED.replace("{CARRY_PATH}", CARRY_PATH)
    _agent(container, f"cat > tests/test_zz_planted.py <<'EOF'\n{planted}\nEOF")
    _agent(container, "sleep 600 </dev/null >/dev/null 2>&1 &")       # the agent's own, left running
    repo = _repo(container)
    ckpt, answer = _trial(container, exported)
    assert (ckpt, answer) == honest, "the planted test changed a reward"
    assert _repo(container) == repo
    assert _root(container, "ls -d /tmp/leak* 2>/dev/null || true").stdout == ""
    assert _root(container, f"python3 -c {shlex.quote(LIVE_AGENT_PROCESSES)}").stdout == "[]\n"
    out = json.loads(docker("exec", container, "cat", "/logs/verifier/reward.json").stdout)
    assert out == answer
