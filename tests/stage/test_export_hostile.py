"""Hostile releases against `export harbor` (issue 25, section 2): each class is refused with one named error.

An instance id that is not one safe path component (``..``, ``a/b``, absolute, a newline) is refused by the
release writer, by ``verify`` and by ``export``; two ids that would share a task folder are an error;
nothing is written outside ``--out`` (nor inside a release); a release whose files do not match its
manifest is not exported; the agent never runs as root; an image name with a newline or NUL is refused;
``--tasks ''`` is an error, not "all". The releases are the hand-written Harbor fixture, with rows edited
and their row hashes recomputed (a hostile id can only get in by bypassing the writer's check, as a
release written by another tool would).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from builder.cli import main as cli_main
from builder.evaluation.export import export_harbor, task_dirs
from builder.evaluation.options import ExportOptions
from builder.release import writer
from builder.release.writer import read_release, write_release
from swe_taskflow.errors import ConfigError, InputError, VerifyError
from swe_taskflow.hashing import ROW_HASH_FIELD, row_sha256
from swe_taskflow.verify import verify_folder

from tests.support.harbor_fixture import build_fixture_release

SPLIT = "split_prompt"
HOSTILE_IDS = ["..", ".", "a/b", "/etc", "../../escape", "x\ny", "nul\0id", "back\\slash", ""]


@pytest.fixture(scope="module")
def fixture(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile-export")
    rel, src = build_fixture_release(tmp)
    return tmp, rel, src


def _rewritten(rel: Path, dest: Path, edit, *, bypass_writer_check=False, monkeypatch=None) -> Path:
    """The release at ``rel`` written again to ``dest`` with ``edit(split, rows)`` applied, row hashes recomputed."""
    manifest, splits, _ = read_release(rel)
    for name, rows in splits.items():
        edit(name, rows)
        for r in rows:
            r[ROW_HASH_FIELD] = row_sha256(r)
    if bypass_writer_check:
        monkeypatch.setattr(writer, "check_component", lambda name, **kw: name)
    target = dest.parent / f"{dest.name}-target.json"
    shutil.copyfile(rel / manifest.target.path, target)
    write_release(dest, name=manifest.name, version=manifest.version, splits=splits, target_path=target,
                  provenance={**manifest.provenance, "package": manifest.package}, repo_id="org/harbor-fixture")
    if bypass_writer_check:
        monkeypatch.undo()
    return dest


def _set_id(new_id: str, split: str = SPLIT, row: int = 0):
    def edit(name, rows):
        if name == split:
            rows[row]["instance_id"] = new_id
    return edit


def _tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


@pytest.mark.parametrize("bad", HOSTILE_IDS)
def test_writer_refuses_an_id_that_is_not_one_path_component(fixture, tmp_path, bad):
    _, rel, _ = fixture
    with pytest.raises(InputError) as err:
        _rewritten(rel, tmp_path / "rel", _set_id(bad))
    assert err.value.field == "instance_id" and err.value.row == 0
    assert not (tmp_path / "rel").exists()


@pytest.mark.parametrize("bad", ["..", "a/b", "/etc", "x\ny"])
def test_verify_and_export_refuse_a_release_holding_such_an_id(fixture, tmp_path, monkeypatch, bad):
    _, rel, _ = fixture
    hostile = _rewritten(rel, tmp_path / "rel", _set_id(bad), bypass_writer_check=True, monkeypatch=monkeypatch)
    report = verify_folder(hostile)
    assert not report.ok
    assert any(e.field == "instance_id" and "safe path component" in e.message for e in report.errors), report.errors
    before = _tree(tmp_path)
    with pytest.raises(VerifyError, match="instance_id"):
        export_harbor(hostile, SPLIT, tmp_path / "out")
    assert _tree(tmp_path) == before          # nothing written: not under --out, not beside it, not above it
    # export's own check, independent of verify (e.g. rows handed over by another caller)
    rows = read_release(hostile)[1][SPLIT]
    with pytest.raises(InputError, match="safe path component"):
        task_dirs(rows, SPLIT)


@pytest.mark.parametrize("pair", [("fixture__harbor-0", "FIXTURE__harbor-0"), ("fixture harbor", "fixture-harbor")])
def test_two_ids_that_would_share_a_folder_are_an_error(fixture, tmp_path, pair):
    _, rel, _ = fixture

    def edit(name, rows):
        if name == SPLIT:
            rows[0]["instance_id"], rows[1]["instance_id"] = pair
    hostile = _rewritten(rel, tmp_path / "rel", edit)
    assert verify_folder(hostile).ok            # distinct ids: a valid release, but not exportable as folders
    with pytest.raises(InputError, match="share one task folder") as err:
        export_harbor(hostile, SPLIT, tmp_path / "out")
    assert err.value.expected == pair[0] and err.value.actual == pair[1]
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob(".export-*"))


@pytest.mark.parametrize("name", ["dataset.toml", "REGISTRY.json"])
def test_an_id_naming_a_file_the_export_writes_is_an_error(fixture, tmp_path, name):
    _, rel, _ = fixture
    hostile = _rewritten(rel, tmp_path / "rel", _set_id(name))
    with pytest.raises(InputError, match="names a file the export writes"):
        export_harbor(hostile, SPLIT, tmp_path / "out")
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob(".export-*"))


@pytest.mark.parametrize("where", ["data", "README.md", "manifest"])
def test_a_tampered_release_is_not_exported(fixture, tmp_path, where):
    _, rel, _ = fixture
    copy = tmp_path / "rel"
    shutil.copytree(rel, copy)
    path = {"data": next((copy / "data").glob(f"{SPLIT}-*.parquet")), "README.md": copy / "README.md",
            "manifest": next((copy / "manifests").glob("*.json"))}[where]
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(VerifyError, match="does not verify"):
        export_harbor(copy, SPLIT, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_an_extra_file_in_the_release_is_tampering_too(fixture, tmp_path):
    _, rel, _ = fixture
    copy = tmp_path / "rel"
    shutil.copytree(rel, copy)
    (copy / "data" / "note.txt").write_text("dropped in\n")
    with pytest.raises(VerifyError, match="does not verify"):
        export_harbor(copy, SPLIT, tmp_path / "out")


@pytest.mark.parametrize("user", ["root", "0", "00", "0:0", "root:agent", "", "agent\nroot", "a b", "-u"])
def test_agent_user_root_or_malformed_is_refused(fixture, tmp_path, user):
    _, rel, _ = fixture
    with pytest.raises(ConfigError, match="agent"):
        export_harbor(rel, SPLIT, tmp_path / "out", opts=ExportOptions(agent_user=user))
    assert cli_main(["export", "harbor", str(rel), "--condition", SPLIT, "--out", str(tmp_path / "o2"),
                     f"--agent-user={user}"]) == 2
    assert not (tmp_path / "out").exists() and not (tmp_path / "o2").exists()


@pytest.mark.parametrize("image", ["img:1\nINJECTED = true", "img\0:1", "img 1", " img:1", "img:1\t"])
def test_an_image_name_with_a_newline_nul_or_space_is_refused(fixture, tmp_path, image):
    _, rel, _ = fixture

    def edit(name, rows):
        rows[0]["image_name"] = image
    hostile = _rewritten(rel, tmp_path / "rel", edit)
    with pytest.raises(InputError, match="image") as err:
        export_harbor(hostile, SPLIT, tmp_path / "out")
    assert err.value.field == "image_name"
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob(".export-*"))


def test_empty_tasks_is_an_error_not_all(fixture, tmp_path, capsys):
    _, rel, _ = fixture
    for tasks in ([], [""], [" "]):
        with pytest.raises(ConfigError, match="--tasks"):
            export_harbor(rel, SPLIT, tmp_path / "out", tasks=tasks)
    for arg in ("", ",", " , "):
        assert cli_main(["export", "harbor", str(rel), "--condition", SPLIT, "--out", str(tmp_path / "out"),
                         f"--tasks={arg}"]) == 2
        assert "--tasks" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_out_inside_a_release_or_over_a_file_is_refused(fixture, tmp_path):
    _, rel, _ = fixture
    copy = tmp_path / "rel"
    shutil.copytree(rel, copy)
    with pytest.raises(ConfigError, match="inside a release"):
        export_harbor(copy, SPLIT, copy / "ds")
    with pytest.raises(ConfigError, match="inside a release"):
        export_harbor(copy, SPLIT, copy)
    assert verify_folder(copy).ok
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="not a folder"):
        export_harbor(rel, SPLIT, tmp_path / "file")
    assert (tmp_path / "file").read_text() == "x"


def _scripts(root: Path, ids, body: str = "echo run") -> Path:
    """Hand-written stand-ins for SWE-Bench Pro's run_scripts/<id>/ (run_script.sh, parser.py)."""
    for iid in ids:
        (root / iid).mkdir(parents=True, exist_ok=True)
        (root / iid / "run_script.sh").write_text(f"#!/bin/bash\n# hand-written\n{body}\n")
        (root / iid / "parser.py").write_text("# hand-written\nprint('parse')\n")
    return root


IDS = ["fixture__harbor-0", "fixture__harbor-1"]


def test_every_row_that_cannot_be_exported_is_named_in_one_error(tmp_path):
    rel, _ = build_fixture_release(tmp_path / "f", test_command=False)
    with pytest.raises(ConfigError) as err:
        export_harbor(rel, SPLIT, tmp_path / "out")
    msg = str(err.value)
    assert "2 of 2 rows cannot be exported" in msg and all(f"{i}: task has no test command" in msg for i in IDS)
    scripts = _scripts(tmp_path / "scripts", IDS[:1])
    with pytest.raises(ConfigError) as err:
        export_harbor(rel, SPLIT, tmp_path / "out", run_scripts=scripts)
    assert "1 of 2 rows" in str(err.value) and f"{IDS[1]}: run script missing" in str(err.value)
    assert not (tmp_path / "out").exists()
    _scripts(scripts, IDS[1:])
    res = export_harbor(rel, SPLIT, tmp_path / "out", run_scripts=scripts)
    assert [t["instance_id"] for t in res.tasks] == IDS


def test_run_scripts_the_build_recorded_are_used_and_checked(tmp_path):
    from builder.task_files import run_script_hashes
    scripts = _scripts(tmp_path / "scripts", IDS)
    recorded = {"run_scripts": {"path": str(scripts), "files": run_script_hashes(scripts, IDS)}}
    rel, _ = build_fixture_release(tmp_path / "f", test_command=False, provenance_extra=recorded)
    res = export_harbor(rel, SPLIT, tmp_path / "out")           # no --run-scripts: the recorded folder
    assert len(res.tasks) == 2
    shipped = next((tmp_path / "out" / IDS[0]).glob("steps/*/tests/run_script.sh")).read_text()
    assert shipped == (scripts / IDS[0] / "run_script.sh").read_text()
    (scripts / IDS[1] / "parser.py").write_text("# changed after the build\n")
    with pytest.raises(ConfigError, match="differs from the one the build recorded"):
        export_harbor(rel, SPLIT, tmp_path / "out2")
    assert not (tmp_path / "out2").exists()


def test_the_cli_names_an_existing_out_folder_as_a_folder(fixture, tmp_path, capsys):
    """--out is a dataset folder: a second export into it says the folder is not empty (not "a file name is
    expected"), and an empty folder is accepted, as --help promises ("must not exist or be empty")."""
    _, rel, _ = fixture
    out = tmp_path / "ds"
    assert cli_main(["export", "harbor", str(rel), "--condition", SPLIT, "--out", str(out)]) == 0
    capsys.readouterr()
    assert cli_main(["export", "harbor", str(rel), "--condition", SPLIT, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "not empty" in err and "file name" not in err
    (tmp_path / "empty").mkdir()
    assert cli_main(["export", "harbor", str(rel), "--condition", SPLIT, "--out", str(tmp_path / "empty")]) == 0
