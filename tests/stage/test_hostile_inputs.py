"""Hostile and careless input, one case per defect of issue 11 (each failed before its fix).

What a user gets instead: one line on stderr naming the file, row and field (exit 2), a refusal
before anything is overwritten, a release with a link or a FIFO refused by verify, a recipe error
at ``--dry-run``. The sandbox escapes and the leaks on interruption are in test_hostile_sandbox.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from builder.cli import main
from swe_taskflow.schema import SplitResult

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "builder" / "releases" / "example.toml"


def one_line(capsys, argv, *needles) -> str:
    """Run the CLI in this process: exit 2, one line on stderr, holding every needle."""
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as exc:   # argparse refuses a flag this way
        rc = exc.code
    err = capsys.readouterr().err.strip()
    assert rc == 2, (rc, err)
    assert err.startswith("swe-taskflow: error:") and "\n" not in err, err
    assert "Traceback" not in err and "expected None" not in err, err
    for n in needles:
        assert str(n) in err, (n, err)
    return err


def sessions(path: Path, n: int = 3) -> Path:
    path.write_text("".join(json.dumps({"session_id": f"s{i}", "messages": [
        {"text": f"fix bug {i}", "intent": "bug-fix"}, {"text": "why?", "intent": "explain"}]}) + "\n"
        for i in range(n)))
    return path


@pytest.fixture()
def target(tmp_path) -> Path:
    from tests.support.synthetic import uniform_target

    uniform_target(tmp_path / "target.json")
    return tmp_path / "target.json"


# ------------------------------------------------------------------ bytes no reader may choke on

def _commands(t: Path, bad: Path, target: Path):
    d = t / "dir"
    d.mkdir(exist_ok=True)
    return {
        "flow measure": ["flow", "measure", bad, "--out", t / "o.json"],
        "flow score (target)": ["flow", "score", "--target", bad, "--benchmark", sessions(t / "s.jsonl")],
        "flow score (benchmark)": ["flow", "score", "--target", target, "--benchmark", bad],
        "flow gap": ["flow", "gap", "--target", target, "--benchmark", bad],
        "flow plot": ["flow", "plot", bad, "--out", t / "plot"],
        "classify": ["classify", bad, "--out", t / "o.jsonl"],
        "classify agreement": ["classify", "agreement", bad, sessions(t / "s2.jsonl")],
        "split run": ["split", "run", "--tasks", bad, "--out", t / "o.jsonl"],
        "split check": ["split", "check", bad],
        "select (tasks)": ["select", "--tasks", bad, "--target", target, "--out", t / "sel"],
        "select (target)": ["select", "--tasks", sessions(t / "s3.jsonl"), "--target", bad, "--out", t / "sel"],
        "qa generate": ["qa", "generate", "--tasks", bad, "--trajectories", d, "--out", t / "o.jsonl",
                        "--llm", "replay", "--model", "m", "--store", d],
        "proofs validate": ["proofs", "validate", "--pool", bad, "--repos", d, "--out", t / "o.jsonl",
                            "--sandbox", "bwrap"],
        "proofs run": ["proofs", "run", "--repo", d, "--script", bad, "--sandbox", "bwrap"],
        "build": ["build", bad, "--out", t / "b", "--dry-run"],
    }


LINE_2_NOT_UTF8 = b'{"session_id": "s1", "messages": [{"text": "a", "intent": "bug-fix"}]}\n{"text": "caf\xe9"}\n'


@pytest.mark.parametrize("command", [
    "flow measure", "flow score (target)", "flow score (benchmark)", "flow gap", "flow plot", "classify",
    "classify agreement", "split check", "select (tasks)", "select (target)", "proofs validate"])
def test_invalid_utf8_is_one_line_naming_file_and_line(tmp_path, capsys, target, command):
    bad = tmp_path / "bad.jsonl"
    sessions_file = command.startswith(("flow", "classify"))
    bad.write_bytes(LINE_2_NOT_UTF8 if sessions_file else b'{"text": "caf\xe9"}\n')
    one_line(capsys, _commands(tmp_path, bad, target)[command], f"{bad}:{2 if sessions_file else 1}", "UTF-8")


@pytest.mark.parametrize("command", ["proofs run", "build"])
def test_invalid_utf8_in_a_script_or_recipe_is_one_line(tmp_path, capsys, target, command):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"echo caf\xe9\n")
    one_line(capsys, _commands(tmp_path, bad, target)[command], bad, "UTF-8")


@pytest.mark.parametrize("command", ["split run", "qa generate"])
def test_invalid_utf8_in_a_tasks_file_is_a_row_with_a_reason(tmp_path, capsys, target, command):
    """Tasks files are sources: a bad row is kept with status and reason (nothing dropped), not a crash."""
    bad = tmp_path / "bad.jsonl"
    first = (ROOT / "builder/data/example/tasks.jsonl").read_bytes().splitlines()[0]
    bad.write_bytes(first + b'\n{"instance_id": "caf\xe9"}\n')
    rc = main([str(a) for a in _commands(tmp_path, bad, target)[command]])
    err = capsys.readouterr().err
    assert rc == 0 and "Traceback" not in err, err
    rows = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert any("line 2" in r.get("reason", "") and "UTF-8" in r.get("reason", "") for r in rows), rows


@pytest.mark.parametrize("command", ["flow measure", "split check", "proofs validate", "select (tasks)"])
def test_deeply_nested_json_is_one_line(tmp_path, capsys, target, command):
    bad = tmp_path / "deep.jsonl"
    bad.write_text('{"a": ' + "[" * 200_000 + "]" * 200_000 + "}\n")
    one_line(capsys, _commands(tmp_path, bad, target)[command], f"{bad}:1", "nested")


def test_lone_surrogate_is_refused_at_read(tmp_path, capsys):
    bad = tmp_path / "cases.jsonl"
    bad.write_text('{"issue": "Fix `a_b` \\ud800 now.", "turns": ["Fix `a_b`", "x", "y"]}\n')
    one_line(capsys, ["split", "check", bad], f"{bad}:1", "surrogate", "issue")


def test_a_folder_where_a_file_is_expected_and_the_reverse(tmp_path, capsys, target):
    folder = tmp_path / "folder.jsonl"
    folder.mkdir()
    one_line(capsys, ["flow", "measure", folder, "--out", tmp_path / "o.json"], folder, "folder")
    one_line(capsys, ["flow", "measure", sessions(tmp_path / "s.jsonl"), "--out", folder], folder, "folder")
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    one_line(capsys, ["flow", "plot", sessions(tmp_path / "s.jsonl"), "--out", a_file], a_file, "not a folder")


# ------------------------------------------------------------------ rows of the wrong type

SPLIT_OK = {"instance_id": "t1", "status": "ok", "parts": ["Fix the bug.", "It must log.", "Add a test."],
            "original_prompt": "Fix the bug. It must log. Add a test."}
QA_OK = {"question_id": "q1", "instance_id": "t1", "question": "Where is x?", "reference_answer": "in a.py",
         "proof_script": "grep -n x a.py", "status": "accepted"}


@pytest.mark.parametrize("which, change, field", [
    ("tasks", {"parts": None}, "parts"),
    ("tasks", {"parts": "abc"}, "parts"),          # was three turns "a", "b", "c"
    ("tasks", {"instance_id": 123}, "instance_id"),  # was kept as an int
    ("pool", {"question": None}, "question"),       # was a turn with null text
    ("pool", {"proof_script": 123}, "proof_script"),
    ("pool", {"question_id": 7}, "question_id"),
])
def test_rows_of_the_wrong_type_are_refused(tmp_path, capsys, target, which, change, field):
    rows = {"tasks": dict(SPLIT_OK), "pool": dict(QA_OK)}
    rows[which].update(change)
    paths = {k: tmp_path / f"{k}.jsonl" for k in rows}
    for k, row in rows.items():
        paths[k].write_text(json.dumps(row) + "\n")
    intents = tmp_path / "intents.jsonl"
    intents.write_text("".join(json.dumps({"text": t, "intent": "bug-fix"}) + "\n"
                               for t in SPLIT_OK["parts"] + [SPLIT_OK["original_prompt"]]))
    one_line(capsys, ["select", "--tasks", paths["tasks"], "--pool", paths["pool"], "--target", target, "--out",
                      tmp_path / "sel", "--intents", intents], f"{paths[which]}:1", field)


def test_duplicate_question_ids_are_refused(tmp_path, capsys):
    pool = tmp_path / "pool.jsonl"
    pool.write_text(json.dumps(QA_OK) + "\n" + json.dumps({**QA_OK, "question": "another"}) + "\n")
    one_line(capsys, ["proofs", "validate", "--pool", pool, "--repos", tmp_path, "--out", tmp_path / "o.jsonl",
                      "--sandbox", "bwrap"], f"{pool}:2", "question_id", "duplicate")


# ------------------------------------------------------------------ flags and silent acceptance

@pytest.mark.parametrize("argv, flag", [
    (["flow", "score", "--target", "T", "--benchmark", "S", "--bootstrap", "1000000000"], "--bootstrap"),
    (["flow", "score", "--target", "T", "--benchmark", "S", "--bootstrap", "10", "--seed", "-1"], "--seed"),
    (["flow", "score", "--target", "T", "--benchmark", "S", "--confidence", "nan"], "--confidence"),
    (["flow", "measure", "S", "--out", "O", "--cap-per-repo", "1", "--seed", "-1"], "--seed"),
    (["flow", "plot", "S", "--out", "D", "--positions", "0"], "--positions"),
    (["proofs", "run", "--repo", "R", "--script", "X", "--timeout", "nan"], "--timeout"),
    (["proofs", "run", "--repo", "R", "--script", "X", "--timeout", "-5"], "--timeout"),
    (["proofs", "validate", "--pool", "P", "--repos", "R", "--out", "O", "--jobs", "100000"], "--jobs"),
    (["select", "--tasks", "S", "--target", "T", "--out", "D", "--seed", "-1"], "--seed"),
    (["select", "--tasks", "S", "--target", "T", "--out", "D", "--restarts", "0"], "--restarts"),
    (["classify", "S", "--out", "O", "--batch-size", "0"], "--batch-size"),
])
def test_absurd_numeric_flags_are_refused_before_any_work(tmp_path, capsys, argv, flag):
    t = tmp_path
    sub = {"T": t / "t.json", "S": sessions(t / "s.jsonl"), "O": t / "o.json", "D": t / "d", "R": t, "X": t / "x.sh",
           "P": t / "p.jsonl"}
    (t / "x.sh").write_text("echo hi\n")
    (t / "p.jsonl").write_text(json.dumps(QA_OK) + "\n")
    one_line(capsys, [sub.get(a, a) for a in argv], flag)


def test_agreement_refuses_files_whose_texts_differ(tmp_path, capsys):
    a = sessions(tmp_path / "a.jsonl")
    b = tmp_path / "b.jsonl"
    b.write_text(a.read_text().replace("why?", "what now?"))
    one_line(capsys, ["classify", "agreement", a, b], b, "text")


def test_split_check_on_an_empty_file_fails(tmp_path, capsys):
    empty = tmp_path / "cases.jsonl"
    empty.write_text("\n")
    one_line(capsys, ["split", "check", empty], empty, "no case")


def test_an_error_never_says_expected_none():
    from swe_taskflow.errors import InputError

    assert str(InputError("bad", path="f", row=2, field="x", actual=5)) == "f:2: field 'x': bad (got 5)"


# ------------------------------------------------------------------ data loss

def test_flow_measure_refuses_to_overwrite_its_input(tmp_path, capsys):
    s = sessions(tmp_path / "s.jsonl")
    before = s.read_bytes()
    one_line(capsys, ["flow", "measure", s, "--out", s], s, "input")
    assert s.read_bytes() == before


def _tiny_recipe(tmp_path: Path, **over: str) -> Path:
    """The example recipe with ``section.key = value`` lines replaced (or added), paths made absolute."""
    lines = EXAMPLE.read_text().replace('"../data/example/', f'"{ROOT}/builder/data/example/').splitlines()
    for dotted, value in over.items():
        section, name = dotted.split(".")
        start = lines.index(f"[{section}]")
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("[")), len(lines))
        hit = next((i for i in range(start + 1, end) if lines[i].split("=")[0].strip() == name), None)
        if hit is None:
            lines.insert(start + 1, f"{name} = {value}")
        else:
            lines[hit] = f"{name} = {value}"
    text = "\n".join(lines) + "\n"
    out = tmp_path / "recipe.toml"
    out.write_text(text)
    return out


def test_build_refuses_to_write_over_files_it_did_not_create(tmp_path, capsys):
    out = tmp_path / "out"
    (out / "release").mkdir(parents=True)
    mine = out / "release" / "my-notes.txt"
    mine.write_text("keep me")
    one_line(capsys, ["build", _tiny_recipe(tmp_path), "--out", out], out, "--overwrite")
    assert mine.read_text() == "keep me"


def test_build_refuses_an_output_inside_a_release(tmp_path, capsys):
    from tests.support.synthetic import small_release

    small_release(tmp_path, name="x", repo_id="org/x")
    one_line(capsys, ["build", _tiny_recipe(tmp_path), "--out", tmp_path / "rel" / "data" / "b"], "release")


# ------------------------------------------------------------------ a tampered release

@pytest.fixture()
def release(tmp_path) -> Path:
    from tests.support.synthetic import small_release

    small_release(tmp_path, name="x", repo_id="org/x")
    return tmp_path / "rel"


def _verify_in_child(release: Path) -> subprocess.CompletedProcess:
    """verify in a child process with a deadline: a FIFO used to block it forever."""
    return subprocess.run([sys.executable, "-m", "builder.cli", "verify", str(release)], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)


def test_verify_refuses_a_symlink_out_of_the_release(release, tmp_path):
    readme = release / "README.md"
    copy = tmp_path / "identical-README.md"
    copy.write_bytes(readme.read_bytes())
    readme.unlink()
    readme.symlink_to(copy)
    proc = _verify_in_child(release)
    assert proc.returncode == 1 and "README.md" in proc.stderr and "regular file" in proc.stderr, proc.stderr


@pytest.mark.parametrize("kind", ["fifo", "loop"])
def test_verify_survives_a_fifo_and_a_symlink_loop(release, kind):
    node = release / "data" / "extra"
    if kind == "fifo":
        os.mkfifo(node)
    else:
        node.symlink_to(node)
    try:
        proc = _verify_in_child(release)
    except subprocess.TimeoutExpired:
        pytest.fail("verify hangs on a FIFO in the release")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "data/extra" in proc.stderr and "regular file" in proc.stderr, proc.stderr


# ------------------------------------------------------------------ hangs

@pytest.mark.slow
def test_split_check_on_a_huge_issue_finishes(tmp_path):
    """About 1 MB of distinct requirement sentences, and single-character runs that made the regexes
    backtrack: quadratic before (hours), linear now (seconds). The deadline only catches a hang."""
    lines = [f"- The function `handler_{i}` in src/mod_{i % 97}/file_{i}.py must return {i * 7} when "
             f"called with `mode_{i % 13}` (see issue {i})." for i in range(9000)]
    issue = "Requirements:\n" + "\n".join(lines)
    cases = [{"issue": issue, "turns": ["\n".join(lines[:3000]), "\n".join(lines[3000:6000]),
                                        "\n".join(lines[6000:8999])]}]
    for run in ("_" * 200_000 + "a", "1" * 200_000 + "x", " \n" * 100_000 + "1. a", "```\n" * 50_000):
        cases.append({"issue": run, "turns": [run[:1000], run[1000:2000], run[2000:]]})
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    try:
        proc = subprocess.run([sys.executable, "-m", "builder.cli", "split", "check", str(path)], cwd=ROOT,
                              capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        pytest.fail("split check did not finish in 300 s")
    first = json.loads(proc.stdout.splitlines()[0])   # the last requirement line was left out of the turns
    details = [v["detail"] for v in first["violations"]]
    assert any(v["kind"] == "dropped-requirement" and "handler_8999" in v["detail"] for v in first["violations"])
    assert details and all("8999" in d or "62993" in d for d in details), details
    assert len(proc.stdout.splitlines()) == len(cases)


# ------------------------------------------------------------------ recipes and stages

@pytest.mark.parametrize("over, key", [
    ({"classifier.name": '"no-such-classifier"'}, "classifier.name"),
    ({"classifier.device": '"tpu"'}, "classifier.device"),
    ({"target.path": '"missing-target.json"'}, "target.path"),
    ({"target.path": f'"{EXAMPLE}"'}, "target.path"),              # exists, but is not a target file
    ({"release.name": '"bad name/with spaces"'}, "release.name"),
    ({"conditions.seed": "-1"}, "conditions.seed"),
    ({"select.seed": "-1"}, "select.seed"),
    ({"source.spec": '"missing-tasks.jsonl"'}, "source.spec"),
    ({"split.splitter": '"magic"'}, "split.splitter"),
    ({"proofs.timeout_s": "100000000"}, "proofs.timeout_s"),
])
def test_dry_run_names_every_bad_recipe_key(tmp_path, capsys, over, key):
    recipe = _tiny_recipe(tmp_path, **over)
    one_line(capsys, ["build", recipe, "--out", tmp_path / "out", "--dry-run"], recipe, key)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("raised, words", [
    (lambda: {}["instance_id"], ["KeyError", "instance_id"]),
    (lambda: SplitResult("t1", "ok", ("a",)), ["field 'parts'", "3 non-empty parts"]),   # an error with no file
])
def test_a_failing_stage_names_the_stage(tmp_path, raised, words):
    from builder.pipeline.cache import StageCache
    from builder.pipeline.recipe import load_recipe
    from builder.pipeline.runner import Stage, run_stages
    from swe_taskflow.errors import TaskflowError

    with pytest.raises(TaskflowError) as info:
        run_stages([Stage("boom", lambda inputs, ctx: raised())], load_recipe(EXAMPLE), StageCache(tmp_path / "cache"))
    assert "stage 'boom'" in str(info.value), str(info.value)
    for w in words:
        assert w in str(info.value), str(info.value)
