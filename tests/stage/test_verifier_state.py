"""Issue 32, on the host (no Docker): the exported verifiers' state checks, as this user.

The answer verifier takes only the carried checkpoint's known keys, and only from a folder no one else
can change; it never writes its outputs through a link. The Docker test
(tests/container/test_verifier_trust.py) has a non-root agent try the same in the example's container.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from builder.evaluation.export import export_harbor
from tests.support.example_release import CONDITION, build_example_release

FORGED = {"reward": 1.0, "resolved": 0.0, "f2p_pass_rate": 2.5, "p2p_pass_rate": "1", "answered": 1.0,
          "safe": 1.0, "bonus": 7.0}


@pytest.fixture(scope="module")
def answer_tests(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("vstate")
    res = export_harbor(build_example_release(tmp / "release"), CONDITION, tmp / "out")
    return tmp / "out" / res.tasks[0]["dir"] / "steps" / "turn-04-qa" / "tests"


def _answer(tests: Path, tmp: Path, carry: Path) -> tuple[subprocess.CompletedProcess, dict]:
    answer = tmp / "answer.md"
    answer.write_text("my answer\n")
    # agent_user None: this host has no agent to stop (tests/container/test_verifier_trust.py stops a real one)
    cfg = dict(json.loads((tests / "answer.json").read_text()), answer_path=str(answer), carry_path=str(carry),
               agent_user=None)
    conf = tmp / "answer.json"
    conf.write_text(json.dumps(cfg))
    logs = tmp / "logs"
    proc = subprocess.run([sys.executable, str(tests / "answer.py"), str(conf)], capture_output=True, text=True,
                          env={**os.environ, "STF_VERIFIER_DIR": str(logs)}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc, json.loads((logs / "reward.json").read_text())


def _private(path: Path) -> Path:
    path.mkdir(mode=0o700)
    return path


def test_only_the_known_carried_keys_reach_the_reward(answer_tests, tmp_path):
    carry = _private(tmp_path / "state") / "last-checkpoint.json"
    carry.write_text(json.dumps(FORGED))
    proc, reward = _answer(answer_tests, tmp_path, carry)
    assert reward == {"answered": 1.0, "reward": 1.0, "resolved": 0.0}
    report = json.loads((tmp_path / "logs" / "carry.json").read_text())
    assert report["accepted"] == ["resolved", "reward"]
    assert sorted(report["ignored"]) == ["answered (not a carried key)", "bonus (not a carried key)",
                                         "f2p_pass_rate", "p2p_pass_rate", "safe (not a carried key)"]
    assert "bonus" in proc.stderr     # reported, not silently dropped


@pytest.mark.parametrize("how", ["open-parent", "open-folder", "link"])
def test_a_carried_file_anyone_else_could_change_is_ignored(answer_tests, tmp_path, how):
    """Under a folder others can write (not sticky), in a folder that is not private, or a link: not read."""
    real = _private(tmp_path / "real") / "c.json"
    real.write_text(json.dumps({"reward": 1.0, "resolved": 1.0}))
    if how == "open-parent":
        opened = tmp_path / "open"
        opened.mkdir()
        opened.chmod(0o777)
        carry = _private(opened / "state") / "c.json"
        carry.write_text(real.read_text())
    elif how == "open-folder":
        (tmp_path / "state").mkdir()
        (tmp_path / "state").chmod(0o777)
        carry = tmp_path / "state" / "c.json"
        carry.write_text(real.read_text())
    else:
        carry = _private(tmp_path / "state") / "c.json"
        carry.symlink_to(real)
    _, reward = _answer(answer_tests, tmp_path, carry)
    assert reward == {"answered": 1.0}
    report = json.loads((tmp_path / "logs" / "carry.json").read_text())
    assert report["accepted"] == [] and report["problem"]


def test_outputs_never_go_through_a_link_and_a_stale_reward_is_gone(answer_tests, tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    logs.chmod(0o777)                          # as Harbor leaves it
    victim = tmp_path / "victim.txt"
    victim.write_text("keep\n")
    (logs / "reward.json").symlink_to(victim)
    (logs / "answer.md").symlink_to(victim)
    _, reward = _answer(answer_tests, tmp_path, tmp_path / "none" / "c.json")
    assert victim.read_text() == "keep\n"
    assert not (logs / "reward.json").is_symlink() and reward == {"answered": 1.0}
    assert (logs / "answer.md").read_text() == "my answer\n"
    assert logs.stat().st_mode & 0o777 == 0o755   # closed to everyone but its owner


def test_the_state_folder_is_refused_under_a_folder_others_can_write(answer_tests, tmp_path):
    spec = importlib.util.spec_from_file_location("stf_verifier_state", answer_tests / "verifier_state.py")
    vs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(vs)
    opened = tmp_path / "open"
    opened.mkdir()
    opened.chmod(0o777)
    with pytest.raises(vs.StateError, match="only root can change"):
        vs.state_dir(str(opened / "state"))
    assert not (opened / "state").exists()
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)                      # like /tmp: the entry below is checked instead
    made = Path(vs.state_dir(str(sticky / "state")))
    assert made.is_dir() and made.stat().st_mode & 0o777 == 0o700
    (sticky / "state").chmod(0o755)
    with pytest.raises(vs.StateError, match="private folder"):
        vs.state_dir(str(sticky / "state"))
