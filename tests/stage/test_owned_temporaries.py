"""Every rewrite is a swap and every temporary folder is owned (issue 32).

A release rewritten in place (`trajectories import`, `evaluate import`) used to be removed before the new one
was in: an interrupt there lost it. Temporary folders of push, export harbor, evaluate import/view-jobs, the
release writer, swebench_specs, the trajectory importer and verify ORG/NAME carried no owner tag, so nothing
swept them after a kill -9 (one held the hidden tests of a half-written export). Now one helper
(swe_taskflow.owned.owned_temp_dir) names and records every one, and the next command of any kind sweeps
the folders of dead owners; swap_dir puts the old folder aside, the new one in, then removes the old.
"""

from __future__ import annotations

import ast
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from builder.release.trajectories import add_trajectories
from swe_taskflow.verify import verify_folder
from tests.support.synthetic import small_release

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _dead_owner() -> str:
    return subprocess.run([sys.executable, "-c", "from swe_taskflow.owned import owner_id; print(owner_id())"],
                          capture_output=True, text=True, check=True, env=ENV).stdout.strip()


def _next_command() -> subprocess.CompletedProcess:
    """Any command: this one fails at once (no such release), after the sweep every command does first."""
    return subprocess.run([sys.executable, "-m", "builder.cli", "verify", "/nonexistent/h32ops-release"],
                          capture_output=True, text=True, env=ENV, timeout=120)


def _release(root: Path) -> Path:
    return small_release(root, name="swapped", version="v1.0", target="target.json",
                         provenance={"source": {"benchmark": "hand-written"}})


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# ------------------------------------------------------------------------------------------ swaps

def test_an_interrupted_in_place_rewrite_keeps_the_release(tmp_path, monkeypatch):
    """`trajectories import` rewrites the release in place: an interrupt as the new copy moves in loses nothing."""
    rel = _release(tmp_path)
    before = _tree(rel)
    real = os.replace

    def interrupted(src, dst, *a, **k):
        if Path(dst) == rel and ".old-" not in Path(src).name:
            raise KeyboardInterrupt("injected between moving the old release aside and the new one in")
        return real(src, dst, *a, **k)

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        add_trajectories(rel, [])
    monkeypatch.setattr(os, "replace", real)
    assert _tree(rel) == before and verify_folder(rel).ok
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rel", "target.json"]   # no copy left beside it


@pytest.mark.parametrize("step", [1, 2])
def test_swap_interrupted_at_either_rename_leaves_old_or_new(tmp_path, monkeypatch, step):
    from swe_taskflow import owned

    dest, new = tmp_path / "dest", tmp_path / "new"
    dest.mkdir(), new.mkdir()
    (dest / "f").write_text("old"), (new / "f").write_text("new")
    real, calls = os.replace, []

    def replace(src, dst):
        calls.append(1)
        if len(calls) == step:
            raise KeyboardInterrupt
        return real(src, dst)

    monkeypatch.setattr(owned.os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        owned.swap_dir(new, dest)
    monkeypatch.setattr(owned.os, "replace", real)
    assert (dest / "f").read_text() == "old" and (new / "f").read_text() == "new"
    owned.swap_dir(new, dest)
    assert (dest / "f").read_text() == "new" and not new.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dest"]


def test_a_swap_killed_between_its_renames_is_put_back_by_the_next_command(tmp_path):
    dest, new = tmp_path / "dest", tmp_path / "new"
    dest.mkdir(), new.mkdir()
    (dest / "f").write_text("old"), (new / "f").write_text("new")
    child = subprocess.run([sys.executable, "-c", f"""
import os, signal
from swe_taskflow import owned
real = os.replace
def replace(src, dst):
    real(src, dst)
    os.kill(os.getpid(), signal.SIGKILL)   # kill -9 right after the old copy went aside
owned.os.replace = replace
owned.swap_dir({str(new)!r}, {str(dest)!r})
"""], env=ENV, capture_output=True, text=True)
    assert child.returncode == -signal.SIGKILL
    assert not dest.exists() and [p.name for p in tmp_path.iterdir() if ".old-" in p.name]
    _next_command()
    assert (dest / "f").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dest", "new"]


# ------------------------------------------------------------------------------- owned temporaries

#: The only other ways a temporary folder is made, each swept another way.
ALLOWED = {
    "swe_taskflow/hygiene.py": "scratch_temp: inside this process's scratch folder, swept with it",
    "builder/pipeline/cache.py": "StageCache.new_tmp: under the cache lock, emptied when the lock is taken",
    "builder/pipeline/repos.py": "stand-in repositories under the cache's work folder, swept under the lock",
    "swe_taskflow/atomic.py": "one temporary file beside its target, not a folder",
}
#: Bundled task repositories: the example task's code and tests (they run in the task's container), not ours;
#: and the exported step verifiers, which run inside the task container too, never on the host.
TASK_REPOS = ("builder/data/example/repo/", "builder/evaluation/data/")


def test_temporary_folders_are_made_only_through_the_owned_helper():
    """Push, export harbor, evaluate import/view-jobs, the release writer, swebench_specs, the trajectory
    importer, verify ORG/NAME, and everything after them: tempfile's folders carry no owner tag."""
    offenders = []
    for path in sorted([*(ROOT / "builder").rglob("*.py"), *(ROOT / "swe_taskflow").rglob("*.py")]):
        rel = path.relative_to(ROOT).as_posix()
        if rel in ALLOWED or rel.startswith(TASK_REPOS):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            func = node.func if isinstance(node, ast.Call) else None
            name = getattr(func, "attr", getattr(func, "id", ""))
            if name in ("mkdtemp", "TemporaryDirectory", "mkstemp"):
                offenders.append(f"{rel}:{node.lineno}: {name}()")
    assert offenders == []


def test_a_stale_recorded_folder_of_a_dead_owner_is_swept_and_a_live_ones_is_not(tmp_path):
    from swe_taskflow import owned

    dead = _dead_owner()
    records = Path(owned.record_dir(dead)) / owned.RECORDS
    records.mkdir(parents=True)
    stale = tmp_path / "out" / f".export-{dead}-0badc0de"       # beside an output, where only the record finds it
    (stale / "task" / "tests").mkdir(parents=True)
    (stale / "task" / "tests" / "hidden.py").write_text("hidden")
    (records / "0badc0de").write_text(str(stale))
    untagged = tmp_path / "out" / "results"                      # a record naming an untagged folder: never removed
    untagged.mkdir()
    (records / "0badc0d2").write_text(str(untagged))
    in_tmp = Path(owned.tempfile.gettempdir()) / f"swe-taskflow-verify-{dead}-0badc0de"
    in_tmp.mkdir()
    live = owned.owned_temp_dir(".export-", tmp_path / "out")    # this test process: alive
    try:
        p = _next_command()
        assert p.returncode == 2 and "internal error" not in p.stderr
        assert not stale.exists() and not in_tmp.exists() and not records.parent.exists()
        assert untagged.is_dir() and live.is_dir()
    finally:
        live.rmdir()


@pytest.mark.slow
def test_an_export_killed_with_kill_9_is_swept_by_the_next_command(tmp_path):
    from tests.support.harbor_fixture import build_fixture_release

    rel, _ = build_fixture_release(tmp_path)
    out = tmp_path / "exported"
    child = subprocess.Popen([sys.executable, "-c", f"""
import time
from builder.evaluation import export as ex
real = ex.export_task
def slow(*a, **k):
    rec = real(*a, **k)
    print("one task written", flush=True)
    time.sleep(300)
    return rec
ex.export_task = slow
ex.export_harbor({str(rel)!r}, "split_prompt", {str(out)!r})
"""], env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "one task written", child.stderr.read()
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(30)
    left = [p for p in tmp_path.iterdir() if p.name.startswith(".export-")]
    assert len(left) == 1 and any(left[0].rglob("*")) and not out.exists()
    started = time.monotonic()
    _next_command()
    assert not left[0].exists(), "the killed export's folder (hidden tests inside) is still there"
    assert time.monotonic() - started < 60


def test_a_build_folder_sweep_puts_back_an_old_release_whose_swap_was_killed(tmp_path):
    """The build's own sweep of its output folder must not remove the only copy of the release."""
    from builder.pipeline.outdir import sweep_temporaries

    dead = _dead_owner()
    aside = tmp_path / f".release.old-{dead}-0badc0de"
    half = tmp_path / f".release.tmp-{dead}-0badc0d2"
    (aside / "manifests").mkdir(parents=True), half.mkdir()
    (aside / "README.md").write_text("the release")
    sweep_temporaries(tmp_path)
    assert (tmp_path / "release" / "README.md").read_text() == "the release"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["release"]
