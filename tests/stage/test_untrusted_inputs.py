"""Issue 32, the reading side: every untrusted document goes through one path reader and one typed loader.

A release (``verify``), a job folder (``evaluate import``), a recipe's paths (``build --dry-run``), the
trajectories folder of ``qa generate`` and an ATIF trajectory: a link is never followed, a FIFO never hangs, a
sparse 8 GiB file is never hashed when its name and size already decide, a gzip bomb is bounded, and a wrong
JSON type is one finding naming the file and the field (exit 1 or 2, never "internal error" exit 70).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from builder.cli import main as cli_main
from swe_taskflow.errors import ConfigError, InputError
from swe_taskflow.verify import verify_release
from tests.support.no_hang import no_hang

SECRET = "host-secret-file-5c1d"
MANIFEST = "manifests/tamper-v1.json"


# ---------------------------------------------------------------- a release (verify): `pristine`, `rel` in conftest
def _sparse(path: Path, size: int = 8 << 30) -> None:
    with open(path, "wb") as fh:
        fh.truncate(size)


def _timed_verify(rel: Path):
    """``verify_release(rel)`` under a 20 s alarm: the report, its errors as text and the seconds it took (the old
    verify hashed every byte: 37 s for 8 GiB, hours for 1 TiB)."""
    t0 = time.monotonic()
    with no_hang(20):
        report = verify_release(rel)
    return report, [str(e) for e in report.errors], time.monotonic() - t0


def test_a_sparse_8gib_file_not_in_the_manifest_is_never_hashed(rel):
    _sparse(rel / "data" / "extra.bin")
    report, errs, took = _timed_verify(rel)
    assert any("data/extra.bin" in e and "not listed in the manifest" in e for e in errs), errs
    assert took < 2.0, f"{took:.1f}s: the file was read"
    assert report.bytes_hashed < 1 << 30


def test_a_sparse_8gib_file_in_place_of_a_listed_one_is_decided_by_size(rel):
    shard = next((rel / "data").glob("*.parquet"))
    shard.unlink()
    _sparse(shard)
    report, errs, took = _timed_verify(rel)
    assert any(shard.name in e and "size differs from the manifest" in e and "8589934592 B" in e for e in errs), errs
    assert any(shard.name in e and "larger than the limit for a parquet shard" in e for e in errs), errs
    assert took < 2.0, f"{took:.1f}s: the file was read"


def test_a_forged_manifest_listing_a_huge_file_at_its_size_does_not_get_it_hashed(rel):
    from swe_taskflow.manifest import FileEntry

    _sparse(rel / "data" / "huge.bin", 1 << 40)                # 1 TiB, sparse
    _manifest_edit(rel, lambda d: d["extra_files"].append(FileEntry("data/huge.bin", "0" * 64, 1 << 40).to_dict()))
    report, errs, took = _timed_verify(rel)
    assert any("data/huge.bin" in e and "larger than the limit for a release file" in e for e in errs), errs
    assert took < 2.0, f"{took:.1f}s: the file was read"


def _manifest_edit(rel: Path, fn) -> None:
    """Edit the manifest and keep it self-consistent (its own hash and byte form), as a forger would."""
    from swe_taskflow.hashing import canonical_sha256
    from swe_taskflow.manifest import serialize

    path = rel / MANIFEST
    doc = json.loads(path.read_text())
    fn(doc)
    body = {k: v for k, v in doc.items() if k != "manifest_sha256"}
    path.write_bytes(serialize({**body, "manifest_sha256": canonical_sha256(body)}))


@pytest.mark.parametrize("edit, field", [
    (lambda d: d["splits"][0].__setitem__("tfas", "x"), "splits[0].tfas"),
    (lambda d: d["splits"][0]["tfas"].__setitem__("S_L", "high"), "splits[0].tfas.S_L"),
    (lambda d: d.__setitem__("provenance", "x"), "provenance"),
    (lambda d: d["provenance"].__setitem__("selection", "x"), "provenance.selection"),
    (lambda d: d["splits"][0].__setitem__("rows", "3"), "splits[0].rows"),
    (lambda d: d["splits"][0].__setitem__("files", {"path": "x"}), "splits[0].files"),
    (lambda d: d["splits"][0]["files"][0].__setitem__("size", -1), "splits[0].files[0].size"),
    (lambda d: d["splits"][0]["files"][0].__setitem__("path", "../../etc/passwd"), "splits[0].files[0].path"),
    (lambda d: d["readme"].__setitem__("sha256", 7), "readme.sha256"),
    (lambda d: d.__setitem__("splits", "x"), "splits"),
    (lambda d: d.__setitem__("release", ["x"]), "release"),
    (lambda d: d.__setitem__("name", 3), "name"),
])
def test_a_wrong_json_type_in_the_manifest_is_one_finding(rel, edit, field, capsys):
    _manifest_edit(rel, edit)
    report = verify_release(rel)          # the library: findings, never a raw exception
    assert not report.ok
    hits = [e for e in report.errors if e.field == field]
    assert len(hits) == 1 and MANIFEST in str(hits[0]), [str(e) for e in report.errors]
    assert cli_main(["verify", str(rel), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "internal error" not in err and field in err


def test_duplicate_trajectory_rows_are_refused_as_the_writer_refuses_them():
    from swe_taskflow.verify import VerifyReport
    from swe_taskflow.verify_checks import check_trajectories

    class _Split:
        sha256 = "a" * 64

    class _Manifest:
        def split(self, config, name):
            return _Split()

    row = {"instance_id": "x__y-1", "model": "m", "run": 0, "split_sha256": "a" * 64, "row_sha256": "b" * 64,
           "messages": [], "checkpoints": [], "qa_answers": []}
    report = VerifyReport(root="r")
    entry = type("E", (), {"name": "single_prompt"})()
    check_trajectories([row, dict(row)], entry, "data/t.parquet", _Manifest(), {}, report)
    dup = [e for e in report.errors if "duplicate trajectory row" in str(e)]
    assert len(dup) == 1 and dup[0].row == 1


def test_rewriting_a_release_never_copies_a_file_reached_through_a_link(rel, tmp_path):
    from builder.release.writer import rewrite_release
    from swe_taskflow.release import open_release

    target = rel / open_release(rel).manifest.target.path
    outside = tmp_path / "host-copy.json"
    shutil.copy(target, outside)
    target.unlink()
    target.symlink_to(outside)
    with pytest.raises(InputError, match="symbolic link") as exc:
        rewrite_release(rel, tmp_path / "out")
    assert exc.value.path == str(target) and not (tmp_path / "out").exists()


# ---------------------------------------------------------------- a recipe's paths (build --dry-run)
def _recipe(tmp_path: Path, body: str) -> Path:
    (tmp_path / "tasks.jsonl").write_text("")
    p = tmp_path / "r.toml"
    p.write_text('[release]\nname = "x"\nversion = "1"\n[source]\nspec = "tasks.jsonl"\n' + body)
    return p


@pytest.mark.parametrize("key, body", [("target.compare", '[target]\ncompare = ["fifo.json"]\n'),
                                       ("target.path", '[target]\npath = "fifo.json"\n')])
def test_a_fifo_as_a_recipe_path_ends_with_a_clear_error(tmp_path, capsys, key, body):
    os.mkfifo(tmp_path / "fifo.json")
    path = _recipe(tmp_path, body + '[questions]\nmode = "none"\n[conditions]\nnames = ["single_prompt"]\n')
    with no_hang(10):
        code = cli_main(["build", str(path), "--out", str(tmp_path / "out"), "--dry-run"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and key in err and "FIFO" in err and len(err.splitlines()) == 1, err


def test_a_fifo_as_the_source_or_the_recipe_itself_ends_with_a_clear_error(tmp_path, capsys):
    path = _recipe(tmp_path, '[questions]\nmode = "none"\n[conditions]\nnames = ["single_prompt"]\n')
    (tmp_path / "tasks.jsonl").unlink()
    os.mkfifo(tmp_path / "tasks.jsonl")
    with no_hang(10):
        code = cli_main(["build", str(path), "--out", str(tmp_path / "out"), "--dry-run"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "source.spec" in err and "FIFO" in err, err
    os.mkfifo(tmp_path / "fifo.toml")
    with no_hang(10):
        code = cli_main(["build", str(tmp_path / "fifo.toml"), "--out", str(tmp_path / "out"), "--dry-run"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "FIFO" in err and "internal error" not in err, err


def test_a_5000_deep_toml_recipe_is_a_clear_error(tmp_path):
    from builder.pipeline.recipe import load_recipe

    deep = _recipe(tmp_path, "x = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(ConfigError, match="nested too deeply|not valid TOML") as exc:
        load_recipe(deep)
    assert exc.value.path == str(deep)


# ---------------------------------------------------------------- qa generate's trajectories folder
IID = "demo__demo-1"


def _task():
    from swe_taskflow.schema import Task
    return Task(instance_id=IID, source="swe-bench-verified", source_revision="", repo="demo/demo", base_commit="",
                original_prompt="issue", problem_statement="issue", patch="")


def _no_llm():
    class _Boom:
        info = {"backend": "none"}

        def __getattr__(self, name):
            raise AssertionError("the model was called")
    return _Boom()


def test_qa_generate_never_reads_a_link_to_a_file_outside(tmp_path):
    from builder.qa import find_trajectory, generate_questions

    (tmp_path / "secret.txt").write_text(json.dumps({"messages": [{"role": "user", "content": SECRET}],
                                                     "info": {"exit_status": "Submitted", "submission": SECRET}}))
    trajs = tmp_path / "trajs"
    trajs.mkdir()
    (trajs / f"{IID}.traj.json").symlink_to(tmp_path / "secret.txt")
    found = find_trajectory(trajs, IID)
    items = generate_questions(_task(), found, None, _no_llm())
    assert [i.question_id for i in items] == [f"{IID}::trajectory-unreadable"]
    assert "symbolic link" in items[0].reason and SECRET not in items[0].reason
    # a link to a folder elsewhere is never entered either
    (trajs / f"{IID}.traj.json").unlink()
    (tmp_path / "elsewhere").mkdir()
    shutil.copy(tmp_path / "secret.txt", tmp_path / "elsewhere" / f"{IID}.traj.json")
    (trajs / IID).symlink_to(tmp_path / "elsewhere")
    assert find_trajectory(trajs, IID) is None


def test_qa_generate_never_sends_a_repository_file_reached_through_a_link(tmp_path):
    from builder.qa import generation_messages
    from builder.qa.generate import Trajectory

    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "ok.py").write_text("def fine(): ...\n")
    (tmp_path / "outside.py").write_text(f"# {SECRET}\n")
    (repo / "pkg" / "leak.py").symlink_to(tmp_path / "outside.py")
    traj = Trajectory(IID, "issue", ("cat pkg/ok.py pkg/leak.py ../outside.py",), ("pkg/ok.py", "pkg/leak.py",
                      "../outside.py"), "", "Submitted", "mini-swe-agent-1", "t")
    text = json.dumps(generation_messages(_task(), traj, repo, 3))
    assert "def fine" in text and SECRET not in text


def test_qa_generate_a_fifo_does_not_hang(tmp_path):
    from builder.qa import find_trajectory, generate_questions

    os.mkfifo(tmp_path / f"{IID}.traj.json")
    with no_hang(10):
        items = generate_questions(_task(), find_trajectory(tmp_path, IID), None, _no_llm())
    assert items[0].question_id == f"{IID}::trajectory-unreadable" and "FIFO" in items[0].reason


def test_qa_generate_a_gzip_bomb_is_bounded(tmp_path):
    import gzip
    import tracemalloc

    from builder.qa import read_trajectory

    p = tmp_path / f"{IID}.traj.json.gz"
    p.write_bytes(gzip.compress(b" " * (1 << 26), compresslevel=9) * 45)   # ~2.9 MB, 2.8 GiB decompressed
    tracemalloc.start()
    with pytest.raises(InputError, match="decompresses to more than"):
        read_trajectory(p)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 700 << 20, f"{peak / 1e6:.0f} MB"


# ---------------------------------------------------------------- ATIF final_metrics: result.json's checks
@pytest.mark.parametrize("where, key, value", [
    ("final_metrics", "total_prompt_tokens", -5), ("final_metrics", "total_prompt_tokens", 2.5),
    ("final_metrics", "total_cost_usd", -1), ("final_metrics", "total_cost_usd", "0.5"),
    ("final_metrics", "total_completion_tokens", float("nan")), ("step", "cost_usd", "1"),
    ("step", "prompt_tokens", -1),
])
def test_atif_final_metrics_get_the_checks_result_json_gets(tmp_path, where, key, value):
    from builder.release.trajectories import read_trajectory
    from tests.support.harbor_jobs import atif

    doc = atif("x__y-1", 2)
    if where == "final_metrics":
        doc["final_metrics"][key] = value
        field = f"final_metrics.{key}"
    else:
        doc["steps"][1]["metrics"][key] = value
        field = f"steps[1].metrics.{key}"
    p = tmp_path / "x__y-1.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(InputError) as exc:
        read_trajectory(p)
    assert exc.value.field == field and exc.value.path == str(p)


def test_a_well_formed_atif_trajectory_still_reads(tmp_path):
    from builder.release.trajectories import read_trajectory
    from tests.support.harbor_jobs import atif

    p = tmp_path / "x__y-1.json"
    p.write_text(json.dumps(atif("x__y-1", 2)))
    t = read_trajectory(p)
    assert (t["tokens_in"], t["tokens_out"], round(t["cost_usd"], 4)) == (20, 4, 0.02)


# ---------------------------------------------------------------- a job folder (evaluate import)
CONDITION = "qa_last"


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    from tests.support.harbor_fixture import exported_fixture_release

    return exported_fixture_release(tmp_path_factory.mktemp("untrusted-jobs"), CONDITION)


@pytest.fixture
def trial(base, tmp_path):
    from tests.support.harbor_jobs import write_trial
    _, ds = base
    return write_trial(tmp_path / "jobs" / "job1", ds / "fixture__harbor-0", "fixture__harbor-0__t0")


def test_a_fifo_in_a_job_folder_does_not_hang(trial):
    from builder.evaluation.results import read_trial

    (trial / "result.json").unlink()
    os.mkfifo(trial / "result.json")
    with no_hang(10), pytest.raises(InputError, match="FIFO") as exc:
        read_trial(trial)
    assert exc.value.path == str(trial / "result.json")


def test_evaluate_import_with_a_fifo_in_a_job_folder_is_one_line(base, trial, tmp_path, capsys):
    release = tmp_path / "release"
    shutil.copytree(base[0], release)
    answer = next(trial.glob("steps/*/verifier/answer.md"))
    answer.unlink()
    os.mkfifo(answer)
    with no_hang(10):
        code = cli_main(["evaluate", "import", str(trial.parent), "--release", str(release),
                         "--out", str(tmp_path / "results")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "FIFO" in err and "answer.md" in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "results").exists()


def test_a_fifo_as_a_checkpoint_does_not_hang(trial):
    from builder.evaluation.results import read_trial

    cp = next(trial.glob("steps/*/verifier/checkpoint.json"))
    cp.unlink()
    os.mkfifo(cp)
    with no_hang(10), pytest.raises(InputError, match="FIFO"):
        read_trial(trial)


def test_two_results_for_one_step_are_an_error(trial):
    from builder.evaluation.results import read_trial
    from tests.support.harbor_jobs import edit_result

    edit_result(trial, lambda d: d["step_results"].append(dict(d["step_results"][0])))
    with pytest.raises(InputError, match="two results for one step") as exc:
        read_trial(trial)
    assert exc.value.field.startswith("step_results[")


def test_steps_out_of_order_are_an_error(trial):
    from builder.evaluation.results import read_trial
    from tests.support.harbor_jobs import edit_result

    assert len(json.loads((trial / "result.json").read_text())["step_results"]) >= 2
    edit_result(trial, lambda d: d["step_results"].reverse())
    with pytest.raises(InputError, match="out of order") as exc:
        read_trial(trial)
    assert exc.value.field == "step_results[1].step_name"


def test_a_deeply_nested_task_toml_is_an_error_not_a_recursion(trial, tmp_path):
    from builder.evaluation.results import read_trial
    from tests.support.harbor_jobs import edit_result

    task = tmp_path / "task-copy"
    shutil.copytree(json.loads((trial / "result.json").read_text())["config"]["task"]["path"], task)
    (task / "task.toml").write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    edit_result(trial, lambda d: d["config"]["task"].__setitem__("path", str(task)))
    with pytest.raises(InputError, match="nested too deeply") as exc:
        read_trial(trial)
    assert exc.value.path == str(task / "task.toml")


def test_a_well_formed_trial_still_reads(trial):
    from builder.evaluation.results import read_trial
    assert [s.step for s in read_trial(trial).steps]
