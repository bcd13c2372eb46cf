"""The wheel carries every file a command reads: build it, install it in a fresh venv, build the example
from outside the checkout, verify it, and import a trajectory into it (which renders the card again).

The fresh venv gets its dependencies (torch, transformers, datasets, the embedded classifier model)
from the test's own environment through a plain path entry, so nothing is downloaded but the build
backend; ``swe_taskflow`` and the builder themselves must come from the installed wheel, where the builder's
folder is the package ``swe_taskflow_builder`` and no top-level ``builder`` is installed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from builder.release.card import UNSET_REPO, card_placeholders

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow

#: Data files the commands read, as paths inside the wheel.
B = "swe_taskflow_builder"
SHIPPED = (f"{B}/release/hub_card.md", f"{B}/releases/example.toml", f"{B}/prompts/classify_v1.txt",
           f"{B}/prompts/split_write.md", f"{B}/data/classifier/exemplars_v1.jsonl",
           f"{B}/data/classifier/heads_v3.json", f"{B}/data/classifier/exemplars_v1.emb.npz",
           f"{B}/data/example/tasks.jsonl", f"{B}/data/example/pool.jsonl",
           f"{B}/data/example/repo/ticketdesk/store.py", "swe_taskflow/data/taxonomy.json",
           "swe_taskflow/data/targets/specstory-long-v1.json", "swe_taskflow/data/targets/specstory-long-v2.json",
           "swe_taskflow/data/citations.json", "swe_taskflow/py.typed",
           f"{B}/data/example/harbor/submit-each-turn.json",
           *(f"{B}/data/example/run_scripts/instance_flipt-io__flipt-a0cbc0cb65ae601270bdbe3f5313e2dfd49c80e4/{f}"
             for f in ("run_script.sh", "parser.py")))
SKIP = shutil.ignore_patterns(".venv", "build", "out", ".cache", "__pycache__", "*.egg-info", ".pytest_cache",
                              ".git", "shared")


def _run(cmd, **kw) -> subprocess.CompletedProcess:
    res = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert res.returncode == 0, f"{cmd}\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    return res


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    shutil.copytree(ROOT, src, symlinks=True, ignore=SKIP)
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp / "dist"), str(src)], timeout=600)
    (whl,) = (tmp / "dist").glob("swe_taskflow-*.whl")
    return whl


def test_the_wheel_ships_every_data_file(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        for path in SHIPPED:
            assert path in names, path
        # the card template is the repository root's file, as content (not a link)
        assert z.read("swe_taskflow_builder/release/hub_card.md") == (ROOT / "hub_card.md").read_bytes()
        example = {n for n in names if n.startswith("swe_taskflow_builder/data/example/")}
        on_disk = {"swe_taskflow_builder/" + p.relative_to(ROOT / "builder").as_posix()
                   for p in (ROOT / "builder/data/example").rglob("*") if p.is_file() and "__pycache__" not in p.parts}
        assert on_disk <= example
        # the builder's own name: a top-level ``builder`` is a name any other distribution may own
        assert {n.split("/")[0] for n in names if not n.startswith("swe_taskflow-")} == {
            "swe_taskflow", "swe_taskflow_builder", "swe_taskflow_harbor"}
        entry = z.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
        assert "swe-taskflow = swe_taskflow_builder.cli:main" in entry


def test_build_and_verify_the_example_from_a_wheel_install(wheel, tmp_path):
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], timeout=300)
    py = venv / "bin" / "python"
    site = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    # dependencies from this environment (a plain path: its editable-install hooks are not run)
    (site / "deps-from-test-env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], timeout=300)
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", SWE_TASKFLOW_CACHE=str(tmp_path / "label-cache"))
    where = _run([str(py), "-c", "import swe_taskflow, swe_taskflow_builder as b; print(swe_taskflow.__file__); "
                  "print(b.__file__); import importlib.util as u; print(u.find_spec('builder'))"],
                 cwd=work, env=env).stdout.split()
    assert all(Path(p).is_relative_to(site) for p in where[:2]) and where[2] == "None", where
    cli = str(venv / "bin" / "swe-taskflow")
    _run([cli, "build", "example", "--out", str(work / "out"), "--quiet"], cwd=work, env=env, timeout=1200)
    release = work / "out" / "release"
    res = _run([cli, "verify", str(release)], cwd=work, env=env, timeout=600)
    assert "all hashes hold" in res.stdout
    manifest = json.loads(next((release / "manifests").glob("*.json")).read_text())
    assert manifest["package"]["git_commit"] is None     # an installed wheel is no git checkout
    assert (release / "croissant.json").is_file()
    assert card_placeholders((release / "README.md").read_text()) == [UNSET_REPO]   # no repo id set yet
    # trajectories import renders the card again from the packaged template
    row = json.loads(_run([str(py), "-c", "import pyarrow.parquet as pq, json; "
                           f"print(json.dumps(pq.read_table('{release}/data/split_prompt-00000-of-00001.parquet')"
                           ".to_pylist()[0]['instance_id']))"], cwd=work, env=env).stdout)
    atif = {"schema_version": "ATIF-v1.4", "agent": {"name": "hand-written", "version": "0", "model_name": "m"},
            "notes": "hand-written fixture", "steps": [{"step_id": 1, "source": "user", "message": "[hand-written]"}],
            "extra": {"instance_id": row}}
    (work / "run.json").write_text(json.dumps(atif))
    _run([cli, "trajectories", "import", str(release), str(work / "run.json"), "--condition", "split_prompt"],
         cwd=work, env=env, timeout=600)
    _run([cli, "verify", str(release)], cwd=work, env=env, timeout=600)
