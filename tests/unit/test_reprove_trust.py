"""What a release may not decide when an auditor re-proves it (issue 32): which code runs, in which sandbox,
under which limits, and whether anything runs at all on a release whose hashes failed.

The hostile release ships an ``evil.py`` and records ``harbor:evil:Evil`` as every proof's sandbox; the auditor
runs ``swe-taskflow verify . --reprove`` standing in the release folder. A stand-in Harbor venv (this Python, and
a minimal ``harbor`` package whose ``import_class`` imports what it is named, as Harbor's does) makes the old path
reachable without Harbor: before the fix the worker imported ``evil`` from the auditor's folder.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

import builder.proofs.run as run_mod
from builder.cli import main
from builder.proofs import ProofConfig, ProofRunner
from swe_taskflow.proofs import ProofFacts, ProofReport, RunFacts
from builder.proofs.config import AUDITOR_CEILINGS
from swe_taskflow.verify import DEFAULT_CEILINGS, DEFAULT_LIMITS, KNOWN_SANDBOXES, auditor_limits, reprove_rows

EVIL = """import pathlib, os
pathlib.Path(os.environ["EVIL_MARKER"]).write_text("ran")
class Evil:
    def __init__(self, **kw):
        pass
"""

HARBOR_STUB = {
    "harbor/__init__.py": "",
    "harbor/utils/__init__.py": "",
    "harbor/utils/import_path.py": textwrap.dedent("""
        import importlib
        def import_class(spec, label=""):
            module, _, name = spec.partition(":")
            return getattr(importlib.import_module(module), name)
        """),
    "harbor/environments/__init__.py": "",
    "harbor/environments/factory.py": "class EnvironmentFactory:\n    pass\n",
    "harbor/models/__init__.py": "",
    "harbor/models/task/__init__.py": "",
    "harbor/models/task/config.py": textwrap.dedent("""
        import enum
        class EnvironmentConfig:
            def __init__(self, **kw):
                pass
        class NetworkMode(enum.Enum):
            NO_NETWORK = "none"
        class NetworkPolicy:
            def __init__(self, **kw):
                pass
        """),
    "harbor/models/trial/__init__.py": "",
    "harbor/models/trial/paths.py": textwrap.dedent("""
        import pathlib
        class TrialPaths:
            def __init__(self, root):
                self.root = pathlib.Path(root)
            def mkdir(self):
                self.root.mkdir(parents=True, exist_ok=True)
        """),
}


def _hostile_release(dest: Path, sandbox: str, limits: dict | None = None) -> Path:
    """The example task with one question whose report records ``sandbox`` (and ``limits``), plus an evil.py."""
    from builder.release import write_release
    from builder.split.structural import StructuralSplitter
    from swe_taskflow.rows import build_row
    from swe_taskflow.schema import QAItem, Session, Turn
    from tests.support.example_release import example_question, example_task, source_provenance
    from tests.support.synthetic import uniform_target

    task = example_task()
    split = StructuralSplitter().split(task)
    q = example_question()
    report = {**(q.proof_report or {}), "sandbox": sandbox, **({"limits": limits} if limits else {})}
    q = QAItem.from_dict({**q.to_dict(), "proof_report": report})
    turns = [Turn(n, "issue", p, "bug-fix", (n,)) for n, p in enumerate(split.parts)]
    turns.append(Turn(3, "qa", q.question, q.intent, (), q.question_id))
    row = build_row(task, Session(task.instance_id, "qa_last", tuple(turns), question_pool="example"), split, [q])
    uniform_target(dest.parent / "target.json")
    write_release(dest, name="hostile", version="0.1.0", splits={"qa_last": [row]},
                  target_path=dest.parent / "target.json", provenance={"source": source_provenance()},
                  repo_id="swe-taskflow/hostile")
    return dest


@pytest.fixture
def stand_in_harbor(tmp_path, monkeypatch):
    """A 'Harbor venv' that is this Python with the stub package on its (absolute) PYTHONPATH."""
    venv = tmp_path / "harbor-venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    stub = tmp_path / "stub"
    for rel, text in HARBOR_STUB.items():
        (stub / rel).parent.mkdir(parents=True, exist_ok=True)
        (stub / rel).write_text(text)
    monkeypatch.setenv("SWE_TASKFLOW_HARBOR_VENV", str(venv))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(stub), os.environ.get("PYTHONPATH", "")]))
    marker = tmp_path / "MARKER"
    monkeypatch.setenv("EVIL_MARKER", str(marker))
    return marker


class _Recorder:
    def __init__(self):
        self.calls = []

    def __call__(self, repo_dir, script, **kw):
        self.calls.append(kw)
        facts = ProofFacts(base=RunFacts(exit_code=0, stdout_sha256="0" * 64))
        return ProofReport.from_facts(facts, sandbox=kw.get("sandbox") or "", limits=(kw.get("config")
                                                                                      or ProofConfig()).limits())


def test_reprove_of_a_release_naming_a_harbor_module_imports_nothing_and_says_so(tmp_path, stand_in_harbor,
                                                                                  monkeypatch, capsys):
    """Old code: the worker imported evil.py from the auditor's folder (the marker appeared)."""
    from tests.support.example_release import EXAMPLE, example_task

    rel = _hostile_release(tmp_path / "rel", "harbor:evil:Evil")
    repos = tmp_path / "repos"
    shutil.copytree(EXAMPLE / "repo", repos / example_task().instance_id)
    shutil.copytree(rel, tmp_path / "release")   # the auditor's copy, with the file a release may carry
    rel = tmp_path / "release"
    (rel / "evil.py").write_text(EVIL)
    (tmp_path / "evil.py").write_text(EVIL)
    recorder = _Recorder()
    monkeypatch.setattr(run_mod, "run_proof", recorder)
    monkeypatch.chdir(rel)
    rc = main(["verify", ".", "--reprove", "--repos", str(repos), "--quiet"])
    err = capsys.readouterr().err
    assert not stand_in_harbor.exists(), "a module the release named was imported"
    assert rc == 1   # evil.py is a file the manifest does not list: the release does not verify
    assert "nothing re-proved" in err and recorder.calls == []   # nothing runs on a release whose hashes failed
    (rel / "evil.py").unlink()
    monkeypatch.chdir(tmp_path)   # evil.py beside the auditor: still never imported
    rc = main(["verify", str(rel), "--reprove", "--repos", str(repos), "--quiet"])
    err = capsys.readouterr().err
    assert not stand_in_harbor.exists(), "a module the release named was imported"
    notes = [line for line in err.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "'harbor:evil:Evil'" in notes[0] and "nothing named there is imported" in notes[0]
    assert [c["sandbox"] for c in recorder.calls] == ["auto"]   # the auditor's default: docker, else bwrap


def test_the_harbor_worker_never_has_the_callers_folder_on_sys_path(tmp_path, stand_in_harbor, monkeypatch):
    """Even an auditor who names ``harbor:evil:Evil`` while standing beside an evil.py does not import it
    (old code: ``python -m`` put the working folder first on the worker's sys.path, and an empty PYTHONPATH
    entry did again)."""
    import builder.proofs.harbor_runner as hr

    (tmp_path / "evil.py").write_text(EVIL)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", os.environ["PYTHONPATH"] + os.pathsep)   # an empty entry: the cwd
    backend = hr.WorkerBackend("evil:Evil")
    try:
        got = backend.request("start", image="img", repo_path="/app", upload="", label="t", environment="evil:Evil",
                              kwargs={})
    finally:
        backend.close()
    assert not got["ok"] and "evil" in got["error"]
    assert not stand_in_harbor.exists(), "the worker imported a module from the caller's folder"
    assert "-P" in hr.worker_command(Path(sys.executable))
    assert all(p and os.path.isabs(p) for p in hr.worker_env()["PYTHONPATH"].split(os.pathsep))


def test_recorded_limits_are_capped_by_the_auditors_ceilings(tmp_path, monkeypatch):
    """A report recording a 115-day clock, 1 TB of memory and a 195 GiB tmpfs gets the auditor's ceilings
    (old code: the recorded values were used as they were)."""
    huge = {"timeout_s": 1e7, "mem_mb": 1e6, "tmpfs_mb": 2e5, "pids": 10**9, "max_output_bytes": float("inf")}
    got = auditor_limits(huge, DEFAULT_CEILINGS)
    assert got["timeout_s"] == 120 and got["mem_mb"] == 1024 and got["tmpfs_mb"] == 256 and got["pids"] == 128
    assert got["max_output_bytes"] == 1 << 20   # inf: not a number the auditor takes, the default
    got = auditor_limits({"timeout_s": 5, "mem_mb": True, "tmpfs_mb": "9"}, DEFAULT_CEILINGS)
    assert got["timeout_s"] == 5 and got["mem_mb"] == 512 and got["tmpfs_mb"] == 64   # junk: the defaults
    # the core's copies stay the builder's numbers
    assert DEFAULT_LIMITS == ProofConfig().limits() and DEFAULT_CEILINGS == AUDITOR_CEILINGS.limits()
    from builder.turns.sandbox import DEFAULT_CONFIG   # the project's own largest limits fit under the ceilings
    assert all(v <= AUDITOR_CEILINGS.limits()[k] for k, v in DEFAULT_CONFIG.limits().items())

    recorder = _Recorder()
    monkeypatch.setattr(run_mod, "run_proof", recorder)

    def q(kind):
        return {"question_id": kind, "proof_script": "echo\n", "kind": kind,
                "proof_report": {"status": "passed", "stdout_sha256": "0" * 64, "sandbox": "harbor:daytona",
                                 "image": "img", "limits": huge}}

    class Report:
        errors, notes, reproved, rechecked = [], [], 0, 0

    (tmp_path / "t1").mkdir()
    rows = {"s": [{"instance_id": "t1", "repo": "o/t1", "questions": [q("qa")], "turns": []}]}
    runner = ProofRunner(ceilings=ProofConfig(timeout_s=30, mem_mb=256))
    reprove_rows(rows, Report(), repos_dir=tmp_path, run_proof=runner)
    (call,) = recorder.calls
    assert call["sandbox"] == "auto" and call["config"].timeout_s == 30 and call["config"].mem_mb == 256
    assert call["config"].tmpfs_mb == 64
    # a caller that passes limits itself is capped by the runner too
    runner(tmp_path / "t1", "echo\n", sandbox="harbor:evil:Evil", timeout_s=1e7, limits=huge)
    assert recorder.calls[-1]["sandbox"] == "auto" and recorder.calls[-1]["config"].timeout_s == 30
    assert recorder.calls[-1]["config"].mem_mb == 256
    assert "harbor:daytona" not in KNOWN_SANDBOXES


def test_augmentation_limits_below_the_ceilings_are_kept():
    from swe_taskflow.verify import _rerun_kwargs

    q = {"kind": "execute", "proof_report": {"sandbox": "harbor:x:Y", "image": "img",
                                             "limits": {"timeout_s": 20, "mem_mb": 1e9}}}
    kw = _rerun_kwargs(q, DEFAULT_CEILINGS)
    assert "sandbox" not in kw and kw["timeout_s"] == 20 and kw["limits"]["mem_mb"] == 1024
    assert json.dumps(kw["limits"])   # plain numbers


def test_the_image_builders_python_child_never_imports_from_the_callers_folder(tmp_path, monkeypatch):
    """``swe-taskflow proofs build-image`` asks the host's python3 for its stdlib folder; a ``sysconfig.py`` in the
    folder it is run from is never imported (old code: ``python -c`` put that folder first on sys.path)."""
    from builder.proofs.image import _stdlib_dir

    marker = tmp_path / "MARKER"
    (tmp_path / "sysconfig.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n"
                                           "def get_paths():\n    return {'stdlib': '/evil'}\n")
    monkeypatch.chdir(tmp_path)
    got = _stdlib_dir(Path(sys.executable))
    assert not marker.exists() and str(got) != "/evil"
