"""DockerEnvironment's resident command helper on real containers of the example's image.

Through Harbor's environment API (run in Harbor's venv by tests/support/harbor_helper_probe.py): a command
run by the helper sees exactly what the same command sees through a plain Docker exec (environment, user
and groups, capabilities, no-new-privileges, umask, folder, session, pipes, signal dispositions, exit code),
where the helper cannot be exact it hands the command to docker exec; uploads never write through a link
the agent planted, downloads equal get_archive's; a timeout kills the command's process group; a helper
killed with SIGKILL, an image without python3 and ``command_helper=false`` all leave plain execs.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

pytestmark = [pytest.mark.harbor, pytest.mark.docker]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def probe(harbor_venv, example_image, tmp_path_factory) -> dict:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HARBOR_TELEMETRY": "0"}
    proc = subprocess.run([str(harbor_venv / "bin" / "python"), str(ROOT / "tests/support/harbor_helper_probe.py"),
                           example_image, str(tmp_path_factory.mktemp("helper") / "work")],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_command_sees_what_docker_exec_shows_it(probe):
    assert probe["helper_started"]
    assert probe["differences"] == [] and all(probe["same_as_docker_exec"])
    assert probe["served_by_helper"] == 6          # the six exact cases ran in the helper, the rest fell back
    seen = probe["agent_seen"]["stdout"]           # the non-root agent: its groups, no capabilities, no new privs
    assert "uid=1000(agent) gid=1000(agent) groups=29(audio),44(video),1000(agent)" in seen
    assert {"CapEff:\t0000000000000000", "NoNewPrivs:\t1", "HOME=/home/agent", "PATH=/usr/bin:/bin",
            "session-leader", "two-pipes", "/dev/null", "to-stderr"} <= set(seen)
    assert probe["agent_seen"]["code"] == 7


def test_output_streams_and_concurrent_commands(probe):
    assert probe["big_output"] == 3_000_000
    assert probe["streamed"] == ["one\ntwo\n", "one\ntwo\n", ["stdout"]]
    assert probe["concurrent"] == ["0\n", "1\n", "2\n", "3\n"]
    assert probe["signal_code"] == 137             # killed by a signal: 128 + 9, as docker exec reports it


def test_left_behind_processes_and_timeouts(probe):
    assert probe["late_output"] == "now\nlate\n"    # output of what it left running, within the grace
    assert probe["detached"] == "quick\n" and probe["detached_s"] < 1.5
    assert probe["timeout"] == "Command timed out after 1 seconds" and probe["timeout_s"] < 5
    assert probe["after_timeout"] == "checked\n"    # the command and its background child were SIGKILLed


def test_files_move_as_the_docker_api_moves_them(probe):
    up = probe["uploads"]
    assert up["helper"] == up["docker"]
    assert up["helper"].startswith("precious\n")   # the planted link was replaced, its target untouched
    assert "750 root regular file" in up["helper"] and up["helper"].endswith("ran\n")
    assert probe["downloads_by_helper"] == 2 and probe["downloads_same"]
    assert probe["download_listing"] == [["d", "dir"], ["d/a.txt", "0o644"], ["d/big.txt", "0o644"],
                                         ["d/e", "dir"], ["d/e/b.sh", "0o755"]]   # no link, no fifo


def test_without_a_helper_every_call_is_a_docker_exec(probe):
    assert probe["after_sigterm"] == [True, "ok\n"]         # a `pkill python3` does not end it
    assert probe["after_sigkill"] == [False, "ok\n", 1]     # SIGKILL does; the next command is a docker exec
    assert probe["no_python"] == [None, "ok\n"]
    assert probe["helper_off"] == [None, "ok\n", 0]         # --ek command_helper=false
