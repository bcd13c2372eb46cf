"""``swe-taskflow split check`` and ``split run`` (structural) on real SWE-Bench Pro tasks."""

from __future__ import annotations

import json

import pytest

from builder.cli import main
from builder.split import get_splitter
from builder.sources import load_tasks

QUTE = "instance_qutebrowser__qutebrowser-5e0d6dc1483cb3336ea0e3dcbd4fe4aa00fc1742"


@pytest.fixture(scope="module")
def pro_file(pro_sample):
    return pro_sample


def test_split_check_cli(pro_file, tmp_path, capsys):
    task = next(t for t in load_tasks(pro_file).tasks if t.instance_id.startswith(QUTE))
    parts = list(get_splitter("structural").split(task).parts)
    cases = [{"issue": task.original_prompt, "turns": parts},
             {"issue": task.original_prompt, "turns": [parts[0], "As split above, here is the rest.\n" + parts[1], parts[2]]},
             {"issue": task.original_prompt, "turns": parts[:2]}]
    f = tmp_path / "cases.jsonl"
    f.write_text("".join(json.dumps(c) + "\n" for c in cases))
    rc = main(["split", "check", str(f)])
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert rc == 1 and [x["ok"] for x in lines] == [True, False, False]
    assert lines[0]["violations"] == []
    assert {v["kind"] for v in lines[1]["violations"]} == {"process-reference"}
    assert "wrong-turn-count" in {v["kind"] for v in lines[2]["violations"]}
    f.write_text(json.dumps(cases[0]) + "\n")
    assert main(["split", "check", str(f)]) == 0


def test_split_check_bad_case_names_line_and_field(tmp_path, capsys):
    f = tmp_path / "cases.jsonl"
    f.write_text('{"issue": "x", "turns": ["a", "b", "c"]}\n{"issue": "x", "turns": "abc"}\n')
    assert main(["split", "check", str(f)]) == 2
    err = capsys.readouterr().err
    assert f"{f}:2" in err and "turns" in err


def test_split_run_structural_every_task_gets_a_row(pro_file, tmp_path, capsys):
    rows = [json.loads(x) for x in pro_file.read_text().splitlines()]
    small = tmp_path / "tasks.jsonl"
    small.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "splits.jsonl"
    assert main(["split", "run", "--tasks", str(small), "--out", str(out)]) == 0
    got = [json.loads(x) for x in out.read_text().splitlines()]
    assert [g["instance_id"] for g in got] == [r["instance_id"] for r in rows]
    for g in got:
        assert g["status"] in ("ok", "ineligible", "failed") and g["splitter"]["name"] == "structural"
        assert (len(g["parts"]) == 3) == (g["status"] == "ok") and g["original_prompt"]
    first = out.read_bytes()
    assert main(["split", "run", "--tasks", str(small), "--out", str(out)]) == 0
    assert out.read_bytes() == first                          # byte-identical rerun
    summary = json.loads(capsys.readouterr().out.splitlines()[0])
    assert summary["tasks"] == len(rows) == 14


def test_help_for_every_command(capsys):
    for argv in (["split", "run", "--help"], ["split", "check", "--help"], ["qa", "generate", "--help"]):
        with pytest.raises(SystemExit) as ei:
            main(argv)
        assert ei.value.code == 0
    assert "usage" in capsys.readouterr().out


def test_malformed_task_gets_a_failed_row():
    from swe_taskflow.schema import Task
    bad = Task(instance_id="row-3", source="swe-bench-pro", source_revision="", repo="", base_commit="",
               original_prompt="", status="malformed", reason="tasks.jsonl: row 3: field 'problem_statement' missing")
    res = get_splitter("structural").split(bad)
    assert res.status == "failed" and "row 3" in res.reason
