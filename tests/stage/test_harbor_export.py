"""Harbor export (always on, no Harbor needed): layout, schema, binding, digests, no hidden leak, bad input."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from builder.evaluation.export import (ANSWER_DIR, answer_instruction, export_harbor, step_name, task_digest, task_files,
                                        toml_dumps)
from builder.evaluation.options import ExportOptions
from swe_taskflow.release import open_release
from builder.evaluation.source import run_spec_for
from builder.task_files import patch_parts
from swe_taskflow.errors import ConfigError, InputError
from swe_taskflow.visibility import agent_view

from tests.support.harbor_fixture import HIDDEN_MARKERS, build_fixture_release

SCHEMA = Path(__file__).parents[1] / "fixtures" / "harbor" / "task-schema-harbor-0.25.0.json"


@pytest.fixture(scope="module")
def fixture(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("harbor-export")
    rel, src = build_fixture_release(tmp)
    return tmp, rel, src


@pytest.fixture(scope="module")
def exported(fixture):
    tmp, rel, _ = fixture
    return {c: (export_harbor(rel, c, tmp / f"out-{c}"), tmp / f"out-{c}")
            for c in ("single_prompt", "qa_last", "qa_only")}


def _toml(path: Path) -> dict:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def test_one_task_per_row_one_step_per_turn_in_order(fixture, exported):
    _, rel, _ = fixture
    release = open_release(rel)
    for cond, (result, out) in exported.items():
        rows = release.rows(cond)
        assert [t["instance_id"] for t in result.tasks] == [r["instance_id"] for r in rows]
        assert all(t["status"] == "exported" for t in result.tasks)
        for row, rec in zip(rows, result.tasks):
            cfg = _toml(out / rec["dir"] / "task.toml")
            view = agent_view(row)
            assert [s["name"] for s in cfg["steps"]] == [step_name(t.turn_index, t.kind) for t in view.turns]
            for turn, step in zip(view.turns, cfg["steps"]):
                text = (out / rec["dir"] / "steps" / step["name"] / "instruction.md").read_text(encoding="utf-8")
                if turn.kind == "issue":
                    assert text == turn.text        # the turn's text and nothing else
                else:
                    assert text == answer_instruction(turn.text, step["name"])
                    assert f"{ANSWER_DIR}/{step['name']}.md" in text
                tests = out / rec["dir"] / "steps" / step["name"] / "tests"
                assert (tests / "test.sh").stat().st_mode & 0o111
                assert ((tests / "checkpoint.json").exists()) == (turn.kind == "issue")
                assert ((tests / "answer.json").exists()) == (turn.kind != "issue")


def test_task_toml_matches_harbor_schema_and_binds_the_release_row(fixture, exported):
    import jsonschema
    schema = json.loads(SCHEMA.read_text())
    _, rel, _ = fixture
    release = open_release(rel)
    result, out = exported["qa_last"]
    rows = {r["instance_id"]: r for r in release.rows("qa_last")}
    for rec in result.tasks:
        cfg = _toml(out / rec["dir"] / "task.toml")
        jsonschema.validate(cfg, schema)
        row = rows[rec["instance_id"]]
        meta = cfg["metadata"]["swe_taskflow"]
        assert (meta["release"], meta["version"], meta["condition"]) == ("harbor-fixture", "0.1.0", "qa_last")
        assert meta["split_sha256"] == release.split("qa_last").sha256
        assert meta["row_sha256"] == row["row_sha256"]
        assert meta["source_task_sha256"] == row["source_task_sha256"]
        assert meta["manifest_sha256"] == release.manifest_sha256
        assert cfg["environment"]["docker_image"] == row["image_name"]
        assert cfg["environment"]["network_mode"] == "no-network"
        assert cfg["agent"]["user"] not in ("root", "0", 0)
        assert cfg["multi_step_reward_strategy"] == "final"
        assert all(s.get("min_reward") is None for s in cfg["steps"])     # steps never stop early
    bad = dict(cfg, environment={**cfg["environment"], "network_mode": "offline"})
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_dataset_toml_pins_each_task_by_its_digest(exported, tmp_path):
    import shutil
    result, out = exported["qa_last"]
    ds = _toml(out / "dataset.toml")
    assert ds["dataset"]["name"] == result.dataset_name
    assert [t["name"] for t in ds["tasks"]] == [t["name"] for t in result.tasks]
    for ref, rec in zip(ds["tasks"], result.tasks):
        assert ref["digest"] == task_digest(out / rec["dir"])
    first = tmp_path / "copy"
    shutil.copytree(out / result.tasks[0]["dir"], first)
    before = task_digest(first)
    assert before == result.tasks[0]["digest"]
    (first / "steps" / "turn-01-issue" / "instruction.md").write_text("changed\n")
    assert task_digest(first) != before
    assert "task.toml" in task_files(first) and "steps/turn-01-issue/tests/test.sh" in task_files(first)


def _visible_files(task_dir: Path) -> list[Path]:
    """What an agent can read: everything but tests/ (uploaded at verification) and solution/ (oracle only)."""
    return [p for p in task_dir.rglob("*") if p.is_file()
            and not {"tests", "solution"} & set(p.relative_to(task_dir).parts)]


def test_no_hidden_value_reaches_an_agent_visible_file(exported):
    for cond, (result, out) in exported.items():
        hidden_seen = set()
        for rec in result.tasks:
            task_dir = out / rec["dir"]
            for path in _visible_files(task_dir):
                text = path.read_text(encoding="utf-8")
                leaked = [m for m in HIDDEN_MARKERS if m in text]
                assert not leaked, f"{cond}: {path} shows {leaked}"
            for path in task_dir.rglob("*"):
                if path.is_file() and path not in _visible_files(task_dir):
                    hidden_seen |= {m for m in HIDDEN_MARKERS if m in path.read_text(encoding="utf-8")}
        # the check can fail: the hidden values are in the export, where only the grader and the oracle look
        if cond != "qa_only":
            assert {"gold-secret", "hidden-test-body", "test_secret_name", "test_kept_name"} <= hidden_seen
        if cond != "single_prompt":
            assert "reference-answer-secret" in hidden_seen


def test_export_is_byte_identical_twice(fixture, exported, tmp_path):
    _, rel, _ = fixture
    again = export_harbor(rel, "qa_last", tmp_path / "again")
    first, out = exported["qa_last"]
    files = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "again") for p in (tmp_path / "again").rglob("*") if p.is_file())
    for f in files:
        if f.name == "registry.json":   # the one file that names where the dataset lies (--out as given)
            assert (out / f).read_text().replace(out.as_posix(), "OUT") == \
                (tmp_path / "again" / f).read_text().replace((tmp_path / "again").as_posix(), "OUT")
            continue
        assert (out / f).read_bytes() == (tmp_path / "again" / f).read_bytes(), f
    assert [t["digest"] for t in again.tasks] == [t["digest"] for t in first.tasks]


def test_task_filter_and_options(fixture, tmp_path):
    _, rel, _ = fixture
    res = export_harbor(rel, "split_prompt", tmp_path / "o", tasks=["fixture__harbor-1"],
                        opts=ExportOptions(org="acme", agent_user="dev", cpus=2, memory_mb=4096,
                                           with_solution=False))
    assert [t["instance_id"] for t in res.tasks] == ["fixture__harbor-1"]
    cfg = _toml(tmp_path / "o" / res.tasks[0]["dir"] / "task.toml")
    assert cfg["task"]["name"] == "acme/fixture__harbor-1"
    assert (cfg["agent"]["user"], cfg["environment"]["cpus"], cfg["environment"]["memory_mb"]) == ("dev", 2, 4096)
    assert not list((tmp_path / "o").rglob("solution"))


def test_bad_input_fails_with_a_named_field_and_writes_nothing(fixture, tmp_path):
    _, rel, src = fixture
    with pytest.raises(ConfigError, match="condition"):
        export_harbor(rel, "no_such_condition", tmp_path / "a")
    with pytest.raises(ConfigError, match="tasks"):
        export_harbor(rel, "qa_last", tmp_path / "b", tasks=["nope"])
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "x").write_text("x")
    with pytest.raises(ConfigError, match="not empty"):
        export_harbor(rel, "qa_last", tmp_path / "c")
    # a source whose task differs from the one the release was built from is refused
    rows = [json.loads(line) for line in src.read_text().splitlines()]
    rows[0]["fail_to_pass"] = json.dumps(["tests/other.py::X::test_y"])
    changed = tmp_path / "changed.jsonl"
    changed.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError, match="source_task_sha256"):
        export_harbor(rel, "qa_last", tmp_path / "d", source=str(changed))
    assert not (tmp_path / "d").exists() and not list(tmp_path.glob(".export-*"))


def test_run_scripts_route_for_tasks_without_a_test_command(fixture, tmp_path):
    from builder.sources import load_tasks
    _, _, src = fixture
    rows = [json.loads(line) for line in src.read_text().splitlines()]
    for r in rows:
        r.pop("test_command")
        r["before_repo_set_cmd"] = "git reset --hard X\ngit checkout GOLD -- tests/test_hidden.py"
        r["selected_test_files_to_run"] = json.dumps(["tests/test_hidden.py", "tests/test_old.py"])
    path = tmp_path / "pro.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    task = load_tasks(str(path), source="swe-bench-pro").ok[0]
    with pytest.raises(ConfigError, match="--run-scripts"):
        run_spec_for(task)
    with pytest.raises(InputError, match="run_script.sh"):
        run_spec_for(task, tmp_path / "scripts")
    d = tmp_path / "scripts" / task.instance_id
    d.mkdir(parents=True)
    (d / "run_script.sh").write_text("#!/bin/bash\necho run\n")
    with pytest.raises(InputError, match="parser.py"):
        run_spec_for(task, tmp_path / "scripts")
    (d / "parser.py").write_text("print('parse')\n")
    spec = run_spec_for(task, tmp_path / "scripts")
    assert (spec.kind, spec.selected, spec.before_cmd) == (
        "run-script", "tests/test_hidden.py,tests/test_old.py", "git checkout GOLD -- tests/test_hidden.py")
    assert spec.config()["run_script"] == "run_script.sh"


def test_patch_parts_applied_in_order_rebuild_the_gold_tree(tmp_path):
    import subprocess

    def git(repo, *args, stdin=None):
        return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                              input=stdin, capture_output=True, text=True, check=True).stdout

    base = tmp_path / "base"
    base.mkdir()
    (base / "a.txt").write_text("".join(f"line {i}\n" for i in range(60)))
    (base / "b.txt").write_text("keep\n")
    git(base, "init", "-q")
    git(base, "add", "-A")
    git(base, "commit", "-qm", "base")
    lines = [f"line {i}\n" for i in range(60)]
    lines[2], lines[30], lines[57] = "two\n", "thirty\n", "fifty-seven\n"
    (base / "a.txt").write_text("".join(lines))
    (base / "c.txt").write_text("new file\n")
    git(base, "add", "-A")
    patch = git(base, "diff", "--cached")
    gold_tree = git(base, "write-tree").strip()
    git(base, "reset", "-q", "--hard")
    assert patch.count("\n@@ ") == 4
    for n in (1, 2, 3, 4, 6):
        parts = patch_parts(patch, n)
        assert len(parts) == n
        work = tmp_path / f"w{n}"
        subprocess.run(["git", "clone", "-q", str(base), str(work)], check=True)
        trees = [git(work, "write-tree").strip()]
        for part in parts:
            if part:
                git(work, "apply", "-", stdin=part)
            git(work, "add", "-A")
            trees.append(git(work, "write-tree").strip())
        assert trees[-1] == gold_tree                       # in order, the parts rebuild the gold change
        changed = [a != b for a, b in zip(trees, trees[1:])]
        assert changed == [bool(p) for p in parts]          # every non-empty part changes the tree
    assert patch_parts(patch, 6)[:2] == ["", ""]           # fewer hunks than parts: the first parts are empty
    assert patch_parts("", 3) == ["", "", ""]
    with pytest.raises(ConfigError):
        patch_parts(patch, 0)


def test_toml_writer_round_trips_awkward_strings():
    doc = {"a": "quote \" backslash \\ tab \t newline \n del \x7f unicode é 😀", "n": 3, "f": 1.5, "b": False,
           "l": ["x", "y"], "t": {"k": "v", "sub": {"z": 1}}, "arr": [{"name": "s1", "v": {"x": 1}}, {"name": "s2"}],
           "weird key": "ok"}
    text = toml_dumps(doc, header="line one\nline two")
    assert text.startswith("# line one\n# line two\n")
    assert tomllib.loads(text) == doc
    assert toml_dumps({**doc, "gone": None, "t": {**doc["t"], "gone": None}}, header="line one\nline two") == text


@pytest.mark.parametrize("doc, field", [
    ({"metadata": {"score": float("nan")}}, "metadata.score"),
    ({"limits": [1.0, float("inf")]}, "limits[]"),
    ({"steps": [{"when": object()}]}, "steps[].when"),
    ({"t": {1: "x"}}, "t.1"),
    ({"l": [None]}, "l[]"),
])
def test_toml_writer_refuses_what_toml_cannot_hold_naming_the_field(doc, field):
    with pytest.raises(InputError) as info:
        toml_dumps(doc)
    assert info.value.field == field


@pytest.mark.parametrize("verifier_s, expected", [(1800.0, [840.0, 1500.0, 1500.0]), (600.0, [240.0, 480.0, 480.0])])
def test_a_checkpoints_runs_end_inside_the_verifiers_own_timeout(fixture, tmp_path, verifier_s, expected):
    """The first checkpoint runs the tests twice (clean, then the agent's), each with the hidden tests in /app: a
    verifier Harbor kills half-way would leave them for the agent's next turn, so every run ends inside it."""
    _, rel, _ = fixture
    res = export_harbor(rel, "split_prompt", tmp_path / "o", tasks=["fixture__harbor-1"],
                        opts=ExportOptions(verifier_timeout_s=verifier_s))
    steps = sorted((tmp_path / "o" / res.tasks[0]["dir"] / "steps").iterdir())
    cfgs = [json.loads((s / "tests" / "checkpoint.json").read_text()) for s in steps]
    assert [c["clean"] for c in cfgs] == [True, False, False]
    assert [c["timeout_s"] for c in cfgs] == expected
    assert all(c["timeout_s"] * (2 if c["clean"] else 1) <= verifier_s - 120 for c in cfgs)
