"""A small hand-written release for the Harbor export tests (every text labelled hand-written).

Two SWE-Bench-Pro-shaped source rows (``provenance: hand-written``) with a three-file gold patch, a
test patch, FAIL_TO_PASS / PASS_TO_PASS and a test command; rows of four conditions built by the
project's own row builder; a release written by the project's writer. Hidden values are distinctive
strings so that a leak check by substring cannot pass by accident.
"""

from __future__ import annotations

import json
from pathlib import Path

from builder.release import write_release
from tests.support.synthetic import paragraph_split, uniform_target
from builder.sources import load_tasks
from swe_taskflow.rows import build_row
from swe_taskflow.schema import QAItem, Session, Turn

_GIT_ENV = {"GIT_AUTHOR_NAME": "fixture", "GIT_AUTHOR_EMAIL": "fixture@example.invalid",
            "GIT_COMMITTER_NAME": "fixture", "GIT_COMMITTER_EMAIL": "fixture@example.invalid",
            "GIT_AUTHOR_DATE": "2020-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2020-01-01T00:00:00Z"}
BASE_FILES = {
    "README.md": "# fixture (hand-written)\n",
    "pkg/__init__.py": "",
    "tests/__init__.py": "",
    "tests/test_old.py": ("import unittest\n\n\nclass OldP2P(unittest.TestCase):\n"
                          "    def test_kept_name_e04c(self):\n        import pkg\n        self.assertTrue(pkg)\n"),
}
GOLD_FILES = {f"pkg/m{i}.py": f"VALUE_{i} = 'gold-secret-{i}-7f3a'\n" for i in range(3)}
TEST_FILES = {"tests/test_hidden.py": (
    "import unittest\n\n# hidden-test-body-9c1e\n\n\nclass HiddenF2P(unittest.TestCase):\n" + "".join(
        f"    def test_secret_name_{i}_b71d(self):\n        from pkg import m{i}\n"
        f"        self.assertEqual(m{i}.VALUE_{i}, 'gold-secret-{i}-7f3a')\n\n" for i in range(3)))}
F2P = [f"tests/test_hidden.py::HiddenF2P::test_secret_name_{i}_b71d" for i in range(3)]
P2P = ["tests/test_old.py::OldP2P::test_kept_name_e04c"]


def _git(repo: Path, *args: str) -> str:
    import os
    import subprocess
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env={**os.environ, **_GIT_ENV}).stdout


def _diff(repo: Path, files: dict) -> str:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    _git(repo, "add", "-A")
    out = _git(repo, "diff", "--cached")
    _git(repo, "reset", "-q", "--hard")
    for rel in files:
        if (repo / rel).exists():
            (repo / rel).unlink()
    return out


def fixture_repo(dest: Path) -> tuple[Path, str, str, str]:
    """A git repository at its base commit, and the gold and test patches against it."""
    dest.mkdir(parents=True, exist_ok=True)
    for rel, text in BASE_FILES.items():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_text(text)
    _git(dest, "init", "-q", "-b", "main")
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", "base (hand-written fixture)")
    base = _git(dest, "rev-parse", "HEAD").strip()
    return dest, base, _diff(dest, GOLD_FILES), _diff(dest, TEST_FILES)


def source_rows(base: str, gold: str, test_patch: str) -> list[dict]:
    rows = []
    for k in range(2):
        statement = (f"[hand-written] Fixture issue {k}: the pkg module lacks three constants.\n\n"
                     f"[hand-written] Add VALUE_0 and VALUE_1 for fixture {k}.\n\n"
                     f"[hand-written] Then add VALUE_2 and keep the existing behaviour for fixture {k}.")
        rows.append({
            "instance_id": f"fixture__harbor-{k}", "repo": "swe-taskflow/fixture", "base_commit": base,
            "problem_statement": statement, "requirements": "", "interface": "",
            "image_name": "swe-taskflow/fixture:none", "repo_language": "python",
            "fail_to_pass": json.dumps(F2P), "pass_to_pass": json.dumps(P2P),
            "patch": gold, "test_patch": test_patch,
            "test_command": "python3 -m unittest -v 2>&1", "provenance": "hand-written"})
    return rows


def questions(task) -> list[QAItem]:
    k = task.instance_id[-1]
    return [QAItem(
        question_id=f"{task.instance_id}:q0", instance_id=task.instance_id,
        question=f"[hand-written] Where would a reader find the constants of fixture {k}?",
        reference_answer=f"[hand-written] reference-answer-secret-{k}-5d2e: in the pkg package.",
        evidence=({"path": f"pkg/evidence_secret_{k}_a9b0.py", "symbol": f"EVIDENCE_SYMBOL_{k}_33aa",
                   "note": f"evidence-note-secret-{k}-61f2"},),
        proof_script=f"#!/bin/sh\necho proof-script-secret-{k}-c8d4\n", pool="sol", status="accepted",
        generator={"provenance": "hand-written"}, reviewer={"provenance": "hand-written"},
        proof_report={"status": "passed", "sandbox": "bwrap", "image": "host", "exit_codes": [0],
                      "stdout_sha256": "0" * 64, "tree_sha_before": "1" * 40, "tree_sha_after": "1" * 40,
                      "duration_s": 0.05, "provenance": "hand-written"},
        intent="explain")]


def pro_shaped(rows: list[dict]) -> list[dict]:
    """The rows as SWE-Bench Pro has them: no test command (the tests run from run_scripts/<id>/)."""
    out = []
    for r in rows:
        r = {k: v for k, v in r.items() if k != "test_command"}
        r["before_repo_set_cmd"] = "git reset --hard X\ngit checkout GOLD -- tests/test_hidden.py"
        r["selected_test_files_to_run"] = json.dumps(["tests/test_hidden.py", "tests/test_old.py"])
        out.append(r)
    return out


def build_fixture_release(tmp: Path, *, test_command: bool = True, provenance_extra: dict | None = None,
                          source: str = "swe-bench-pro") -> tuple[Path, Path]:
    """(release folder, source tasks file); the fixture repository is at ``tmp / "repo"``. Without
    ``test_command`` the source rows are SWE-Bench-Pro-shaped (:func:`pro_shaped`); ``provenance_extra`` is
    merged into the recorded source provenance (e.g. ``run_scripts``); ``source`` names the source benchmark."""
    _, base, gold, test_patch = fixture_repo(tmp / "repo")
    src = tmp / "source" / "tasks.jsonl"
    src.parent.mkdir(parents=True, exist_ok=True)
    rows = source_rows(base, gold, test_patch)
    rows = rows if test_command else pro_shaped(rows)
    src.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows), encoding="utf-8")
    load = load_tasks(str(src), source=source, revision="fixture-revision-1")   # as a recipe names one
    tasks = load.ok
    splits: dict[str, list] = {"single_prompt": [], "split_prompt": [], "qa_last": [], "qa_only": []}
    for i, task in enumerate(tasks):
        split = paragraph_split(task)
        qs = questions(task)
        issue = [Turn(n, "issue", p, it, (n,)) for n, (p, it) in
                 enumerate(zip(split.parts, ("bug-fix", "new-feature", "tests")))]
        qa = Turn(len(issue), "qa", qs[0].question, "explain", (), qs[0].question_id)
        sessions = {"single_prompt": (Turn(0, "issue", task.original_prompt, "bug-fix"),),
                    "split_prompt": tuple(issue), "qa_last": (*issue, qa),
                    "qa_only": (Turn(0, "qa", qs[0].question, "explain", (), qs[0].question_id),)}
        for name, turns in sessions.items():
            pool = "sol" if name.startswith("qa") else None
            splits[name].append(build_row(task, Session(task.instance_id, name, turns, question_pool=pool), split,
                                          qs, row=i))
    uniform_target(tmp / "target.json")
    rel = tmp / "release"
    write_release(rel, name="harbor-fixture", version="0.1.0", splits=splits, target_path=tmp / "target.json",
                  provenance={"source": {**load.provenance, **(provenance_extra or {})}},
                  repo_id="org/harbor-fixture")
    return rel, src


HIDDEN_MARKERS = ("gold-secret", "hidden-test-body", "test_secret_name", "test_kept_name", "reference-answer-secret",
                  "evidence_secret", "EVIDENCE_SYMBOL", "evidence-note-secret", "proof-script-secret")


def exported_fixture_release(tmp: Path, condition: str) -> tuple[Path, Path]:
    """The fixture release in ``tmp`` and its ``condition`` exported for Harbor into ``tmp/ds``: (release, ds)."""
    from builder.evaluation.export import export_harbor

    release, _ = build_fixture_release(tmp)
    export_harbor(release, condition, tmp / "ds")
    return release, tmp / "ds"
