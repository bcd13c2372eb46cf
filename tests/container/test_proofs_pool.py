"""validate_pool, the resume cache, repository lookup, sandbox selection and the CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from builder.cli import main
from builder.proofs import ProofConfig, build_test_image, resolve_sandbox, validate_pool_file
from builder.proofs.pool import repo_for
from swe_taskflow.errors import ConfigError, SandboxError
from swe_taskflow.jsonl import read_jsonl, write_jsonl
from swe_taskflow.schema import QAItem

CFG = ProofConfig(mem_mb=128, pids=32, tmpfs_mb=8, max_output_bytes=64 << 10, timeout_s=3)
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=repo, check=True,
                   capture_output=True)


@pytest.fixture()
def repos(tmp_path: Path) -> Path:
    root = tmp_path / "repos"
    for name, body in (("owner__proj", "VALUE = 1\n"), ("inst-direct", "VALUE = 2\n")):
        r = root / name
        r.mkdir(parents=True)
        _git(r, "init", "-q")
        (r / "mod.py").write_text(body)
        _git(r, "add", "-A")
        _git(r, "commit", "-qm", "init")
    return root


def _item(qid: str, iid: str, script: str) -> dict:
    # hand-written test rows (provenance recorded in the generator field)
    return QAItem(question_id=qid, instance_id=iid, question="What is VALUE?", reference_answer="1",
                  proof_script=script, generator={"provenance": "hand-written"}).to_dict()


@pytest.fixture()
def pool(tmp_path: Path) -> Path:
    rows = [
        _item("q-pass", "owner__proj-1", "grep -n VALUE mod.py\n"),
        _item("q-fail", "owner__proj-1", "echo x\nexit 4\n"),
        _item("q-direct", "inst-direct", "grep VALUE mod.py\n"),
        _item("q-norepo", "other__missing-7", "echo hi\n"),
        _item("q-empty", "owner__proj-1", ""),
        _item("q-write", "owner__proj-1", "echo evidence\necho bad > mod.py\n"),
    ]
    path = tmp_path / "pool.jsonl"
    write_jsonl(path, rows)
    return path


def test_repo_lookup_order(repos: Path):
    assert repo_for(repos, "inst-direct", None) == repos / "inst-direct"
    assert repo_for(repos, "owner__proj-1", None) == repos / "owner__proj"
    assert repo_for(repos, "anything", "owner/proj") == repos / "owner__proj"
    assert repo_for(repos, "nope", None) is None


def _validate(pool, repos, out, sandbox, cache, jobs=2):
    return validate_pool_file(pool, repos, out, sandbox=sandbox, jobs=jobs, cache_dir=cache, config=CFG,
                              progress=False)


def _check_rows(out: Path) -> dict:
    rows = {obj["question_id"]: obj for _, obj in read_jsonl(out)}
    assert len(rows) == 6   # nothing dropped
    want = {"q-pass": ("accepted", "passed"), "q-fail": ("rejected", "failed-exit"),
            "q-direct": ("accepted", "passed"), "q-norepo": ("error", "infrastructure-error"),
            "q-empty": ("rejected", "no-evidence"), "q-write": ("rejected", "modified-repo")}
    for qid, (status, reason) in want.items():
        assert (rows[qid]["status"], rows[qid]["reason"]) == (status, reason), qid
        assert rows[qid]["proof_report"]["status"] == reason
    assert "2" in rows["q-direct"]["proof_report"]["stdout_excerpt"]
    from swe_taskflow.proofs import classify_outcome

    for row in rows.values():   # every verdict can be recomputed from the recorded facts
        assert classify_outcome(row["proof_report"]["runs"])[0] == row["reason"]
    return rows


@needs_bwrap
def test_validate_pool_bwrap_and_resume(pool, repos, tmp_path):
    out, cache = tmp_path / "out.jsonl", tmp_path / "cache"
    s1 = _validate(pool, repos, out, "bwrap", cache)
    _check_rows(out)
    assert (s1["accepted"], s1["rejected"], s1["error"], s1["cached"]) == (2, 3, 1, 0)
    first = out.read_bytes()
    s2 = _validate(pool, repos, out, "bwrap", cache)
    assert s2["cached"] == 4   # the 4 proofs that ran; infrastructure errors and empty scripts are not cached
    rows = _check_rows(out)
    # a changed repository invalidates its proofs only
    (repos / "owner__proj" / "mod.py").write_text("VALUE = 3\n")
    s3 = _validate(pool, repos, out, "bwrap", cache)
    assert s3["cached"] == 1 and s3["accepted"] == 2
    assert json.loads(first.splitlines()[0])["question_id"] == rows["q-pass"]["question_id"]


@pytest.mark.docker
def test_validate_pool_docker_parallel(pool, repos, tmp_path, docker_available):
    build_test_image()
    out = tmp_path / "out.jsonl"
    s = _validate(pool, repos, out, "docker", tmp_path / "cache", jobs=2)
    assert s["sandbox"] == "docker" and s["image"].endswith(":local")
    _check_rows(out)


@pytest.mark.docker
def test_validate_pool_uses_task_images(pool, repos, tmp_path, docker_available):
    """Without --image each task's image_name is used; a missing one is an error row, not a rejection."""
    tag = build_test_image()["tag"]
    tasks = tmp_path / "tasks.jsonl"
    write_jsonl(tasks, [{"instance_id": "owner__proj-1", "repo": "owner/proj", "image_name": tag},
                        {"instance_id": "inst-direct", "image_name": "jefzda/sweap-images:not-on-this-machine"}])
    out = tmp_path / "out.jsonl"
    s = validate_pool_file(pool, repos, out, sandbox="docker", jobs=2, cache_dir=None, config=CFG, progress=False,
                      tasks_path=tasks)
    rows = {obj["question_id"]: obj for _, obj in read_jsonl(out)}
    assert rows["q-pass"]["status"] == "accepted" and rows["q-pass"]["proof_report"]["image"] == tag
    assert rows["q-direct"]["status"] == "error" and "docker load" in rows["q-direct"]["proof_report"]["reason"]
    assert s["error"] == 2 and s["total"] == 6


@needs_bwrap
def test_validate_pool_gold_patch_from_tasks(pool, repos, tmp_path):
    r = repos / "owner__proj"
    (r / "mod.py").write_text("VALUE = 9\n")
    patch = subprocess.run(["git", "diff"], cwd=r, capture_output=True, text=True, check=True).stdout
    subprocess.run(["git", "checkout", "-q", "--", "mod.py"], cwd=r, check=True)
    tasks = tmp_path / "tasks.jsonl"
    write_jsonl(tasks, [{"instance_id": "owner__proj-1", "repo": "owner/proj", "patch": patch}])
    out = tmp_path / "out.jsonl"
    s = validate_pool_file(pool, repos, out, sandbox="bwrap", jobs=2, config=CFG, progress=False, tasks_path=tasks)
    rows = {obj["question_id"]: obj for _, obj in read_jsonl(out)}
    assert (rows["q-pass"]["status"], rows["q-pass"]["reason"]) == ("rejected", "patch-mismatch: output drift")
    # q-pass drifted (its grep prints the patched line); q-fail, q-empty and q-write failed on the base run
    assert s["rejected_by_cause"] == {"output-drift": 1, "failure": 3}
    assert rows["q-direct"]["status"] == "accepted"   # no task row: no gold patch
    assert "9" not in (r / "mod.py").read_text()


def test_validate_pool_bad_row_names_file_and_line(tmp_path, repos):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(_item("q", "i", "echo")) + "\n" + json.dumps({"question_id": "x"}) + "\n")
    with pytest.raises(Exception) as err:
        validate_pool_file(bad, repos, tmp_path / "o.jsonl", sandbox="bwrap", progress=False)
    assert "bad.jsonl:2" in str(err.value)
    with pytest.raises(ConfigError):
        validate_pool_file(bad, repos, tmp_path / "o.jsonl", sandbox="bwrap", jobs=0, progress=False)


def test_unknown_sandbox_and_none_available(monkeypatch):
    with pytest.raises(ConfigError, match="unknown sandbox"):
        resolve_sandbox("podman")
    import builder.proofs.bwrap_runner as bw
    import builder.proofs.docker_runner as dk

    monkeypatch.setattr(dk, "docker_answers", lambda: False)
    monkeypatch.setattr(bw, "bwrap_available", lambda: False)
    with pytest.raises(SandboxError) as err:
        resolve_sandbox("auto")
    assert "Docker" in str(err.value) and "bwrap" in str(err.value)


@needs_bwrap
def test_cli_run_json_and_exit_codes(repos, tmp_path, capsys):
    script = tmp_path / "proof.sh"
    script.write_text("grep -n VALUE mod.py\n")
    rc = main(["proofs", "run", "--repo", str(repos / "owner__proj"), "--script", str(script),
               "--sandbox", "bwrap", "--timeout", "5", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert rc == 0 and report["status"] == "passed" and report["repo_unchanged"] is True
    script.write_text("exit 1\n")
    rc = main(["proofs", "run", "--repo", str(repos / "owner__proj"), "--script", str(script),
               "--sandbox", "bwrap", "--json"])
    assert rc == 1 and json.loads(capsys.readouterr().out)["status"] == "failed-exit"
    assert main(["proofs", "run", "--repo", str(repos), "--script", str(tmp_path / "none.sh")]) == 2


@needs_bwrap
def test_cli_validate(pool, repos, tmp_path, capsys):
    out = tmp_path / "validated.jsonl"
    rc = main(["proofs", "validate", "--pool", str(pool), "--repos", str(repos), "--out", str(out),
               "--sandbox", "bwrap", "--jobs", "2", "--timeout", "5"])
    summary = json.loads(capsys.readouterr().out)
    assert rc == 0 and summary["total"] == 6 and summary["accepted"] == 2 and out.exists()
    assert (tmp_path / "validated.jsonl.cache").is_dir()


def test_cli_help_for_every_proofs_command():
    for cmd in ("run", "validate", "build-image"):
        with pytest.raises(SystemExit) as exc:
            main(["proofs", cmd, "--help"])
        assert exc.value.code == 0


@needs_bwrap
def test_rows_rejected_before_any_proof_stay_rejected(repos, tmp_path):
    """A question the generator's checks rejected (leak, reviewer) is never run nor accepted by its proof."""
    rows = [_item("q-ok", "owner__proj-1", "grep VALUE mod.py\n"),
            {**_item("q-leaky", "owner__proj-1", "grep VALUE mod.py\n"), "status": "rejected",
             "reason": "leak (answer): the fix"}]
    pool = tmp_path / "p.jsonl"
    write_jsonl(pool, rows)
    out = tmp_path / "o.jsonl"
    s = validate_pool_file(pool, repos, out, sandbox="bwrap", config=CFG, progress=False)
    got = {obj["question_id"]: obj for _, obj in read_jsonl(out)}
    assert got["q-ok"]["status"] == "accepted"
    assert (got["q-leaky"]["status"], got["q-leaky"]["reason"]) == ("rejected", "leak (answer): the fix")
    assert got["q-leaky"]["proof_report"] is None and s["not_run"] == 1 and s["rejected"] == 1
