"""The example's own task (swe-taskflow__ticketdesk-1): honest data, tests that fail then pass, its image.

Hand-written (issue, repository, gold patch, tests): every check here runs it the way a verifier
would, on the host (always) and in the task's own image (docker marker).
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from builder.pipeline.repos import example_task
from builder.bundled.check import check_task, run_tests
from builder.bundled.image import build_task_image, image_tag
from builder.bundled.repo import commit_folder, git_tree
from builder.split import get_splitter
from swe_taskflow.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "builder" / "data" / "example"


@pytest.fixture(scope="module")
def bundled():
    return example_task()


def test_row_is_hand_written_and_names_its_commit_and_image(bundled, tmp_path):
    task = bundled.task
    row = next(json.loads(line) for line in (DATA / "tasks.jsonl").read_text().splitlines()
               if task.instance_id in line)
    assert row["provenance"] == "hand-written" and task.source == "hand-written"
    assert task.repo == "swe-taskflow/ticketdesk" and task.status == "ok"
    # the committed files give the row's base_commit on every machine (fixed identity and dates)
    assert commit_folder(bundled.files, tmp_path / "a") == commit_folder(bundled.files, tmp_path / "b") == task.base_commit
    assert git_tree(tmp_path / "a") == git_tree(tmp_path / "b")
    assert task.image_name == image_tag(task.repo, task.base_commit, task.test_command)
    assert task.image_name.startswith("swe-taskflow/ticketdesk:")
    assert task.test_command and task.patch.startswith("diff --git") and task.test_patch.startswith("diff --git")
    assert len(task.fail_to_pass) == 9 and len(task.pass_to_pass) == 7
    assert not set(task.fail_to_pass) & set(task.pass_to_pass)


def test_issue_splits_into_three_turns(bundled):
    res = get_splitter("structural").split(bundled.task)
    assert res.status == "ok" and res.violations == () and len(res.parts) == 3
    assert "TicketStore.load" in res.parts[1] and "New interfaces introduced:" in res.parts[2]


def test_every_pool_question_is_about_this_task(bundled):
    rows = [json.loads(line) for line in (DATA / "pool.jsonl").read_text().splitlines()]
    assert len(rows) == 13 and sum("deliberately" in r["note"] for r in rows) == 3
    for r in rows:
        assert r["instance_id"] == bundled.task.instance_id and r["provenance"] == "hand-written"
        for e in r["evidence"]:
            assert (bundled.files / e["path"]).is_file(), (r["question_id"], e["path"])


def test_tests_fail_before_and_pass_after_the_gold_patch_on_the_host(bundled):
    report = check_task(bundled, runner="host")
    assert report["ok"], report["problems"]
    before, after = report["before"], report["after"]
    names = set(bundled.task.fail_to_pass) | set(bundled.task.pass_to_pass)
    assert set(before["results"]) == set(after["results"]) == names   # every test reported, none unnamed
    assert {before["results"][n] for n in bundled.task.fail_to_pass} <= {"failed", "error"}
    assert not before["grade"]["resolved"] and after["grade"]["resolved"]


def test_a_wrong_gold_patch_is_caught(bundled, tmp_path):
    """The check can fail: a 'gold' patch that only touches the README leaves the F2P tests failing."""
    from builder.bundled.repo import git

    repo = tmp_path / "r"
    commit_folder(bundled.files, repo)
    (repo / "README.md").write_text((repo / "README.md").read_text() + "One more line.\n")
    readme_only = git(["diff"], repo) + "\n"
    broken = dataclasses.replace(bundled, task=dataclasses.replace(bundled.task, patch=readme_only))
    report = check_task(broken, runner="host")
    assert not report["ok"]
    assert sum("after the gold patch" in p for p in report["problems"]) == 9


def test_a_test_command_that_prints_without_end_is_cut_not_kept_whole(bundled, monkeypatch):
    """A recipe's task is untrusted: its test command's output is kept up to MAX_OUTPUT_BYTES, with its status."""
    import builder.bundled.check as check
    monkeypatch.setattr(check, "MAX_OUTPUT_BYTES", 1 << 16)
    noisy = dataclasses.replace(bundled, task=dataclasses.replace(bundled.task, test_command="yes; exit 3"))
    run = run_tests(noisy, gold=False, runner="host", timeout_s=60)
    # yes ends at the cut (SIGPIPE) instead of filling memory until the timeout; the command's own status stays
    assert run["exit_code"] == 3 and run["results"] == {} and run["seconds"] < 30
    assert len(run["output_tail"]) == check.TAIL_CHARS


def test_edited_files_no_longer_match_the_row(bundled, tmp_path):
    import shutil

    shutil.copytree(bundled.files, tmp_path / "files")
    (tmp_path / "files" / "README.md").write_text("changed\n")
    with pytest.raises(ConfigError) as err:
        build_task_image(bundled.task, tmp_path / "files")    # fails before any docker call
    assert err.value.field == "base_commit"


def test_cli_check_on_the_host():
    proc = subprocess.run([sys.executable, "-m", "builder.cli", "example", "check", "--runner", "host"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "FAIL_TO_PASS passed 0/9" in proc.stdout and "FAIL_TO_PASS passed 9/9" in proc.stdout
    assert "ok: swe-taskflow__ticketdesk-1 in host" in proc.stdout


@pytest.mark.docker
def test_image_holds_what_an_agent_and_a_verifier_need(bundled, docker_available):
    info = build_task_image(bundled.task, bundled.files)
    assert info["tag"] == bundled.task.image_name
    again = build_task_image(bundled.task, bundled.files)
    assert not again["built"] and again["content_sha256"] == info["content_sha256"]   # same host files: reused
    script = ("id -un; pwd; git rev-parse HEAD; git status --porcelain | wc -l; stat -c %U /app /app/ticketdesk/store.py;"
              " for t in bash git python3 patch tar sed grep; do command -v $t >/dev/null || echo missing $t; done;"
              " touch /app/probe && echo writable; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '")
    out = subprocess.run(["docker", "run", "--rm", "--network", "none", "--user", "agent", bundled.task.image_name,
                          "bash", "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:9] == ["agent", "/app", bundled.task.base_commit, "0", "agent", "agent",
                                          "writable", "lo", ""], out.stdout


@pytest.mark.docker
def test_tests_fail_before_and_pass_after_the_gold_patch_in_the_image(bundled, docker_available):
    build_task_image(bundled.task, bundled.files)
    report = check_task(bundled, runner="docker")
    assert report["ok"], (report["problems"], report["after"]["output_tail"][-2000:])
    assert report["image"] == bundled.task.image_name
    assert report["before"]["exit_code"] != 0 and report["after"]["exit_code"] == 0


@pytest.mark.docker
def test_no_network_in_the_test_run(bundled, docker_available):
    """The test command runs with network none: a test that tries to connect out sees no route."""
    build_task_image(bundled.task, bundled.files)
    probe = dataclasses.replace(bundled.task, test_command="python3 -c \"import socket; "
                                "socket.create_connection(('10.0.0.1', 80), timeout=2)\"")
    run = run_tests(dataclasses.replace(bundled, task=probe), gold=False, runner="docker", timeout_s=60)
    assert run["exit_code"] != 0 and ("unreachable" in run["output_tail"] or "OSError" in run["output_tail"])


def test_image_content_hash_sees_owners_and_folders():
    """An image is reused only when its content hash matches: folders, modes and owners count, not just bytes."""
    import io
    import tarfile

    from builder.proofs.image import RootfsWriter

    def digest(build) -> str:
        with tarfile.open(fileobj=io.BytesIO(), mode="w") as tar:
            w = RootfsWriter(tar)
            build(w)
            return json.dumps(w.labels(), sort_keys=True)

    base = digest(lambda w: (w.dir("/app", uid=1000, gid=1000), w.file("/app/a.py", b"x")))
    assert base == digest(lambda w: (w.dir("/app", uid=1000, gid=1000), w.file("/app/a.py", b"x")))
    assert base != digest(lambda w: (w.dir("/app"), w.file("/app/a.py", b"x")))
    assert base != digest(lambda w: (w.dir("/app", uid=1000, gid=1000), w.file("/app/a.py", b"x", uid=1000)))
    assert base != digest(lambda w: (w.dir("/app", uid=1000, gid=1000), w.dir("/root", mode=0o700),
                                     w.file("/app/a.py", b"x")))
