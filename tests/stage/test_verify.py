"""Verify: tampering with any file, row or order fails with a message naming the file and what differs."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from builder.cli import main as cli_main
from builder.release.writer import PARQUET_OPTIONS
from swe_taskflow.errors import ConfigError
from swe_taskflow.verify import verify_release

SHARD = "data/split_prompt-00000-of-00001.parquet"
MANIFEST = "manifests/tamper-v1.json"




def _flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def _errors(rel: Path) -> list[str]:
    report = verify_release(rel)
    assert not report.ok
    return [f"{e.kind}: {e}" for e in report.errors]


def _rewrite_rows(rel: Path, fn) -> None:
    path = rel / SHARD
    table = pq.read_table(path)
    rows = fn(table.to_pylist())
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path, **PARQUET_OPTIONS)


@pytest.mark.parametrize("where", [0.1, 0.5, 0.9])
def test_any_byte_of_a_shard(rel, where):
    path = rel / SHARD
    _flip(path, int(path.stat().st_size * where))
    errs = _errors(rel)
    assert any(SHARD in e and "sha256 differs from the manifest" in e for e in errs), errs


@pytest.mark.parametrize("needle", [b"num_examples: ", b"## TFAS per condition", b"license: mit"])
def test_any_byte_of_the_readme(rel, needle):
    path = rel / "README.md"
    _flip(path, path.read_bytes().index(needle) + len(needle) - 1)
    errs = _errors(rel)
    assert any(e.startswith("mismatch: README.md:") and "file sha256 differs" in e for e in errs), errs


def test_readme_declaring_a_wrong_row_count_is_named(rel):
    path = rel / "README.md"
    text = path.read_text()
    i = text.index("num_examples: ") + len("num_examples: ")
    path.write_text(text[:i] + "9" + text[i:])
    errs = _errors(rel)
    assert any("README.md" in e and "dataset_info split" in e and "differs" in e for e in errs), errs


@pytest.mark.parametrize("needle,what", [(b'"rows": ', "manifest"), (b'"benchmark": "test"', "manifest"),
                                         (b'  "format"', "canonical serialization")])
def test_any_byte_of_the_manifest(rel, needle, what):
    path = rel / MANIFEST
    raw = path.read_bytes()
    i = raw.index(needle) + len(needle) - 2 if what == "manifest" else raw.index(needle)
    data = bytearray(raw)
    data[i] = ord(" ") if what != "manifest" else data[i] ^ 0x01
    if what == "canonical serialization":
        data[i:i + 2] = b"\t"       # whitespace only: JSON content unchanged
    path.write_bytes(bytes(data))
    errs = _errors(rel)
    assert any(MANIFEST in e for e in errs), errs
    if what == "canonical serialization":
        assert any("canonical serialization" in e for e in errs), errs
    else:
        assert any("manifest_sha256" in e or "not valid JSON" in e for e in errs), errs


def test_dropping_a_row(rel):
    _rewrite_rows(rel, lambda rows: rows[:-1])
    errs = _errors(rel)
    assert any(e.startswith(f"missing: {SHARD}: field 'rows'") for e in errs), errs
    assert any(SHARD in e and "split content hash differs" in e for e in errs), errs


def test_adding_a_row(rel):
    _rewrite_rows(rel, lambda rows: rows + [{**rows[0], "instance_id": rows[0]["instance_id"] + "-copy"}])
    errs = _errors(rel)
    assert any(e.startswith(f"unexpected: {SHARD}: field 'rows'") for e in errs), errs
    assert any(f"{SHARD}:{len(pq.read_table(rel / SHARD)) - 1}: field 'row_sha256'" in e for e in errs), errs


def test_reordering_rows(rel):
    _rewrite_rows(rel, lambda rows: rows[1:] + rows[:1])
    errs = _errors(rel)
    assert any(SHARD in e and "split content hash differs" in e and "reordered" in e for e in errs), errs
    assert not any("row content does not match" in e for e in errs)   # each row is intact, only order changed


def test_editing_one_field_names_the_row(rel):
    def edit(rows):
        rows[2]["turns"][0]["text"] += "!"
        return rows
    _rewrite_rows(rel, edit)
    errs = _errors(rel)
    assert any(e.startswith(f"mismatch: {SHARD}:2: field 'row_sha256': row content does not match") for e in errs), errs


def test_missing_and_unexpected_files(rel):
    (rel / "target").joinpath("target.json").unlink()
    (rel / "data" / "extra.parquet").write_bytes(b"x")
    errs = _errors(rel)
    assert any(e.startswith("missing: target/target.json: file listed in the manifest is missing") for e in errs), errs
    assert any(e.startswith("unexpected: data/extra.parquet: file is not listed") for e in errs), errs


def test_cli_summary_table_and_exit_codes(pristine, rel, capsys):
    assert cli_main(["verify", str(pristine)]) == 0
    out = capsys.readouterr().out
    assert "split_prompt" in out and "all hashes hold" in out and "TFAS" in out
    _flip(rel / SHARD, 100)
    assert cli_main(["verify", str(rel)]) == 1
    err = capsys.readouterr().err
    assert SHARD in err and "verify failed" in err


class _Proof:
    def __init__(self, status, stdout_sha256=""):
        self.status = status
        self.stdout_sha256 = stdout_sha256


def test_reprove_hook(pristine, tmp_path):
    repos = tmp_path / "repos"
    report = verify_release(pristine)
    import pyarrow.parquet as pq2
    rows = pq2.read_table(pristine / "data/qa_only_sol-00000-of-00001.parquet").to_pylist()
    for r in rows:
        (repos / r["instance_id"]).mkdir(parents=True)
    calls = []
    evidence = {q["proof_script"]: (q["proof_report"] or {}).get("stdout_sha256", "")
                for r in rows for q in r["questions"] or []}

    def run_proof(repo_dir, script, *, image=None, sandbox="auto", timeout_s=60, gold_patch=None, limits=None):
        calls.append((Path(repo_dir).name, sandbox, timeout_s))
        return _Proof("passed", evidence.get(script, ""))

    report = verify_release(pristine, reprove=True, repos_dir=repos, run_proof=run_proof)
    assert report.ok and report.reproved == report.questions == len(calls) > 0
    # the recorded sandbox is never asked for: the runner's own (the auditor's) is used, under its ceilings
    assert {c[1:] for c in calls} == {("auto", 60.0)}
    bad = verify_release(pristine, reprove=True, repos_dir=repos, run_proof=lambda *a, **k: _Proof("failed-exit"))
    assert bad.errors and all("re-run proof ends differently" in str(e) for e in bad.errors)
    other = verify_release(pristine, reprove=True, repos_dir=repos,
                           run_proof=lambda *a, **k: _Proof("passed", "e" * 64))
    assert other.errors and all("other evidence" in str(e) and "stdout_sha256" in str(e) for e in other.errors)
    with pytest.raises(ConfigError):
        verify_release(pristine, reprove=True, repos_dir=repos)
    missing = verify_release(pristine, reprove=True, repos_dir=None, run_proof=run_proof)
    assert [e.kind for e in missing.errors] == ["missing"]


def test_same_instance_must_be_the_same_task_in_every_split(rel):
    path = rel / "data/single_prompt-00000-of-00001.parquet"
    table = pq.read_table(path)
    rows = table.to_pylist()
    rows[0]["source_task_sha256"] = "f" * 64
    from swe_taskflow.hashing import row_sha256
    rows[0]["row_sha256"] = row_sha256(rows[0])
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path, **PARQUET_OPTIONS)
    errs = _errors(rel)
    assert any("source_task_sha256" in e and "different source task" in e for e in errs), errs


@pytest.mark.parametrize("argv", [["verify", "--help"], ["push", "--help"], ["trajectories", "import", "--help"]])
def test_every_release_command_has_help(argv, capsys):
    with pytest.raises(SystemExit) as e:
        cli_main(argv)
    assert e.value.code == 0 and "usage: swe-taskflow" in capsys.readouterr().out


def test_revision_on_a_folder_is_a_usage_error(pristine, capsys):
    assert cli_main(["verify", str(pristine), "--revision", "v1"]) == 2
    assert "revision" in capsys.readouterr().err
