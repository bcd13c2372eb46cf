"""SWE-bench Verified test commands and log parsers (builder.sources.swebench_specs) against the swebench
package itself: the run script's test command is the line swebench's own eval script runs between its output
markers, and the shipped parser.py gives the statuses swebench's parser and grading give."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from builder.sources import load_tasks
from swe_taskflow.errors import ConfigError, InputError

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "swe-bench-verified" / "verified_sample.jsonl"


def _swebench():
    """swebench 4.1.0 (the `verified` extra): skipped with the reason when absent."""
    sb = pytest.importorskip("swebench", reason="swebench==4.1.0 is not installed (pip install -e '.[verified]')")
    if sb.__version__ != "4.1.0":
        pytest.skip(f"swebench {sb.__version__} is installed; the specs are checked against 4.1.0")
    return sb


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _swebench_test_line(row: dict) -> str:
    """The command swebench's own eval script runs between START and END (make_eval_script_list, offline)."""
    from swebench.harness.constants import END_TEST_OUTPUT, MAP_REPO_VERSION_TO_SPECS, START_TEST_OUTPUT
    from swebench.harness.test_spec.create_scripts import make_eval_script_list
    specs = MAP_REPO_VERSION_TO_SPECS[row["repo"]][row["version"]]
    lines = make_eval_script_list(row, specs, "testbed", "/testbed", row["base_commit"], row["test_patch"])
    start, end = lines.index(f": '{START_TEST_OUTPUT}'"), lines.index(f": '{END_TEST_OUTPUT}'")
    assert end == start + 2
    return lines[start + 1]


def _check_against_swebench(source: Path, out: Path) -> None:
    """Every row of ``source``: test command, parser and image as swebench gives them."""
    from swebench.harness.log_parsers import MAP_REPO_TO_PARSER

    from builder.sources.swebench_specs import write_run_scripts
    rows = _rows(source)
    index = write_run_scripts(rows, out)
    assert sorted(index["tasks"]) == sorted(r["instance_id"] for r in rows)
    tasks = {t.instance_id: t for t in load_tasks(str(source), source="swe-bench-verified").tasks}
    for row in rows:
        iid = row["instance_id"]
        rec = index["tasks"][iid]
        want = _swebench_test_line(row)
        assert rec["test_command"] == want, iid
        script = (out / iid / "run_script.sh").read_text()
        body = script.split(">>>>> Start Test Output'\n", 1)[1].split("\n", 1)[0]
        assert body == want, iid
        assert rec["parser"] == MAP_REPO_TO_PARSER[row["repo"]].__name__, iid
        parser = (out / iid / "parser.py").read_text()
        assert f"def {rec['parser']}(" in parser and f"{rec['parser']}(log, None)" in parser, iid
        assert "pip install" not in script.replace(f"({rec['install_left_out']})", ""), iid
        assert tasks[iid].image_name == rec["image"], iid   # the loader's image is swebench's


def test_fixture_rows_match_swebench_specs(tmp_path):
    _swebench()
    _check_against_swebench(FIXTURE, tmp_path / "run_scripts")


@pytest.mark.data
def test_all_500_verified_rows_match_swebench_specs(shared_dir, tmp_path):
    _swebench()
    from swebench.harness.log_parsers import MAP_REPO_TO_PARSER

    path = shared_dir / "data" / "swe-bench-verified" / "swebench_verified_500.jsonl"
    rows = _rows(path)
    assert len(rows) == 500 and {r["repo"] for r in rows} <= set(MAP_REPO_TO_PARSER)
    _check_against_swebench(path, tmp_path / "run_scripts")
    index = json.loads((tmp_path / "run_scripts" / "specs.json").read_text())
    assert len(index["tasks"]) == 500 and index["swebench"] == "4.1.0"


LOGS = {
    "django/django": ("noise ... FAIL\n>>>>> Start Test Output\n"
                      "test_a (m.T) ... ok\ntest_b (m.T) ... FAIL\ntest_c (m.T) ... skipped 'x'\n"
                      "test_d (m.T) ... ERROR\n>>>>> End Test Output\nafter ... ok\n"),
    "astropy/astropy": (">>>>> Start Test Output\nPASSED a/t.py::test_x\nFAILED a/t.py::test_y - boom\n"
                        "XFAIL a/t.py::test_z\nSKIPPED [1] a/t.py:3: why\n>>>>> End Test Output\n"),
    "sympy/sympy": (">>>>> Start Test Output\ntest_one ok\ntest_two F\ntest_three E\n>>>>> End Test Output\n"),
    "pylint-dev/pylint": (">>>>> Start Test Output\nPASSED t.py::test_p[/tmp/x/y.py]\nFAILED t.py::test_q\n"
                          ">>>>> End Test Output\n"),
}


@pytest.mark.parametrize("repo", sorted(LOGS))
def test_shipped_parser_gives_swebench_statuses(repo, tmp_path):
    _swebench()
    from swebench.harness.constants import END_TEST_OUTPUT, START_TEST_OUTPUT
    from swebench.harness.grading import test_passed
    from swebench.harness.log_parsers import MAP_REPO_TO_PARSER

    from builder.sources.swebench_specs import write_run_scripts
    row = next(r for r in _rows(FIXTURE) if r["repo"] == repo)
    write_run_scripts([row], tmp_path / "rs")
    log = LOGS[repo]
    (tmp_path / "out.txt").write_text(log)
    (tmp_path / "err.txt").write_text("")
    subprocess.run([sys.executable, str(tmp_path / "rs" / row["instance_id"] / "parser.py"),
                    str(tmp_path / "out.txt"), str(tmp_path / "err.txt"), str(tmp_path / "o.json")], check=True)
    got = {t["name"]: t["status"] for t in json.loads((tmp_path / "o.json").read_text())["tests"]}
    window = log.split(START_TEST_OUTPUT)[1].split(END_TEST_OUTPUT)[0]
    theirs = MAP_REPO_TO_PARSER[repo](window, None)
    assert theirs and set(got) == set(theirs)
    for name, status in theirs.items():   # swebench's grading: PASSED and XFAIL pass
        assert (got[name] == "PASSED") == test_passed(name, theirs), name
    assert "after" not in " ".join(got)   # outside the markers: not parsed


def test_unknown_version_and_other_swebench_are_refused(tmp_path, monkeypatch):
    sb = _swebench()
    from builder.sources.swebench_specs import write_run_scripts
    row = dict(_rows(FIXTURE)[0], version="0.0")
    with pytest.raises(InputError, match="row 1.*field 'version'.*no specs for this repository version"):
        write_run_scripts([row], tmp_path / "a")
    assert not (tmp_path / "a").exists()   # a failure leaves nothing
    with pytest.raises(InputError, match="field 'instance_id'"):
        write_run_scripts([dict(_rows(FIXTURE)[0], instance_id="../x")], tmp_path / "b")
    monkeypatch.setattr(sb, "__version__", "5.0.0")
    with pytest.raises(ConfigError, match="another swebench release"):
        write_run_scripts(_rows(FIXTURE), tmp_path / "c")


# ---------------------------------------------------------------- untrusted rows (issue 32), no swebench needed

def _fake_swebench(monkeypatch, directives):
    """swebench's maps as the module reads them, with ``directives`` standing for get_test_directives."""
    import builder.sources.swebench_specs as specs

    class FakeTestSpec:
        def __init__(self, instance_id, **kw):
            self.instance_image_key = f"swebench/sweb.eval.x86_64.{instance_id}:latest"

    def parser(log, test_spec):
        return {}

    spec = {"test_cmd": "pytest -rA", "eval_commands": ["export LANG=C"], "install": "pip install ."}
    maps = ({"o/r": {"1.0": spec}},
            {"o/r": parser}, directives, FakeTestSpec)
    monkeypatch.setattr(specs, "_swebench", lambda: maps)
    monkeypatch.setattr(specs, "parser_source", lambda spec: "# parser\n")
    return specs


HOSTILE_PATHS = ["tests/x.py; touch /tmp/pwned", "tests/$(touch /tmp/pwned).py", "tests/`id`.py",
                 "tests/it's.py", 'tests/"q".py', "tests/a b.py", "tests/-rf", "tests/$HOME|x&y>z"]


@pytest.mark.parametrize("path", HOSTILE_PATHS)
def test_test_patch_paths_reach_run_script_as_one_quoted_word(path, tmp_path, monkeypatch):
    """Old code pasted the directive as it came: ``;``, ``$()``, backquotes became commands (as root)."""
    import shlex

    specs = _fake_swebench(monkeypatch, lambda inst: ["tests/ok.py", path])
    row = {"instance_id": "o__r-1", "repo": "o/r", "version": "1.0", "base_commit": "0" * 40, "test_patch": ""}
    specs.write_run_scripts([row], tmp_path / "out")
    script = (tmp_path / "out" / "o__r-1" / "run_script.sh").read_text()
    line = script.split(">>>>> Start Test Output'\n", 1)[1].split("\n", 1)[0]
    assert shlex.split(line) == ["pytest", "-rA", "tests/ok.py", path]
    marker = tmp_path / "pwned"
    # run the test line with the real shell, pytest replaced by echo: nothing but one echo runs
    out = subprocess.run(["bash", "-c", line.replace("pytest", "echo", 1).replace("/tmp/pwned", str(marker))],
                         capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0 and not marker.exists()
    assert out.stdout.rstrip("\n") == " ".join(["-rA", "tests/ok.py", path.replace("/tmp/pwned", str(marker))])


@pytest.mark.parametrize("bad", ["tests/a\nrm -rf /.py", "tests/a\r.py", "tests/\x00.py", ""])
def test_a_path_with_a_newline_or_control_character_is_refused(bad, tmp_path, monkeypatch):
    specs = _fake_swebench(monkeypatch, lambda inst: [bad])
    row = {"instance_id": "o__r-1", "repo": "o/r", "version": "1.0", "base_commit": "0" * 40, "test_patch": ""}
    with pytest.raises(InputError) as ei:
        specs.write_run_scripts([row], tmp_path / "out", where="rows.jsonl")
    assert ei.value.field == "test_patch" and ei.value.row == 1 and "rows.jsonl" in str(ei.value)
    assert not (tmp_path / "out").exists()


def test_an_instance_id_with_a_newline_never_leaves_its_comment(tmp_path, monkeypatch):
    specs = _fake_swebench(monkeypatch, lambda inst: [])
    row = {"instance_id": "o__r-1\ntouch /tmp/pwned", "repo": "o/r", "version": "1.0", "base_commit": "0" * 40}
    with pytest.raises(InputError) as ei:
        specs.task_spec(row, where="rows.jsonl", row_number=3)
    assert ei.value.field == "instance_id" and ei.value.row == 3
    spec = specs.TaskSpec("x\ntouch /tmp/pwned", "o/r", "1.0", "pytest", (), "pip install .\nid", "p", "img")
    lines = specs.run_script(spec).splitlines()
    assert all(line.startswith("#") or ("touch" not in line and line != "id") for line in lines)


def _deep(n: int = 5000):
    value: list = []
    for _ in range(n):
        value = [value]
    return value


@pytest.mark.parametrize("field", ["version", "test_patch", "instance_id", "repo"])
def test_a_deeply_nested_value_is_one_error_naming_row_and_field(field, tmp_path, monkeypatch):
    """Old code: str() of a 5,000-deep list in a row (a parquet or Hub source gives one) raised RecursionError."""
    specs = _fake_swebench(monkeypatch, lambda inst: [])
    good = {"instance_id": "o__r-1", "repo": "o/r", "version": "1.0", "base_commit": "0" * 40, "test_patch": ""}
    with pytest.raises(InputError) as ei:
        specs.write_run_scripts([good, {**good, "instance_id": "o__r-2", field: _deep()}], tmp_path / "out",
                                where="rows.parquet")
    assert ei.value.row == 2 and ei.value.field == field and "rows.parquet" in str(ei.value)
    assert "list" in str(ei.value) and not (tmp_path / "out").exists()


def test_a_deeply_nested_row_in_a_file_is_one_line(tmp_path, monkeypatch, capsys):
    """The command on a JSONL file with a 5,000-deep list: one line naming the file and line, no traceback."""
    from builder.sources.swebench_specs import main

    deep = "[" * 5000 + "]" * 5000
    rows = _rows(FIXTURE)
    src = tmp_path / "rows.jsonl"
    src.write_text(json.dumps(rows[0])[:-1] + ', "hints_deep": ' + deep + "}\n" + json.dumps(rows[1]) + "\n")
    _fake_swebench(monkeypatch, lambda inst: [])
    rc = main(["--tasks", str(src), "--out", str(tmp_path / "out")])
    out = capsys.readouterr()
    assert rc == 2 and "Traceback" not in out.out + out.err
    assert "rows.jsonl: line 1" in out.out and "nested too deeply" in out.out
