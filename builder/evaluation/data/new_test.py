#!/usr/bin/env python3
"""swe-taskflow tests-turn verifier: does the test the agent wrote fail now and pass with the requested change?

Runs as root at verification time after a ``tests`` turn (swe_taskflow.turns.new_test), which comes before
the first issue turn. It stops the agent's processes, copies the answer out (answer.py), and reads which files
the turn added or changed against the base commit: those matching ``test_path_re`` are the agent's tests,
any other changed file is code (the user asked for a test only). Then, on a root-only snapshot of the
repository (checkpoint.py's, so a run killed half-way is put back by the next verifier or checkpoint), the
task's tests run as the agent's user (checkpoint.py's runner: the run script with the agent's files
selected, or the test command, its results kept for the agent's files), the gold patch (/tests/gold.patch,
uploaded at verification time only) is applied and they run again; the repository is restored either way.

Writes /logs/verifier/verdict.json (only_tests, gold_applies, fails_before, passes_after, correct; the files
and tests), the runs' logs, and reward.json: ``correct`` and ``answered`` (1.0 or 0.0), the latest checkpoint's
values carried forward. Kept compatible with old python3 (3.6+): task images bring their own interpreter.
"""
import json
import os
import re
import shutil
import sys
import tempfile

LOGS = os.environ.get("STF_VERIFIER_DIR", "/logs/verifier")
PASSED = "PASSED"


def changed_files(ck, app, base):
    """Paths the turn added, changed or removed against ``base`` (the index is put back after)."""
    ck.git(app, "add", "-A")
    try:
        out = ck.git(app, "diff", "--cached", "--name-only", "-z", base).stdout.decode("utf-8", "replace")
    finally:
        ck.git(app, "reset", "-q", check=False)
    return sorted(p for p in out.split("\0") if p)


def of_files(statuses, files, selected):
    """The statuses of the agent's tests: every one when only its files ran, else those named by its files."""
    if selected:
        return dict(statuses)
    return {n: s for n, s in statuses.items() if any(n == f or n.startswith(f + "::") for f in files)}


def run(ck, app, cfg, tests_dir, label):
    scratch = tempfile.mkdtemp(prefix="stf-newtest-")
    try:
        statuses, rc, timed_out = ck.run_tests(app, cfg, tests_dir, scratch)
        for name in ("stdout.log", "stderr.log"):
            src = os.path.join(scratch, name)
            if os.path.exists(src):
                with open(src, "rb") as fh:
                    ck.vs.write_out(LOGS, label + "-" + name, fh.read())
        return {n: str(s).upper() for n, s in statuses.items()}, rc, timed_out
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def judge(ck, app, cfg, tests_dir):
    """The verdict, with /app restored from the snapshot whatever happens."""
    files = changed_files(ck, app, cfg["base_commit"])
    pattern = re.compile(cfg["test_path_re"])
    tests = [f for f in files if pattern.search(f)]
    other = [f for f in files if not pattern.search(f)]
    verdict = {"files": tests[:50], "other_files": other[:50], "only_tests": bool(tests) and not other,
               "gold_applies": False, "fails_before": False, "passes_after": False, "tests": [], "failing_before": []}
    if not tests:
        return verdict
    run_cfg = dict(cfg)
    selected = cfg["test"].get("kind") == "run-script"
    if selected:    # the run script runs the files it is given (SWE-Bench Pro's selected test files)
        run_cfg["test"] = dict(cfg["test"], selected=",".join(t for t in tests if os.path.exists(os.path.join(app, t))))
    before, _, _ = run(ck, app, run_cfg, tests_dir, "before")
    applied = ck.git(app, "apply", "--whitespace=nowarn", os.path.join(tests_dir, cfg["gold_patch"]), check=False)
    verdict["gold_applies"] = applied.returncode == 0
    if not verdict["gold_applies"]:
        return verdict
    after, _, _ = run(ck, app, run_cfg, tests_dir, "after")
    mine_before, mine_after = of_files(before, tests, selected), of_files(after, tests, selected)
    verdict["tests"] = sorted(mine_after)[:50]
    verdict["failing_before"] = sorted(n for n in mine_after if mine_before.get(n) != PASSED)[:50]
    verdict["fails_before"] = bool(verdict["failing_before"])
    verdict["passes_after"] = bool(mine_after) and all(s == PASSED for s in mine_after.values())
    return verdict


def main():
    cfg_path = sys.argv[1] if len(sys.argv) > 1 else "/tests/new_test.json"
    tests_dir = os.path.dirname(os.path.abspath(cfg_path))
    sys.path.insert(0, tests_dir)
    import checkpoint as ck
    import verifier_state as vs
    from answer import finish, read_answer
    cfg = json.load(open(cfg_path, encoding="utf-8"))
    vs.begin(cfg, LOGS)     # the agent's processes stopped before anything is read
    answer = read_answer(cfg["answer_path"])
    state = vs.state_dir(cfg.get("state_dir") or vs.STATE_DIR)
    ck.SNAPSHOT = os.path.join(state, "snapshot")     # the checkpoints' own: a killed run is put back by the next
    app = cfg.get("app_dir", "/app")
    if os.path.lexists(ck.SNAPSHOT) and vs.read_private(os.path.join(ck.SNAPSHOT, "complete"), 0) is not None:
        ck.restore(app)
    ck.snapshot(app)
    try:
        verdict = judge(ck, app, cfg, tests_dir)
    finally:
        ck.restore(app)
        vs.remove_tree(ck.SNAPSHOT)
    verdict["correct"] = all(verdict[k] for k in ("only_tests", "gold_applies", "fails_before", "passes_after"))
    vs.write_out(LOGS, "verdict.json", json.dumps(verdict, indent=1, sort_keys=True))
    finish({"answered": 1.0 if answer else 0.0, "correct": 1.0 if verdict["correct"] else 0.0}, cfg)


if __name__ == "__main__":
    main()
