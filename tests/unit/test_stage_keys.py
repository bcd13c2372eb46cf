"""Stage cache keys come from the code itself: every module and package data file a stage's import closure uses
moves its key, and nothing outside it does (issue 23). The closure is also checked against what Python really
imports, and every package data file against the accessors the closure sees, so the derivation cannot drift."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from builder.pipeline import registry
from builder.pipeline.code_closure import PROJECT_PACKAGES, CodeBase, installed, is_recipe
from builder.pipeline.recipe import load_recipe, parse_recipe, resolve_path
from builder.pipeline.runner import RecipeSlice, UndeclaredRecipeRead, stage_key
from builder.resources import builder_path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = builder_path("releases", "example.toml")
#: Modules that may use ``__file__``: for the git checkout (package provenance) and the code base itself, no data.
ALLOWED_FILE_PATHS = ("builder.release.writer", "builder.pipeline.code_closure")


def _module_names(root: Path) -> list[str]:
    out = []
    for pkg in PROJECT_PACKAGES:
        for p in (root / pkg).rglob("*.py"):
            if "__pycache__" in p.parts or "data" in p.relative_to(root / pkg).parts:
                continue
            parts = list(p.relative_to(root).with_suffix("").parts)
            out.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return sorted(out)


def _all_files(root: Path) -> list[Path]:
    return sorted(f for pkg in PROJECT_PACKAGES for f in (root / pkg).rglob("*")
                  if f.is_file() and "__pycache__" not in f.parts)


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    """The project's packages copied (symlinked data such as hub_card.md as its content)."""
    root = tmp_path_factory.mktemp("code")
    for pkg in PROJECT_PACKAGES:
        shutil.copytree(installed().root / pkg, root / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    return root


@pytest.fixture(scope="module")
def stages_and_recipe():
    mp = pytest.MonkeyPatch()
    mp.setattr(registry, "resolve_sandbox", lambda name: "docker")   # no daemon probe per key
    mp.setattr(registry, "package_info", lambda: {"name": "swe-taskflow"})
    yield registry.pipeline_stages(), load_recipe(EXAMPLE)
    mp.undo()


@pytest.mark.slow
def test_every_file_in_a_closure_moves_the_key_and_no_other_file_does(copy, stages_and_recipe):
    stages, recipe = stages_and_recipe
    cb = CodeBase(copy)
    upstream = {s.name: "0" * 64 for s in stages}
    closures = {}
    for st in stages:
        modules = cb.closure(st.module)
        used = {cb._find(m).path for m in modules} | set(cb.data_files(modules))
        closures[st.name] = {p.resolve() for p in used}
    base = {st.name: stage_key(st, recipe, upstream, code=cb)[0] for st in stages}
    files = _all_files(copy)
    assert len(files) > 150
    inside_seen = {st.name: 0 for st in stages}
    outside_seen = {st.name: 0 for st in stages}
    for f in files:
        original = f.read_bytes()
        f.write_bytes(original + b"\n# edited\n")
        try:
            for st in stages:
                moved = stage_key(st, recipe, upstream, code=cb)[0] != base[st.name]
                inside = f.resolve() in closures[st.name]
                assert moved == inside, (st.name, f.relative_to(copy).as_posix(), "in closure" if inside else "outside")
                (inside_seen if inside else outside_seen)[st.name] += 1
        finally:
            f.write_bytes(original)
    for st in stages:   # both directions were really exercised for every stage
        assert inside_seen[st.name] >= 20 and outside_seen[st.name] >= 5, (st.name, inside_seen, outside_seen)


def test_the_tfas_formula_and_the_card_template_key_the_stages_that_use_them(stages_and_recipe):
    """The stale keys the review found: select without swe_taskflow.flow, write without hub_card.md/citations."""
    stages, _ = stages_and_recipe
    cb = installed()
    by = {st.name: cb.material(st.module) for st in stages}
    for name in ("swe_taskflow/flow.py", "swe_taskflow/candidates.py", "swe_taskflow/conditions.py"):
        assert name in by["select"]
    assert "builder/release/hub_card.md" in by["write"] and "swe_taskflow/data/citations.json" in by["write"]
    assert "builder/prompts/split_write.md" in by["split"]


@pytest.mark.parametrize("stage", [s for s in registry.STAGE_NAMES])
def test_the_static_closure_covers_what_python_imports(stage):
    """An independent check: the project modules a fresh interpreter has loaded after importing the stage module
    are all in its static closure (which also holds what functions import lazily)."""
    code = ("import json, sys; import builder.pipeline.stages.%s; "
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in %r)))" % (stage, PROJECT_PACKAGES))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    loaded = set(json.loads(out.stdout))
    missing = loaded - set(installed().closure(f"builder.pipeline.stages.{stage}"))
    assert not missing, f"stage {stage}: imported at run time but not in the static closure: {sorted(missing)}"


#: Shipped files no build reads: licenses and attributions, the response store's README, and the script the
#: README's offline Harbor run gives mini-swe-agent's deterministic model (read inside Harbor, not by a stage).
NEVER_READ_BY_A_BUILD = ("ATTRIBUTION.md", "LICENSE-SWE-Bench-Pro.txt", "README.md", "submit-each-turn.json",
                         "py.typed")   # PEP 561: a marker for type checkers, empty


def _recipe_inputs(root: Path) -> set[Path]:
    """Files and folders the recipes anywhere in the packages point at: stage inputs, keyed through ``Stage.files``
    (a maintainer's recipe may live beside the shipped ones or in a folder of its own: docs/build.md)."""
    out: set[Path] = set()

    def walk(v, base: Path):
        if isinstance(v, str) and v:
            p = resolve_path(base, v)
            if p.exists():
                out.add(p)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x, base)
        elif isinstance(v, list):
            for x in v:
                walk(x, base)

    for recipe in (f for f in _all_files(root) if is_recipe(f)):
        walk(tomllib.loads(recipe.read_text(encoding="utf-8")), recipe.parent)
    return out


def _unkeyed_data(cb: CodeBase) -> list[str]:
    """Package data files no stage key covers: neither read through an accessor nor a recipe's input."""
    data = {p.resolve() for p in cb.data_files(tuple(_module_names(cb.root)))}
    inputs = _recipe_inputs(cb.root)
    shipped = {f.resolve() for f in _all_files(cb.root) if f.suffix not in (".py", ".pyc") and not is_recipe(f)}
    return sorted(str(p) for p in shipped - data if not any(p == i or i in p.parents for i in inputs)
                  and p.name not in NEVER_READ_BY_A_BUILD)


def test_every_package_data_file_is_keyed_by_the_stages_that_read_it():
    """Package data a module reads must be reached through an accessor the closure sees, or be a recipe's input
    (keyed by the stage's files); data read any other way (a path from ``__file__``) would be invisible."""
    cb = installed()
    modules = tuple(_module_names(cb.root))
    unkeyed = _unkeyed_data(cb)
    assert not unkeyed, unkeyed
    offenders = []
    for m in modules:
        src = cb._find(m).path.read_text(encoding="utf-8")
        if "__file__" in src and m not in ALLOWED_FILE_PATHS:
            offenders.append(m)
    assert not offenders, f"modules computing paths from __file__ (use builder_path / importlib.resources): {offenders}"


def _keys(stages, recipe, cb: CodeBase) -> dict[str, str]:
    upstream = {s.name: "0" * 64 for s in stages}
    return {st.name: stage_key(st, recipe, upstream, code=cb)[0] for st in stages}


@pytest.mark.parametrize("where", ["builder/releases/mine.toml", "builder/my_recipes/mine.toml"])
def test_a_new_recipe_file_changes_no_other_builds_keys(copy, stages_and_recipe, where):
    """Issue 36: every shipped recipe was hashed into every stage's code key (builder/resources.py lists the
    recipes' folder), so saving a recipe beside them re-ran 13 of 13 stages of every other build."""
    stages, recipe = stages_and_recipe
    cb = CodeBase(copy)
    before = _keys(stages, recipe, cb)
    new = copy / where
    new.parent.mkdir(parents=True, exist_ok=True)
    new.write_text(EXAMPLE.read_text(encoding="utf-8").replace("swe-taskflow-example", "mine"), encoding="utf-8")
    try:
        assert _keys(stages, recipe, CodeBase(copy)) == before
        shipped = copy / "builder" / "releases" / "swe-bench-verified.toml"   # editing a sibling: no key moves
        original = shipped.read_bytes()
        shipped.write_bytes(original + b"\n# edited\n")
        try:
            assert _keys(stages, recipe, CodeBase(copy)) == before
        finally:
            shipped.write_bytes(original)
    finally:
        new.unlink()


def test_a_recipe_outside_the_shipped_folder_is_an_input_not_unkeyed_data(copy):
    """A maintainer's recipe under builder/ (not builder/releases/) is a recipe: its data paths are inputs."""
    mine = copy / "builder" / "my_recipes" / "mine.toml"
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text('[source]\nspec = "../data/example/tasks.jsonl"\n', encoding="utf-8")
    try:
        assert is_recipe(mine) and mine not in CodeBase(copy).data_files(tuple(_module_names(copy)))
        assert (copy / "builder" / "data" / "example" / "tasks.jsonl").resolve() in _recipe_inputs(copy)
        assert _unkeyed_data(CodeBase(copy)) == []
    finally:
        mine.unlink()
        mine.parent.rmdir()


def test_a_stage_sees_only_the_recipe_sections_its_key_hashes():
    recipe = load_recipe(EXAMPLE)
    view = RecipeSlice(recipe, ("conditions", "questions"))
    assert view.splits() == recipe.splits()          # methods run against the slice
    assert view.conditions == recipe.conditions and view.resolve("x") == recipe.resolve("x")
    with pytest.raises(UndeclaredRecipeRead, match="'select'"):
        view.select
    with pytest.raises(UndeclaredRecipeRead, match="'release'"):
        view.section("release")
    narrow = RecipeSlice(recipe, ("conditions",))
    with pytest.raises(UndeclaredRecipeRead, match="'questions'"):   # splits() needs the question pools
        narrow.splits()


def test_a_setting_a_stage_reads_moves_its_key(stages_and_recipe):
    """``conditions.pool`` decides which pool the select stage draws from: it must key it (it did not)."""
    stages, recipe = stages_and_recipe
    select = next(s for s in stages if s.name == "select")
    data = tomllib.loads(EXAMPLE.read_text(encoding="utf-8"))
    assert data["conditions"]["pool"] == "example"
    data["conditions"]["pool"] = ""        # the first pool: here the same one, but a different setting
    other = parse_recipe(data, EXAMPLE)
    up = {n: "0" * 64 for n in select.needs}
    assert stage_key(select, recipe, up)[0] != stage_key(select, other, up)[0]


def test_code_keys_do_not_depend_on_the_name_the_builder_runs_under(tmp_path):
    """Installed, the builder's folder is the package ``swe_taskflow_builder`` (the ``swe-taskflow`` command); a
    checkout also runs it as ``builder`` (``python -m builder.cli``). Every stage's code material is the same
    under both names: a build is cached and keyed alike whichever way it was started."""
    import importlib.util

    if importlib.util.find_spec("swe_taskflow_builder") is None:
        pytest.skip("swe_taskflow_builder is not installed (pip install -e . installs it)")
    script = ("import json; from swe_taskflow_builder.pipeline.registry import pipeline_stages; "
              "from swe_taskflow_builder.pipeline.code_closure import installed; "
              "print(json.dumps({s.name: [s.module, installed().material(s.module)] for s in pipeline_stages()}))")
    res = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    other = json.loads(res.stdout)
    here = {s.name: [s.module, installed().material(s.module)] for s in registry.pipeline_stages()}
    assert set(other) == set(here)
    for name, (module, material) in other.items():
        assert module.startswith("swe_taskflow_builder.") and here[name][0].startswith("builder."), name
        assert material == here[name][1], name
        assert any(k.startswith("builder/") for k in material), name   # the builder's files, spelled builder/
