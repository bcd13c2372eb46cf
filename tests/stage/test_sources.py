"""Source loading on real SWE-Bench Pro rows (committed fixtures; the full 731 on ../shared) and mutated copies."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from builder.sources import load_tasks
from builder.sources.normalize import DECODED_KEY
from swe_taskflow.errors import ConfigError, InputError

PRO = "data/swe-bench-pro"


def _rows(path: Path, n: int | None = None) -> list[dict]:
    out = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            out.append(json.loads(line))
            if n is not None and len(out) == n:
                break
    return out


def _write(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def pro731(shared_dir):
    return load_tasks(str(shared_dir / PRO / "swe_bench_pro_public_731.jsonl"))


@pytest.fixture(scope="module")
def pro(pro_sample):
    return load_tasks(str(pro_sample))


@pytest.fixture(scope="module")
def hf(hf_sample):
    return load_tasks(str(hf_sample))


def _check_normalized(load, path: Path) -> None:
    assert not load.malformed and load.provenance["source"] == "swe-bench-pro"
    assert load.provenance["files"][0]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    for task, row in zip(load.tasks, _rows(path), strict=True):
        assert task.instance_id == row["instance_id"] and task.repo == row["repo"]
        assert list(task.fail_to_pass) == row["fail_to_pass"]
        assert task.extra["selected_test_files"] == row["selected_test_files"]
        assert task.extra["dockerhub_tag"] == row["dockerhub_tag"]
        assert task.image_name == row["image_name"]
        assert task.source_revision == load.provenance["revision"]
        assert task.original_prompt.startswith(row["problem_statement"])


def test_pro_rows_normalize(pro, pro_sample):
    assert len(pro.tasks) == 14
    _check_normalized(pro, pro_sample)


@pytest.mark.data
def test_all_731_rows_normalize(pro731, shared_dir):
    assert len(pro731.tasks) == 731
    _check_normalized(pro731, shared_dir / PRO / "swe_bench_pro_public_731.jsonl")


@pytest.mark.data
def test_prompt_matches_upstream_instances_yaml(pro731, shared_dir):
    """Independent check: instances.yaml holds the prompt as one text; compare where it is not JSON-quoted."""
    yaml = pytest.importorskip("yaml")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    entries = yaml.load((shared_dir / PRO / "instances.yaml").read_text(encoding="utf-8"), Loader=loader)
    by_id = {t.instance_id: t for t in pro731.tasks}
    plain = [e for e in entries if not e["problem_statement"].startswith('"')]
    assert len(plain) > 300
    for e in plain:
        assert by_id[e["instance_id"]].original_prompt == e["problem_statement"]


def test_hf_schema_lists_decoded_and_agree_with_731(hf, pro):
    """The HF export spells fail_to_pass as a Python list literal; it must decode to the same lists."""
    assert len(hf.tasks) == 4 and not hf.malformed
    by_id = {t.instance_id: t for t in pro.tasks}
    for t in hf.tasks:
        other = by_id[t.instance_id]
        assert t.fail_to_pass == other.fail_to_pass
        assert t.original_prompt == other.original_prompt
        assert isinstance(t.extra["issue_categories"], list)
        assert t.patch.startswith("diff --git")
    # some HF rows hold the statement as a JSON string literal; they are decoded and say so
    assert any("problem_statement" in t.extra.get(DECODED_KEY, ()) for t in hf.tasks)


def test_malformed_rows_are_kept_with_reasons(hf_sample, tmp_path):
    rows = _rows(hf_sample)
    rows.append({**rows[0], "instance_id": rows[0]["instance_id"] + "-copy"})   # a fifth, sound row
    del rows[1]["requirements"]
    rows[2]["problem_statement"] = "   "
    rows[3]["pass_to_pass"] = '["tests/a.py::test_x", '
    path = _write(tmp_path / "pro.jsonl", rows)
    load = load_tasks(str(path))
    assert [t.status for t in load.tasks] == ["ok", "malformed", "malformed", "malformed", "ok"]
    r = [t.reason for t in load.tasks]
    assert "row 2" in r[1] and "'requirements'" in r[1] and "missing" in r[1]
    assert "row 3" in r[2] and "'problem_statement'" in r[2] and "empty" in r[2]
    assert "row 4" in r[3] and "'pass_to_pass'" in r[3] and "JSON" in r[3]
    assert load.tasks[1].instance_id == rows[1]["instance_id"]
    assert load.provenance["malformed"] == 3


def test_type_conflicts_and_broken_lines_fall_back_to_line_reading(pro_sample, tmp_path):
    rows = _rows(pro_sample, 4)
    rows[1]["fail_to_pass"] = "[broken"          # a string among lists: arrow cannot build the column
    rows.insert(3, "{not json")
    path = _write(tmp_path / "pro.jsonl", rows)
    load = load_tasks(str(path))
    assert len(load.tasks) == 5
    assert [t.status for t in load.tasks] == ["ok", "malformed", "ok", "malformed", "ok"]
    assert "'fail_to_pass'" in load.tasks[1].reason and "row 2" in load.tasks[1].reason
    assert "line 4" in load.tasks[3].reason and "not valid JSON" in load.tasks[3].reason
    assert "json lines" in load.provenance["loader"]


def test_duplicate_ids_and_limit(pro_sample, tmp_path):
    rows = _rows(pro_sample, 3)
    path = _write(tmp_path / "dup.jsonl", rows + [rows[0]])
    load = load_tasks(str(path))
    assert load.tasks[3].status == "malformed" and "duplicates row 1" in load.tasks[3].reason
    assert len(load_tasks(str(path), limit=2).tasks) == 2


def test_folder_and_explicit_source(pro_sample, tmp_path):
    rows = _rows(pro_sample, 3)
    folder = tmp_path / "ds"
    folder.mkdir()
    _write(folder / "test.jsonl", rows)
    load = load_tasks(str(folder), source="swe-bench-pro", split="test")
    assert [t.instance_id for t in load.tasks] == [r["instance_id"] for r in rows]
    assert load.provenance["kind"] == "folder" and load.provenance["split"] == "test"
    assert load.provenance["files"][0]["sha256"] == hashlib.sha256((folder / "test.jsonl").read_bytes()).hexdigest()
    with pytest.raises(ConfigError, match="unknown source"):
        load_tasks(str(folder), source="swe-bench-ultra")


def test_swebench_verified_schema(tmp_path):
    row = {  # hand-written row in the SWE-bench Verified schema (provenance: hand-written test data)
        "instance_id": "octo__widget-101", "repo": "octo/widget", "base_commit": "a" * 40,
        "problem_statement": "Widget crashes on empty input.", "hints_text": "", "version": "1.0",
        "FAIL_TO_PASS": '["tests/test_w.py::test_empty"]', "PASS_TO_PASS": "[]",
        "patch": "diff --git a/w.py b/w.py", "test_patch": "", "environment_setup_commit": "b" * 40,
        "created_at": "2024-01-01", "difficulty": "<15 min fix", "provenance": "hand-written"}
    path = _write(tmp_path / "swe-bench-verified.jsonl", [row, {**row, "instance_id": "octo__widget-102",
                                                               "FAIL_TO_PASS": "[oops"}])
    load = load_tasks(str(path))
    t = load.tasks[0]
    assert t.source == "swe-bench-verified" and t.status == "ok"
    assert t.original_prompt == row["problem_statement"] and t.fail_to_pass == ("tests/test_w.py::test_empty",)
    assert t.image_name == "swebench/sweb.eval.x86_64.octo_1776_widget-101:latest"
    assert t.extra["hints_text"] == "" and "FAIL_TO_PASS" not in t.extra
    assert load.tasks[1].status == "malformed" and "'FAIL_TO_PASS'" in load.tasks[1].reason


def test_missing_path_and_unreachable_hub(monkeypatch):
    with pytest.raises(InputError, match="no such file"):
        load_tasks("/nonexistent/path.jsonl")
    import datasets.config
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    with pytest.raises(InputError, match="cannot load Hub dataset 'ScaleAI/SWE-bench_Pro'") as ei:
        load_tasks("ScaleAI/SWE-bench_Pro", revision="main")
    assert "local file" in str(ei.value)
