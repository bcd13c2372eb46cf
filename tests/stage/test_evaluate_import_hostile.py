"""`evaluate import` against hostile and malformed Harbor job folders (hand-written, see tests/support/harbor_jobs.py).

Every malformed job file is one error line naming the file and the field (exit 2), with the release and
the results folder untouched; no symlink is followed and nothing outside the trial folder is read; an
impossible value (a reward outside [0, 1], a NaN, a negative token count) makes its trial *invalid*: it is
reported with its reason, left out of every rate and never stored as a trajectory.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from pathlib import Path

import pytest

from builder.cli import main as cli_main
from tests.support.harbor_fixture import exported_fixture_release
from tests.support.harbor_jobs import atif, edit_result, task_steps, write_trial

CONDITION = "qa_last"
SECRET = "host-secret-file-0b7e"


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("eval-hostile")
    return (tmp, *exported_fixture_release(tmp, CONDITION))


@pytest.fixture
def world(base, tmp_path):
    _, rel, ds = base
    release = tmp_path / "release"
    shutil.copytree(rel, release)
    job = tmp_path / "jobs" / "job1"
    trials = [write_trial(job, ds / f"fixture__harbor-{k}", f"fixture__harbor-{k}__t{k}") for k in range(2)]
    (tmp_path / "secret.txt").write_text(SECRET)
    return {"tmp": tmp_path, "release": release, "ds": ds, "job": job, "trials": trials}


def _tree(path: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(path.rglob("*")):
        h.update(str(p.relative_to(path)).encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


def _import(world, capsys, *extra, jobs=None):
    out = world["tmp"] / "results"
    code = cli_main(["evaluate", "import", *(jobs or [str(world["job"])]), "--release", str(world["release"]),
                     "--out", str(out), *extra])
    return code, capsys.readouterr(), out


def _refused(world, capsys, *words):
    before = _tree(world["release"])
    code, cap, out = _import(world, capsys)
    err = cap.err.strip()
    assert code in (1, 2), err
    assert "internal error" not in err and len(err.splitlines()) == 1, err
    for w in words:
        assert w in err, (w, err)
    assert SECRET not in err
    assert _tree(world["release"]) == before            # the release is unchanged
    assert not out.exists()                             # and no results, plots or partial files
    return err


def _step(world, k, kind):
    t = world["trials"][k]
    name = next(s["step"] for s in task_steps(world["ds"] / f"fixture__harbor-{k}") if s["kind"] == kind)
    return t, name


# ---------------------------------------------------------------- symlinks: never followed

def test_answer_file_symlink_is_refused(world, capsys):
    t, step = _step(world, 0, "qa")
    a = t / "steps" / step / "verifier" / "answer.md"
    a.unlink()
    a.symlink_to(world["tmp"] / "secret.txt")
    _refused(world, capsys, "answer.md", "symbolic link")


def test_verifier_folder_symlink_is_refused(world, capsys):
    t, step = _step(world, 0, "qa")
    v = t / "steps" / step / "verifier"
    shutil.rmtree(v)
    fake = world["tmp"] / "elsewhere"
    fake.mkdir()
    (fake / "answer.md").write_text(SECRET)
    v.symlink_to(fake)
    _refused(world, capsys, "verifier", "symbolic link")


def test_trajectory_symlink_is_refused(world, capsys):
    t = world["trials"][0]
    traj = next(t.rglob("trajectory.json"))
    other = world["tmp"] / "other-traj.json"
    other.write_text(json.dumps(atif(None, 4)))
    traj.unlink()
    traj.symlink_to(other)
    _refused(world, capsys, "trajectory.json", "symbolic link")


def test_result_json_symlink_is_refused(world, capsys):
    t = world["trials"][1]
    real = world["tmp"] / "real-result.json"
    shutil.move(t / "result.json", real)
    (t / "result.json").symlink_to(real)
    _refused(world, capsys, "result.json", "symbolic link")


def test_trial_folder_symlink_is_refused(world, capsys):
    t = world["trials"][1]
    moved = world["tmp"] / "moved-trial"
    shutil.move(t, moved)
    t.symlink_to(moved)
    _refused(world, capsys, t.name, "symbolic link")


# ---------------------------------------------------------------- paths stay inside the trial folder

def test_a_step_name_that_leaves_the_trial_folder_is_refused(world, capsys):
    """The dataset's task.toml is not hashed: a step list naming '../..' must not steer reads outside."""
    task = world["tmp"] / "ds-copy"
    shutil.copytree(world["ds"], task)
    toml = task / "fixture__harbor-0" / "task.toml"
    toml.write_text(toml.read_text().replace('step = "turn-04-qa"', 'step = "../../../../secret-dir"'))
    t = world["trials"][0]
    edit_result(t, lambda d: d["config"]["task"].update(path=str(task / "fixture__harbor-0")))
    edit_result(t, lambda d: d["step_results"][-1].update(step_name="../../../../secret-dir"))
    _refused(world, capsys, "task.toml", "steps[3].step", "secret-dir")


def test_steps_that_are_not_the_release_rows_turns_are_refused(world, capsys):
    task = world["tmp"] / "ds-copy"
    shutil.copytree(world["ds"], task)
    toml = task / "fixture__harbor-0" / "task.toml"
    toml.write_text(toml.read_text().replace('step = "turn-04-qa"', 'step = "turn-09-qa"'))
    t = world["trials"][0]
    edit_result(t, lambda d: d["config"]["task"].update(path=str(task / "fixture__harbor-0")))
    edit_result(t, lambda d: d["step_results"][-1].update(step_name="turn-09-qa"))
    _refused(world, capsys, "result.json", "steps", "turn-04-qa", "turn-09-qa")


# ---------------------------------------------------------------- malformed job files: one line, file + field

MALFORMED = {
    "result-null": (lambda d: None, "null", ["result.json"]),
    "result-list": (lambda d: [d], None, ["result.json", "object"]),
    "step_results-object": (lambda d: d.update(step_results={"a": 1}), None, ["step_results"]),
    "step-null": (lambda d: d["step_results"].__setitem__(0, None), None, ["step_results[0]"]),
    "step_name-number": (lambda d: d["step_results"][0].update(step_name=7), None, ["step_results[0].step_name"]),
    "rewards-list": (lambda d: d["step_results"][0]["verifier_result"].update(rewards=[1]), None,
                     ["step_results[0].verifier_result.rewards"]),
    "reward-string": (lambda d: d["step_results"][0]["verifier_result"]["rewards"].update(resolved="1.0"), None,
                      ["step_results[0].verifier_result.rewards.resolved"]),
    "config-task-string": (lambda d: d["config"].update(task="x"), None, ["config.task"]),
    "agent_info-list": (lambda d: d.update(agent_info=[1]), None, ["agent_info"]),
    "tokens-string": (lambda d: d["step_results"][0]["agent_result"].update(n_input_tokens="many"), None,
                      ["step_results[0].agent_result.n_input_tokens"]),
    "exception-string": (lambda d: d.update(exception_info="boom"), None, ["exception_info"]),
    "metadata-list": (lambda d: d["step_results"][0]["agent_result"].update(metadata=[1]), None,
                      ["step_results[0].agent_result.metadata"]),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_result_json_is_one_line_naming_file_and_field(world, capsys, case):
    fn, raw, words = MALFORMED[case]
    t = world["trials"][0]
    if raw is not None:
        (t / "result.json").write_text(raw)
    else:
        edit_result(t, fn)
    _refused(world, capsys, "result.json", *words)


def test_deeply_nested_json_is_refused(world, capsys):
    (world["trials"][0] / "result.json").write_text("[" * 200000 + "]" * 200000)
    _refused(world, capsys, "result.json", "nested")


def test_invalid_utf8_result_json_is_refused(world, capsys):
    t = world["trials"][0]
    raw = (t / "result.json").read_bytes()
    (t / "result.json").write_bytes(raw.replace(b'"trial_name"', b'"trial_\xff\xfename"', 1))
    _refused(world, capsys, "result.json", "UTF-8")


def test_malformed_checkpoint_json_is_refused(world, capsys):
    t, step = _step(world, 0, "issue")
    (t / "steps" / step / "verifier" / "checkpoint.json").write_text("[1, 2]")
    _refused(world, capsys, "checkpoint.json", "object")


def test_broken_task_toml_is_refused(world, capsys):
    task = world["tmp"] / "ds-broken"
    shutil.copytree(world["ds"], task)
    (task / "fixture__harbor-0" / "task.toml").write_text("[task\nname = ")
    edit_result(world["trials"][0], lambda d: d["config"]["task"].update(path=str(task / "fixture__harbor-0")))
    _refused(world, capsys, "task.toml", "TOML")


def test_oversized_task_toml_is_refused_not_cut(world, capsys, monkeypatch):
    import builder.evaluation.results as results

    task = world["tmp"] / "ds-big"
    shutil.copytree(world["ds"], task)
    toml = task / "fixture__harbor-0" / "task.toml"
    monkeypatch.setattr(results, "MAX_JSON_BYTES", toml.stat().st_size - 1)
    edit_result(world["trials"][0], lambda d: d["config"]["task"].update(path=str(task / "fixture__harbor-0")))
    _refused(world, capsys, "task.toml", "larger than")


def test_task_toml_with_wrong_types_is_refused(world, capsys):
    task = world["tmp"] / "ds-types"
    shutil.copytree(world["ds"], task)
    toml = task / "fixture__harbor-0" / "task.toml"
    toml.write_text(toml.read_text().replace("turn_index = 0", 'turn_index = "zero"', 1))
    edit_result(world["trials"][0], lambda d: d["config"]["task"].update(path=str(task / "fixture__harbor-0")))
    _refused(world, capsys, "task.toml", "turn_index")


def test_trajectory_naming_another_task_is_refused(world, capsys):
    t = world["trials"][0]
    traj = next(t.rglob("trajectory.json"))
    traj.write_text(json.dumps(atif("fixture__harbor-1", 4)))
    _refused(world, capsys, "trajectory.json", "fixture__harbor-1", "instance")


def test_the_same_job_twice_is_refused(world, capsys):
    before = _tree(world["release"])
    code, cap, out = _import(world, capsys, jobs=[str(world["job"]), str(world["job"]) + "/"])
    assert code == 2 and "twice" in cap.err and not out.exists()
    assert _tree(world["release"]) == before


# ---------------------------------------------------------------- impossible values: the trial is invalid

IMPOSSIBLE = {
    "resolved-2": (lambda r: r.update(resolved=2.0), "resolved"),
    "resolved-half": (lambda r: r.update(resolved=0.5), "resolved"),
    "resolved-nan": (lambda r: r.update(resolved=float("nan")), "resolved"),
    "f2p-negative": (lambda r: r.update(f2p_pass_rate=-0.25), "f2p_pass_rate"),
    "reward-infinite": (lambda r: r.update(reward=float("inf")), "reward"),
}


def _results(out: Path) -> dict:
    def no_constant(name):
        raise AssertionError(f"results.json holds {name}: not strict JSON")
    return json.loads((out / "results.json").read_text(), parse_constant=no_constant)


def _check_invalid(world, capsys, word):
    code, cap, out = _import(world, capsys)
    assert code == 0, cap.err
    doc = _results(out)
    by = {t["instance_id"]: t for t in doc["trials"]}
    bad = by["fixture__harbor-0"]
    assert bad["invalid"] and any(word in reason for reason in bad["invalid"]), bad["invalid"]
    assert not by["fixture__harbor-1"]["invalid"]
    g = doc["groups"][0]
    assert g["invalid_trials"] == 1 and g["trials"] == 1          # left out of every rate
    assert g["resolve_rate"]["mean"] == 1.0
    assert "invalid 1" in cap.out
    import pyarrow.parquet as pq
    rows = [r for f in sorted((world["release"] / "trajectories").glob("*.parquet")) for r in pq.read_table(f).to_pylist()]
    assert [r["instance_id"] for r in rows] == ["fixture__harbor-1"]   # never stored
    return bad


@pytest.mark.parametrize("case", sorted(IMPOSSIBLE))
def test_impossible_reward_makes_the_trial_invalid(world, capsys, case):
    fn, word = IMPOSSIBLE[case]
    t, step = _step(world, 0, "issue")
    edit_result(t, lambda d: fn(d["step_results"][0]["verifier_result"]["rewards"]))
    _check_invalid(world, capsys, word)


@pytest.mark.parametrize("field,value", [("n_input_tokens", -5), ("n_output_tokens", 1.5),
                                         ("cost_usd", float("nan")), ("cost_usd", -0.01), ("cost_usd", 1e400)])
def test_impossible_usage_makes_the_trial_invalid(world, capsys, field, value):
    edit_result(world["trials"][0], lambda d: d["step_results"][1]["agent_result"].update({field: value}))
    _check_invalid(world, capsys, field)


def test_results_json_is_strict_even_with_nan_in_a_trial(world, capsys):
    edit_result(world["trials"][0], lambda d: d["step_results"][0]["verifier_result"]["rewards"].update(
        p2p_pass_rate=float("nan")))
    code, cap, out = _import(world, capsys)
    assert code == 0, cap.err
    text = (out / "results.json").read_text()
    assert "NaN" not in text and "Infinity" not in text
    assert all(not (isinstance(v, float) and math.isnan(v)) for v in json.loads(text)["groups"][0].values())


# ---------------------------------------------------------------- answers are bounded

def test_a_huge_answer_is_truncated_and_marked(world, capsys):
    t, step = _step(world, 0, "qa")
    (t / "steps" / step / "verifier" / "answer.md").write_text("x" * (3 << 20))
    code, cap, out = _import(world, capsys)
    assert code == 0, cap.err
    ans = next(a for tr in _results(out)["trials"] if tr["instance_id"] == "fixture__harbor-0" for a in tr["answers"])
    assert ans["answer_truncated"] is True and len(ans["answer"].encode()) == 1 << 20
    other = next(a for tr in _results(out)["trials"] if tr["instance_id"] == "fixture__harbor-1" for a in tr["answers"])
    assert other["answer_truncated"] is False


def test_truncation_never_splits_a_character(tmp_path):
    from builder.evaluation.jobfiles import read_answer
    for text in ("é" * 700, "€" * 500, "😀" * 300, "a" + "😀" * 300):
        p = tmp_path / "answer.md"
        p.write_text(text, encoding="utf-8")
        got, cut = read_answer(p, 1001)
        assert cut and "\ufffd" not in got and text.startswith(got)
        assert 1001 - 3 <= len(got.encode()) <= 1001
