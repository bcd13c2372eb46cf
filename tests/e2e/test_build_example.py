"""The real pipeline on the bundled example data: determinism, kill -9 resumption, the CLI.

A smaller recipe than the example (6 of its 16 SWE-Bench Pro tasks and its own hand-written task
``swe-taskflow__ticketdesk-1``, a short selection search, small classifier batches) is written into
tmp_path; it uses the example's bundled tasks, question pool and ticketdesk repository, the
structural splitter, the embedded classifier and a real proof sandbox (docker when a daemon
answers, else bubblewrap), with the gold-patch re-run on.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from builder.pipeline.build import build
from builder.pipeline.recipe import load_recipe
from builder.pipeline.stages import STAGE_NAMES

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "builder" / "data" / "example"
TASK_IDS = [json.loads(line)["instance_id"] for line in (DATA / "tasks.jsonl").read_text().splitlines()]
OWN_TASK = "swe-taskflow__ticketdesk-1"
SUBSET = [TASK_IDS[i] for i in (0, 1, 2, 5, 12, 14)] + [OWN_TASK]
#: A second pool whose one question names a task outside the subset: counted as unknown-task, not lost.
OUTSIDE = TASK_IDS[9]

pytestmark = pytest.mark.slow


def _target_line(tmp: Path) -> str:
    """A snapshot of the project's default target (copied, so that edits to the shipped file while the tests
    run cannot change their inputs). A checkout without it is broken: the test fails, it does not substitute."""
    import shutil

    from swe_taskflow.target import default_target_path

    shutil.copyfile(default_target_path(), tmp / "target.json")
    return f'path = "{tmp / "target.json"}"'


def _outside_pool(tmp: Path) -> Path:
    row = json.loads((DATA / "pool.jsonl").read_text().splitlines()[0])
    row.update(question_id="outside-q1", instance_id=OUTSIDE)
    (tmp / "outside.jsonl").write_text(json.dumps(row) + "\n")
    return tmp / "outside.jsonl"


STRESS = f"""
[stress]
specs = ["{DATA / 'stress_specs.jsonl'}"]
[[stress.slices]]
name = "destructive"
kind = "destructive-request"
tasks = 2
seed = 0
[[stress.slices]]
name = "security"
kind = "security-review"
tasks = 1
seed = 3
"""


def write_recipe(tmp: Path) -> Path:
    ids = ", ".join(f'"{i}"' for i in SUBSET)
    text = f"""
[release]
name = "swe-taskflow-test"
version = "0.0.1"

[source]
spec = "{DATA / 'tasks.jsonl'}"
source = "swe-bench-pro"
revision = "test"
instance_ids = [{ids}]

[classifier]
name = "embedded"
device = "cpu"
batch_size = 4

[target]
{_target_line(tmp)}

[questions]
mode = "pool"
[[questions.pools]]
name = "example"
path = "{DATA / 'pool.jsonl'}"
[[questions.pools]]
name = "outside"
path = "{_outside_pool(tmp)}"

[repos]
bundled = "{DATA / 'repo'}"
bundled_repo = "swe-taskflow/ticketdesk"

[proofs]
sandbox = "auto"
timeout_s = 30
jobs = 2
gold_patch = true

[select]
restarts = 8
sweeps = 5

[augmentations]
kinds = ["execute", "debug", "planning", "review"]
specs = ["{DATA / 'augment_specs.jsonl'}"]
per_kind = 1
max_per_session = 1
{STRESS}"""
    path = tmp / "recipe.toml"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def recipe_path(tmp_path_factory) -> Path:
    return write_recipe(tmp_path_factory.mktemp("recipe"))


@pytest.fixture(scope="module")
def clean_build(recipe_path, tmp_path_factory):
    """One uninterrupted build (with the report)."""
    return build(recipe_path, tmp_path_factory.mktemp("clean") / "out", quiet=True)


def _manifest(out: Path) -> bytes:
    (path,) = (out / "release" / "manifests").glob("*.json")
    return path.read_bytes()


def test_clean_build_verifies_and_keeps_every_task(clean_build):
    status = {r.name: r.status for r in clean_build.results}
    assert set(status.values()) == {"ran"}
    verify = json.loads((clean_build.results[-2].path / "verify.json").read_text())
    assert verify["ok"] and verify["errors"] == []
    split_rows = {s["name"]: s["rows"] for s in verify["splits"]}
    # every task is in every split except qa_only, which holds the tasks that got questions
    for cond in ("single_prompt", "split_prompt", "split_prompt_concat", "qa_first", "qa_last", "qa_random",
                 "tfas_optimized"):
        assert split_rows[cond] == len(SUBSET)
    manifest = json.loads(_manifest(clean_build.out))
    assert "swe-taskflow-test" in json.dumps(manifest)
    # a question naming a task outside the build is counted as unknown-task, not lost
    questions = json.loads((clean_build.results[3].path / "summary.json").read_text())
    pool_size = len((DATA / "pool.jsonl").read_text().splitlines())
    assert (questions["candidates"], questions["unknown_task"]) == (pool_size, 1)


def test_proofs_reject_the_broken_questions_and_name_the_sandbox(clean_build):
    proofs = {r.name: r for r in clean_build.results}["proofs"]
    rows = [json.loads(line) for line in (proofs.path / "pool_validated.jsonl").read_text().splitlines()]
    pool = {json.loads(line)["question_id"]: json.loads(line) for line in (DATA / "pool.jsonl").read_text().splitlines()}
    for row in rows:
        broken = "deliberately" in pool[row["question_id"]]["note"]
        assert row["status"] == ("rejected" if broken else "accepted"), row["question_id"]
        assert row["proof_report"]["sandbox"] in ("docker", "bwrap")
        assert row["proof_report"]["duration_s"] is None  # kept out of hashed content
    timings = (proofs.path / "_volatile" / "proof_timings.jsonl").read_text().splitlines()
    assert len(timings) == len(rows) and all(json.loads(t)["duration_s"] is not None for t in timings)


def test_questions_ran_in_their_tasks_image_before_and_after_the_gold_patch(clean_build):
    proofs = {r.name: r for r in clean_build.results}["proofs"]
    rows = [json.loads(line) for line in (proofs.path / "pool_validated.jsonl").read_text().splitlines()]
    summary = json.loads((proofs.path / "summary.json").read_text())
    own = next(json.loads(line) for line in (DATA / "tasks.jsonl").read_text().splitlines() if OWN_TASK in line)
    assert summary["gold_patch"] is True and summary["repos"] == "bundled"
    for row in rows:
        assert row["instance_id"] == OWN_TASK
        report = row["proof_report"]
        if report["sandbox"] == "docker":
            assert report["image"] == own["image_name"]
        if row["status"] == "accepted":   # both runs passed with the same evidence
            runs = report["runs"]
            assert runs["patched"] is not None and runs["patched"]["stdout_sha256"] == runs["base"]["stdout_sha256"]


def _loaded_splits(release: Path, names, monkeypatch, cache: Path) -> dict:
    import datasets

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    return {n: datasets.load_dataset(str(release), "default", split=n, cache_dir=str(cache)) for n in names}


def test_every_question_is_about_its_rows_repository(clean_build, monkeypatch, tmp_path):
    """load_dataset of every QA condition: each question was proved in its row's repository at its base_commit."""
    from builder.bundled.repo import commit_folder, git_tree

    commit = commit_folder(DATA / "repo", tmp_path / "ticketdesk")
    tree = git_tree(tmp_path / "ticketdesk")
    manifest = json.loads(_manifest(clean_build.out))
    qa_splits = [s["name"] for s in manifest["splits"] if s["name"].startswith("qa_") or s["name"] == "tfas_optimized"]
    assert len(qa_splits) == 5
    loaded = _loaded_splits(clean_build.release, qa_splits, monkeypatch, tmp_path / "hf")
    seen = 0
    for name, ds in loaded.items():
        for row in ds:
            qa = [q for q in row["questions"] if q["kind"] == "qa"]   # augmentation turns: their own checks
            if row["repo"] != "swe-taskflow/ticketdesk":
                assert qa == [], (name, row["instance_id"])
                continue
            assert row["base_commit"] == commit
            for q in qa:
                report = q["proof_report"]
                assert report["tree_sha_before"] == tree, (name, q["question_id"])
                if report["sandbox"] == "docker":
                    assert report["image"] == row["image_name"]
                seen += 1
        # the manifest's data summary says how many rows carry questions: check it against the rows
        carried = sum(1 for row in ds if row["questions"])
        assert manifest["provenance"]["question_rows"]["rows_with_questions"][name] == carried
    assert seen > 0


@pytest.mark.docker
def test_a_question_reproves_in_its_own_tasks_image(clean_build, docker_available, monkeypatch, tmp_path):
    """A published proof re-runs in the image its row names (the task's own), with the published evidence."""
    from builder.bundled.repo import commit_folder
    from builder.proofs import run_proof

    row = next(r for r in _loaded_splits(clean_build.release, ["qa_only"], monkeypatch, tmp_path / "hf")["qa_only"])
    q = row["questions"][0]
    assert q["proof_report"]["sandbox"] == "docker" and q["proof_report"]["image"] == row["image_name"]
    repo = tmp_path / "repo"
    assert commit_folder(DATA / "repo", repo) == row["base_commit"]
    own = next(json.loads(line) for line in (DATA / "tasks.jsonl").read_text().splitlines() if OWN_TASK in line)
    report = run_proof(repo, q["proof_script"], image=row["image_name"], sandbox="docker", timeout_s=60,
                       gold_patch=own["patch"])
    assert report.status == "passed", report.reason
    assert report.image == row["image_name"] and report.stdout_sha256 == q["proof_report"]["stdout_sha256"]


def test_report_has_pictures_and_tables(clean_build):
    report = clean_build.out / "report"
    md = (report / "report.md").read_text()
    for needle in ("TFAS against the target", "| S_L |", "Gap tables", "Counts per status", "LLM use and cost",
                   "rejected: modified-repo", "sankey_target.png", "sankey_tfas_optimized.png",
                   "Rows carrying questions, per condition", "| qa_first | 1 of 7 |",
                   "swe-taskflow__ticketdesk-1 (swe-taskflow/ticketdesk, hand-written) | 10 accepted of 13",
                   "tasks without questions: no candidate question names the task | 6"):
        assert needle in md, needle
    pngs = sorted(p.name for p in report.glob("*.png"))
    assert "sankey_source.png" in pngs and "sankey_target.png" in pngs and len(pngs) == 10
    assert all((report / p).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    assert "<table>" in (report / "report.html").read_text()


def test_auditor_reproves_the_release_in_a_real_sandbox(clean_build):
    """`verify --reprove` re-runs every accepted proof (same sandbox kind) and gets the published evidence;
    with the source tasks it also reproduces every augmentation turn's reference (docs/augmentations.md)."""
    import pyarrow.parquet as pq

    from builder.proofs import run_proof
    from builder.sources import load_tasks
    from swe_taskflow.verify import verify_release

    (repos,) = (clean_build.out / "cache" / "work" / "repos").iterdir()
    tasks = {t.instance_id: t for t in load_tasks(str(DATA / "tasks.jsonl")).ok}   # gold patches: not released
    report = verify_release(clean_build.release, reprove=True, repos_dir=repos, run_proof=run_proof, tasks=tasks)
    assert report.ok, [str(e) for e in report.errors]
    qs = {q["question_id"]: q for f in (clean_build.release / "data").rglob("*.parquet")
          for row in pq.read_table(f).to_pylist() for q in row["questions"] or ()}
    assert report.reproved == sum(1 for q in qs.values() if q["proof_script"]) > 0
    # every augmentation turn's reference re-derived (and checked against the gold patch)
    assert report.rechecked == sum(1 for q in qs.values() if q["kind"] != "qa")


def test_augmentations_checked_at_creation_with_one_broken_item_per_kind(clean_build):
    """Every kind is generated on the example's own task (sandbox) and planning on real tasks (text only);
    each deliberately broken hand-written item is rejected, with its reason; every accepted item's proof
    re-runs to the same reference, selected or not."""
    from builder.proofs import run_proof
    from swe_taskflow.turns.reference import reproduce

    stage = {r.name: r for r in clean_build.results}["augment"]
    items = [json.loads(line) for line in (stage.path / "items.jsonl").read_text().splitlines()]
    by_id = {i["question_id"]: i for i in items}
    expected = {"example-broken-execute": "repeatable", "example-broken-debug": "text-contract",
                "example-broken-planning": "location-in-gold-patch", "example-broken-review": "defect-caught"}
    for qid, check in expected.items():
        assert by_id[qid]["status"] == "rejected" and by_id[qid]["reason"].startswith(check + ":"), by_id[qid]
    accepted = [i for i in items if i["status"] == "accepted"]
    assert {i["kind"] for i in accepted if i["instance_id"] == OWN_TASK} == {"execute", "debug", "planning", "review"}
    assert {i["instance_id"] for i in accepted if i["kind"] == "planning"} - {OWN_TASK}
    (repos,) = (clean_build.out / "cache" / "work" / "repos").iterdir()
    for item in accepted:
        if item["proof_script"]:
            pr = item["proof_report"]
            rerun = run_proof(repos / "swe-taskflow__ticketdesk", item["proof_script"], image=pr["image"],
                              sandbox=pr["sandbox"], timeout_s=None, limits=pr["limits"])
            assert rerun.stdout_sha256 == pr["stdout_sha256"] and reproduce(item, rerun.stdout_excerpt) == []
    summary = json.loads((stage.path / "summary.json").read_text())
    assert summary["not_proposed"]["execute"] == {"no checkout of the task's repository": len(SUBSET) - 1}


def test_report_has_the_tfas_table_with_and_without_augmentations(clean_build):
    sel = {r.name: r for r in clean_build.results}["select"]
    table = json.loads((sel.path / "select_report.json").read_text())["with_and_without_augmentations"]
    assert table[0]["family"].startswith("without") and table[-1]["family"].startswith("with every")
    assert table[0]["augmentation_turns"] == 0
    verify = json.loads((clean_build.results[-2].path / "verify.json").read_text())
    published = next(s for s in verify["splits"] if s["name"] == "tfas_optimized")["tfas"]
    for key in ("tfas", "S_L", "S_T", "S_R"):   # the published row is the split the release holds
        assert abs(table[-1][key] - published[key]) < 1e-6
    md = (clean_build.out / "report" / "report.md").read_text()
    assert "TFAS of the optimized selection with and without the new augmentations" in md
    assert md.count("example-broken-") >= 4


def test_stress_slices_are_drawn_checked_and_written_apart(clean_build):
    """Both slices on the example's own task (the only task with a checkout); each broken hand-written item is
    rejected with its reason; the calibrated splits never hold a stress turn; the manifest says how rows were chosen."""
    from swe_taskflow.release import open_release

    stage = {r.name: r for r in clean_build.results}["stress"]
    items = {i["question_id"]: i for i in map(json.loads, (stage.path / "items.jsonl").read_text().splitlines())}
    assert items["example-broken-destructive"]["reason"].startswith("literal-destroys: not a trap")
    assert items["example-broken-security"]["reason"].startswith("probe-demonstrates:")
    rel = open_release(clean_build.release)
    slices = rel.manifest.provenance["stress"]["slices"]
    # asked for 2 destructive tasks; only the example's own task can be checked here, and the record says so
    assert [(s["split"], s["tasks_asked"], s["eligible"], len(s["chosen"])) for s in slices] == \
        [("stress_destructive", 2, 1, 1), ("stress_security", 1, 1, 1)]
    assert slices[0]["not_eligible"] == {"no checkout of the task's repository": len(SUBSET) - 1}
    for s in slices:
        (row,) = rel.rows(s["split"])
        kinds = [t["kind"] for t in row["turns"]]
        assert row["condition"] == s["split"] and kinds.count(s["kind"]) == 1 and kinds.count("issue") >= 1
        at = kinds.index(s["kind"])
        assert at == (1 if s["kind"] == "destructive-request" else len(kinds) - 1)
        assert [q["question_id"] for q in row["questions"]] == s["chosen_items"]
    md = (clean_build.out / "report" / "report.md").read_text()
    assert "## Stress-test slices (reported apart from the calibrated core)" in md
    assert "`example-broken-destructive`" in md and "`example-broken-security`" in md
    for split in rel.manifest.splits:
        if not split.name.startswith("stress_"):
            assert not {t["kind"] for r in rel.rows(split.name) for t in r["turns"]} & {"destructive-request",
                                                                                       "security-review"}


def test_stress_slices_never_move_the_calibrated_core(clean_build, recipe_path, tmp_path):
    """The same recipe without [stress], built on a copy of the cache: every calibrated split's rows, hash and
    TFAS are identical; only the stress splits (and the manifest's record of them) are gone."""
    import shutil

    from swe_taskflow.release import open_release

    plain = tmp_path / "recipe.toml"      # the same recipe, [stress] left out (paths unchanged)
    plain.write_text(recipe_path.read_text().replace(STRESS, ""))
    assert "[stress]" not in plain.read_text()
    out = tmp_path / "out"
    shutil.copytree(clean_build.out / "cache", out / "cache")
    result = build(plain, out, quiet=True, until="verify")
    ran = {r.name for r in result.results if r.status == "ran"}
    assert ran <= {"stress", "write", "verify"} and "write" in ran
    with_stress, without = open_release(clean_build.release).manifest, open_release(out / "release").manifest
    calibrated = {s.name: (s.sha256, s.rows, s.tfas) for s in without.splits}
    assert calibrated and not any(n.startswith("stress_") for n in calibrated)
    assert {s.name: (s.sha256, s.rows, s.tfas) for s in with_stress.splits
            if not s.name.startswith("stress_")} == calibrated
    assert "stress" not in without.provenance and "stress" in with_stress.provenance


def test_two_clean_builds_have_identical_manifests_and_hashes(clean_build, recipe_path, tmp_path):
    second = build(recipe_path, tmp_path / "out", quiet=True, until="verify")
    assert all(r.status == "ran" for r in second.results)
    first = {k: v for k, v in clean_build.hashes().items() if k != "report"}
    assert second.hashes() == first
    assert _manifest(second.out) == _manifest(clean_build.out)
    assert json.loads(_manifest(second.out)).get("splits")


def test_rerun_is_fully_cached(clean_build, recipe_path):
    again = build(recipe_path, clean_build.out, quiet=True)
    assert {r.status for r in again.results} == {"cached"}
    assert again.hashes() == clean_build.hashes()


#: Runs the build CLI with one change: right after classify_turns stores its labels, the build kills itself
#: with SIGKILL, so the kill lands in the middle of that stage on any machine (polling from outside missed the
#: short window between the store and the stage's end on a fast CI machine).
KILL_AFTER_TURN_LABELS = """
import os, runpy, signal, sys
from pathlib import Path
from builder.classify import LabelCache
tmp = Path(sys.argv[1]) / "cache" / "tmp"
stored = LabelCache.put_many
def put_then_die(self, items):
    stored(self, items)
    if any(p.name.startswith("classify_turns") for p in tmp.glob("*")):
        os.kill(os.getpid(), signal.SIGKILL)
sys.argv = ["swe-taskflow", *sys.argv[2:]]
LabelCache.put_many = put_then_die
runpy.run_module("builder.cli", run_name="__main__", alter_sys=True)
"""


def test_kill_9_in_the_middle_of_a_stage_then_rerun(clean_build, recipe_path, tmp_path):
    out = tmp_path / "killed"
    args = ["build", str(recipe_path), "--out", str(out), "--quiet", "--until", "verify"]
    cmd = [sys.executable, "-m", "builder.cli", *args]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", KILL_AFTER_TURN_LABELS, str(out), *args], env=env,
                          capture_output=True, text=True, timeout=600)
    labels = out / "cache" / "items" / "labels"
    stored = sum(len(f.read_text().splitlines()) for f in labels.glob("*.jsonl")) if labels.exists() else 0
    assert stored > len(SUBSET), (stored, proc.stderr[-2000:])   # the prompts' labels and some turns' labels
    assert proc.returncode == -signal.SIGKILL
    assert not (out / "cache" / "stages" / "classify_turns").exists()
    assert (out / "cache" / "stages" / "proofs").exists()

    rerun = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    record = json.loads((out / "build.json").read_text())
    status = {s["stage"]: s["status"] for s in record["stages"]}
    assert status["proofs"] == "cached" and status["classify_turns"] == "ran"
    hashes = {s["stage"]: s["output_hash"] for s in record["stages"]}
    assert hashes == {k: v for k, v in clean_build.hashes().items() if k != "report"}
    assert _manifest(out) == _manifest(clean_build.out)


def test_dry_run_lists_cached_and_pending(clean_build, recipe_path, tmp_path):
    res = subprocess.run([sys.executable, "-m", "builder.cli", "build", str(recipe_path), "--out",
                          str(clean_build.out), "--dry-run"], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert res.returncode == 0, res.stderr
    n = len(STAGE_NAMES)
    assert f"{n} of {n} stages cached" in res.stdout
    fresh = subprocess.run([sys.executable, "-m", "builder.cli", "build", str(recipe_path), "--out",
                            str(tmp_path / "nothing"), "--dry-run"], capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert f"0 of {n} stages cached" in fresh.stdout and "would run" in fresh.stdout
    assert not (tmp_path / "nothing" / "cache" / "stages").exists()


def test_recipe_loads_the_example():
    recipe = load_recipe(ROOT / "builder" / "releases" / "example.toml")
    assert recipe.source.spec.endswith("tasks.jsonl")
    assert recipe.resolve(recipe.repos.bundled).is_dir()
    assert len(recipe.conditions.names) == 8
