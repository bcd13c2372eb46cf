"""Pure tests: the proof verdict from recorded facts alone, report round trips, bounded capture, tree hash."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from builder.proofs.script import BoundedCapture, repo_write_blocked
from builder.proofs.config import ProofConfig
from builder.proofs.gitsafe import tree_hash
from swe_taskflow.errors import ConfigError, InputError
from swe_taskflow.proofs import ProofFacts, ProofReport, RunFacts, classify_outcome, classify_run
from swe_taskflow.schema import PROOF_STATUSES
from tests.support.repos import git, make_repo, snapshot

T = "a" * 40
OK = RunFacts(exit_code=0, stdout_bytes=6, stdout_nonblank=5, stdout_sha256="s1",
              tree_sha_before=T, tree_sha_after=T)


def mk(**kw) -> RunFacts:
    return RunFacts(**{**OK.to_dict(), "command": (), **kw})


@pytest.mark.parametrize("facts, status", [
    (OK, "passed"),
    (mk(exit_code=2), "failed-exit"),
    (mk(stdout_nonblank=0, stdout_bytes=3), "no-evidence"),
    (mk(tree_sha_after="b" * 40), "modified-repo"),
    (mk(repo_write_blocked=True, exit_code=1), "modified-repo"),
    (mk(timed_out=True, exit_code=137), "timeout"),
    (mk(oom_killed=True, exit_code=137), "oom"),
    (mk(output_limit_hit=True, exit_code=137), "failed-exit"),
    (mk(infra_error="daemon gone", exit_code=None), "infrastructure-error"),
    (mk(tree_sha_after=""), "infrastructure-error"),
    (mk(exit_code=None), "infrastructure-error"),
    (RunFacts(not_run="empty proof script"), "no-evidence"),
])
def test_classify_run_each_status(facts, status):
    got, reason = classify_run(facts)
    assert got == status and got in PROOF_STATUSES and reason


def test_precedence_repo_change_beats_everything_but_infra():
    f = mk(tree_sha_after="b" * 40, timed_out=True, oom_killed=True, exit_code=137)
    assert classify_run(f)[0] == "modified-repo"
    assert classify_run(mk(infra_error="x", tree_sha_after="b" * 40))[0] == "infrastructure-error"
    assert classify_run(mk(oom_killed=True, timed_out=True))[0] == "oom"
    assert "output-limit" in classify_run(mk(output_limit_hit=True, exit_code=137))[1]


def test_gold_patch_outcomes():
    assert classify_outcome(ProofFacts(base=OK, patched=OK))[0] == "passed"
    assert classify_outcome(ProofFacts(base=OK, patched=mk(stdout_sha256="s2")))[0] == "patch-mismatch"
    assert classify_outcome(ProofFacts(base=OK, patched=mk(exit_code=1)))[0] == "patch-mismatch"
    assert classify_outcome(ProofFacts(base=OK, patched=mk(infra_error="x")))[0] == "infrastructure-error"
    assert classify_outcome(ProofFacts(base=OK, patch_error="does not apply"))[0] == "infrastructure-error"
    # a failed base run decides alone, whatever the patched run did
    assert classify_outcome(ProofFacts(base=mk(exit_code=1), patched=OK))[0] == "failed-exit"


def test_classify_from_dict_form_and_missing_base():
    d = {"base": OK.to_dict(), "patched": mk(stdout_sha256="zz").to_dict()}
    assert classify_outcome(d)[0] == "patch-mismatch"
    with pytest.raises(InputError):
        classify_outcome({"patched": None})


def test_report_round_trip_and_recomputable():
    facts = ProofFacts(base=OK, patched=mk(stdout_sha256="s2"))
    rep = ProofReport.from_facts(facts, sandbox="docker", image="img", image_id="sha256:x")
    d = rep.to_dict()
    again = ProofReport.from_dict(d)
    assert again == rep and again.status == "patch-mismatch"
    assert classify_outcome(d["runs"])[0] == d["status"]   # an auditor can re-derive the verdict
    assert d["exit_codes"] == [0, 0] and d["repo_unchanged"] is True
    with pytest.raises(InputError):
        ProofReport(status="bogus", reason="", sandbox="docker")


def test_bounded_capture_matches_hashlib():
    killed = []
    cap = BoundedCapture(10, keep_head=4, keep_tail=3, on_limit=lambda: killed.append(1))
    assert cap.feed(b"abc ") and not cap.feed(b"defghijk")
    assert cap.nbytes == 10 and cap.limit_hit and killed == [1]
    assert cap.sha256 == hashlib.sha256(b"abc defghi").hexdigest()
    assert bytes(cap.head) == b"abc " and bytes(cap.tail) == b"ghi" and cap.nonblank == 9


def test_config_validation():
    with pytest.raises(ConfigError):
        ProofConfig(pids=0)
    with pytest.raises(ConfigError):
        ProofConfig(mem_mb=4)


def test_repo_write_marker():
    assert repo_write_blocked("/proof/script: line 1: can't create out.txt: Read-only file system")
    assert repo_write_blocked("OSError: [Errno 30] Read-only file system: '/repo/x.py'")
    assert not repo_write_blocked("sh: can't create /etc/x: Read-only file system")
    assert not repo_write_blocked("cat: can't open 'nofile': No such file or directory")


@pytest.fixture()
def git_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"a.py": "x = 1\n", ".gitignore": "build/\n", "sub/b.txt": "b\n"})


def test_tree_hash_equals_git_head_tree_and_leaves_git_untouched(git_repo: Path):
    git_before = snapshot(git_repo / ".git")
    got = tree_hash(git_repo)
    assert got == git(git_repo, "rev-parse", "HEAD^{tree}").strip()   # independent: git's own commit tree
    assert snapshot(git_repo / ".git") == git_before


@pytest.mark.parametrize("change", ["tracked", "untracked", "ignored", "delete"])
def test_tree_hash_sees_every_kind_of_change(git_repo: Path, change: str):
    before = tree_hash(git_repo)
    if change == "tracked":
        (git_repo / "a.py").write_text("x = 2\n")
    elif change == "untracked":
        (git_repo / "new.txt").write_text("n\n")
    elif change == "ignored":
        (git_repo / "build").mkdir()
        (git_repo / "build" / "out.bin").write_text("o\n")
    else:
        (git_repo / "sub" / "b.txt").unlink()
    assert tree_hash(git_repo) != before


def test_tree_hash_plain_folder(tmp_path: Path):
    (tmp_path / "f.txt").write_text("hello\n")
    a = tree_hash(tmp_path)
    assert a == tree_hash(tmp_path) and len(a) == 40
    (tmp_path / "f.txt").write_text("hello!\n")
    assert tree_hash(tmp_path) != a
    assert not (tmp_path / ".git").exists()


def test_tree_hash_same_size_edit_right_after_commit(git_repo: Path):
    """Racy git: a same-size edit within the index's own second must still be seen."""
    for i in range(5):
        before = tree_hash(git_repo)
        (git_repo / "a.py").write_text(f"x = {i + 3}\n")
        assert tree_hash(git_repo) != before


@pytest.mark.parametrize("facts, cause", [
    (ProofFacts(base=OK, patched=mk(stdout_sha256="s2")), ("output-drift", "patched")),
    (ProofFacts(base=OK, patched=mk(exit_code=1)), ("failure", "patched")),
    (ProofFacts(base=OK, patched=mk(stdout_nonblank=0, stdout_sha256="e")), ("failure", "patched")),
    (ProofFacts(base=mk(exit_code=3), patched=OK), ("failure", "base")),
    (ProofFacts(base=mk(tree_sha_after="b" * 40)), ("failure", "base")),
    (ProofFacts(base=OK, patched=OK), ("", "")),
    (ProofFacts(base=OK), ("", "")),
    (ProofFacts(base=OK, patch_error="does not apply"), ("", "")),
])
def test_rejection_cause_separates_output_drift_from_failure(facts, cause):
    from swe_taskflow.proofs import rejection_cause

    rep = ProofReport.from_facts(facts, sandbox="bwrap")
    assert rejection_cause(rep) == cause
    assert rejection_cause(rep.to_dict()) == cause     # from the published report alone
