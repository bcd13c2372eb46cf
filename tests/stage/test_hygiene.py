"""Owners of leftovers: only a dead process of this host is swept, never one that cannot be judged."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from swe_taskflow import hygiene


def test_this_process_is_alive_and_a_finished_one_is_dead():
    me = hygiene.owner_id()
    assert me.startswith(f"{os.getpid()}.") and not hygiene.owner_dead(me)
    child = subprocess.run([sys.executable, "-c", "from swe_taskflow import hygiene; print(hygiene.owner_id())"],
                           capture_output=True, text=True, check=True).stdout.strip()
    assert child != me and hygiene.owner_dead(child)


@pytest.mark.parametrize("change", ["boot", "namespace", "garbage"])
def test_an_owner_from_elsewhere_is_never_judged_dead(change):
    pid, rest = hygiene.owner_id().split(".", 1)
    start, where = rest.split("@")
    boot, ns = where.split(".")
    other = {"boot": f"{os.getpid() + 999_999}.{start}@{'f' * 12}.{ns}",
             "namespace": f"{os.getpid() + 999_999}.{start}@{boot}.1",
             "garbage": "not-an-owner"}[change]
    assert not hygiene.owner_dead(other)


def test_a_reused_pid_is_a_different_owner():
    pid, rest = hygiene.owner_id().split(".", 1)
    start, where = rest.split("@")
    assert hygiene.owner_dead(f"{pid}.{int(start) + 1}@{where}")


def test_sweep_removes_only_dead_owners_folders(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "from swe_taskflow import hygiene; print(hygiene.owner_id())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    keep = [tmp_path / f"swe-taskflow-{hygiene.owner_id()}", tmp_path / "swe-taskflow-proof-abc123",
            tmp_path / f"swe-taskflow-{dead.split('@')[0]}@ffffffffffff.1"]
    gone = tmp_path / f"swe-taskflow-{dead}"
    for p in keep + [gone]:
        (p / "sub").mkdir(parents=True)
    assert hygiene.sweep_folders(tmp_path) == [str(gone)]
    assert all(p.exists() for p in keep) and not gone.exists()


def test_bwrap_as_non_root_binds_the_repository_directly(monkeypatch):
    """Only root needs the unshare + setpriv step; a normal user's bwrap already runs as that user."""
    from builder.proofs import ProofConfig
    from builder.proofs import bwrap_runner

    monkeypatch.setattr(bwrap_runner.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(bwrap_runner, "bwrap_available", lambda: True)
    argv = bwrap_runner.bwrap_command("/r", "/s", ["/bin/sh", "/proof/script"], ProofConfig())
    assert "unshare" not in argv and f"--reuid={bwrap_runner.NOBODY}" not in argv
    assert argv[argv.index("/r") - 1] == "--ro-bind" and argv[argv.index("/r") + 1] == "/repo"
    monkeypatch.setattr(bwrap_runner.os, "geteuid", lambda: 0)
    argv = bwrap_runner.bwrap_command("/r", "/s", ["/bin/sh", "/proof/script"], ProofConfig(), mounts="/m")
    assert argv.index("unshare") < argv.index(f"--reuid={bwrap_runner.NOBODY}") < argv.index("bwrap")
    assert argv[argv.index("/m/repo", argv.index("bwrap")) + 1] == "/repo"


class _Container:
    def __init__(self, cid: str, owner: str):
        self.id, self.labels, self.removed = cid, {hygiene.OWNER_LABEL: owner}, False

        class _Image:
            labels: dict = {}
        self.image = _Image()

    def remove(self, force=False):
        self.removed = force


class _Containers:
    """docker SDK's ContainerCollection.list as documented: it inspects every listed container, and one
    removed in between raises NotFound unless ``ignore_removed=True`` (then it is left out)."""

    def __init__(self, alive: list, vanished: int):
        self.alive, self.vanished = alive, vanished

    def list(self, all=False, filters=None, ignore_removed=False):   # noqa: A002 - the SDK's name
        if self.vanished and not ignore_removed:
            raise LookupError("404 Client Error: Not Found (no such container)")
        return list(self.alive)


def test_sweep_survives_a_container_removed_by_another_process_meanwhile():
    dead = subprocess.run([sys.executable, "-c", "from swe_taskflow import hygiene; print(hygiene.owner_id())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    mine, left = _Container("a" * 64, hygiene.owner_id()), _Container("b" * 64, dead)

    class Client:
        containers = _Containers([mine, left], vanished=1)

    assert hygiene.sweep_containers(Client()) == ["b" * 12]
    assert left.removed and not mine.removed
