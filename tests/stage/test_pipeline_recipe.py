"""Recipe parsing and validation: every error names the recipe file and the dotted key."""

from __future__ import annotations

from pathlib import Path

import pytest

from builder.pipeline.recipe import load_recipe, parse_recipe
from swe_taskflow.errors import ConfigError
from swe_taskflow.schema import CONDITIONS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "builder" / "releases" / "example.toml"


def _write(tmp_path: Path, body: str) -> Path:
    (tmp_path / "pool.jsonl").write_text("")
    p = tmp_path / "r.toml"
    p.write_text('[release]\nname = "x"\nversion = "1"\n[source]\nspec = "tasks.jsonl"\n' + body)
    return p


def test_example_recipe_is_complete():
    r = load_recipe(EXAMPLE)
    assert r.release.name == "swe-taskflow-example"
    assert r.conditions.names == CONDITIONS
    assert r.split.splitter == "structural" and r.classifier.name == "embedded"
    assert r.resolve(r.source.spec).is_file() and r.resolve(r.repos.bundled).is_dir()
    assert [p.name for p in r.questions.pools] == ["example"]
    # the bundled repository is the hand-written task's own: its proofs run again after its gold patch
    assert r.proofs.gold_patch is True and r.repos.bundled_repo == "swe-taskflow/ticketdesk"


def test_bundled_folder_needs_its_repository_name(tmp_path):
    (tmp_path / "repo").mkdir()
    with pytest.raises(ConfigError) as err:
        load_recipe(_write(tmp_path, '[questions]\nmode = "none"\n[conditions]\nnames = ["single_prompt"]\n[repos]\nbundled = "repo"\n'))
    assert err.value.field == "repos.bundled_repo"


def test_minimal_recipe_gets_defaults(tmp_path):
    r = load_recipe(_write(tmp_path, '[questions]\nmode = "none"\n[conditions]\nnames = ["single_prompt", "split_prompt"]\n'))
    assert r.select.restarts == 64 and r.select.sweeps == 20
    assert r.proofs.sandbox == "auto" and r.target.path == "default"


@pytest.mark.parametrize("body, field, words", [
    ('[proofs]\nsandbox = "vm"\n', "proofs.sandbox", "unknown sandbox"),
    ('[proofs]\ntimeout = 3\n', "proofs.timeout", "unknown key"),
    ('[proofs]\njobs = "two"\n', "proofs.jobs", "wrong type"),
    ('[proofs]\njobs = 0\n', "proofs.jobs", "out of range"),
    ('[conditions]\nnames = ["QA-first"]\n', "conditions.names[0]", "unknown condition"),
    ('[colours]\nx = 1\n', "colours", "unknown section"),
    ('[questions]\nmode = "pool"\n[[questions.pools]]\nname = "p"\npath = "missing.jsonl"\n',
     "questions.pools[0].path", "not found"),
    ('[questions]\nmode = "pool"\n[[questions.pools]]\nname = "bad name"\npath = "pool.jsonl"\n',
     "questions.pools[0].name", "split-name"),
    ('[questions]\nmode = "none"\n', "conditions.names", "QA conditions need questions"),
    ('[questions]\nmode = "pool"\n[[questions.pools]]\nname = "p"\npath = "pool.jsonl"\n',
     "repos", "proofs need repositories"),
    ('[select]\nmin_question_share = 1.5\n[questions]\nmode = "none"\n[conditions]\nnames = ["single_prompt"]\n',
     "select.min_question_share", "share"),
    ('[select]\npreset = "best"\n[questions]\nmode = "none"\n[conditions]\nnames = ["single_prompt"]\n',
     "select.preset", "unknown selection preset"),
    ('[select]\nmin_placement_share = 0.5\n[questions]\nmode = "none"\n[conditions]\nnames = ["single_prompt"]\n',
     "select.min_placement_share", "a third"),
    ('[split]\nsplitter = "llm"\n[questions]\nmode = "none"\n[conditions]\nnames = ["single_prompt"]\n',
     "split.llm", "needs split.llm"),
    ('[target]\npath = "nope.json"\n[questions]\nmode = "none"\n[conditions]\nnames = ["single_prompt"]\n',
     "target.path", "target file not found"),
])
def test_bad_recipes_name_file_and_key(tmp_path, body, field, words):
    path = _write(tmp_path, body)
    with pytest.raises(ConfigError) as info:
        load_recipe(path)
    err = info.value
    assert err.field == field
    assert words in str(err)
    assert str(path) in str(err)


def test_missing_section_and_key(tmp_path):
    p = tmp_path / "r.toml"
    p.write_text('[release]\nname = "x"\n')
    with pytest.raises(ConfigError, match="missing section") as info:
        load_recipe(p)
    assert info.value.field == "source"
    with pytest.raises(ConfigError, match="missing key") as info:
        parse_recipe({"release": {"name": "x"}, "source": {"spec": "s"}}, tmp_path / "r.toml")
    assert info.value.field == "release.version"


def test_not_toml_and_not_found(tmp_path):
    p = tmp_path / "r.toml"
    p.write_text("[release\n")
    with pytest.raises(ConfigError, match="not valid TOML") as info:
        load_recipe(p)
    assert info.value.path == str(p)
    with pytest.raises(ConfigError, match="recipe file not found"):
        load_recipe(tmp_path / "absent.toml")


def test_relative_paths_resolve_against_the_recipe(tmp_path):
    sub = tmp_path / "releases"
    sub.mkdir()
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "pool.jsonl").write_text("")
    (tmp_path / "data" / "repo").mkdir()
    p = sub / "r.toml"
    p.write_text('[release]\nname = "x"\nversion = "1"\n[source]\nspec = "../data/t.jsonl"\n'
                 '[questions]\nmode = "pool"\n[[questions.pools]]\nname = "p"\npath = "../data/pool.jsonl"\n'
                 '[repos]\nbundled = "../data/repo"\nbundled_repo = "o/r"\n')
    r = load_recipe(p)
    assert r.resolve(r.repos.bundled) == (tmp_path / "data" / "repo").resolve()
    assert r.section("questions")["pools"] == [{"name": "p", "path": "../data/pool.jsonl"}]


def test_cli_reports_a_bad_recipe_in_one_line(tmp_path, capsys):
    from builder.cli import main

    path = _write(tmp_path, '[proofs]\nsandbox = "vm"\n')
    assert main(["build", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert str(path) in err and "proofs.sandbox" in err and "'vm'" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("path", sorted((ROOT / "builder" / "releases").glob("*.toml")), ids=lambda p: p.name)
def test_every_shipped_recipe_loads(path):
    if "../../../shared/" in path.read_text() and not (ROOT.parent / "shared" / "data").is_dir():
        # the Verified recipe reads ../shared beside the checkout: without it, one clear error naming the key
        with pytest.raises(ConfigError) as info:
            load_recipe(path)
        assert info.value.field and "shared" in str(info.value)
        return
    r = load_recipe(path)
    assert r.release.name and r.conditions.names


@pytest.mark.data
def test_verified_recipe_loads_with_the_shared_data(shared_dir, tmp_path):
    import importlib.util
    spec = importlib.util.spec_from_file_location("verified_build", ROOT / "benchmarks" / "verified_build.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    r = load_recipe(mod.local_recipe(shared_dir, tmp_path))
    assert r.release.name == "swe-taskflow-verified" and r.questions.mode == "generate"
    assert r.source.source == "swe-bench-verified" and len(r.conditions.names) == 8


def test_question_intents_option(tmp_path):
    body = '[questions]\nmode = "none"\n[conditions]\nnames = ["single_prompt"]\n'
    assert load_recipe(_write(tmp_path, body)).classifier.question_intents == "declared"    # the default
    r = load_recipe(_write(tmp_path, '[classifier]\nquestion_intents = "classify"\n' + body))
    assert r.classifier.question_intents == "classify"
    with pytest.raises(ConfigError) as info:
        load_recipe(_write(tmp_path, '[classifier]\nquestion_intents = "guess"\n' + body))
    assert info.value.field == "classifier.question_intents"


def test_select_preset_fills_unset_keys_and_keeps_set_ones(tmp_path):
    from swe_taskflow.select_config import PRESETS, SelectConfig

    body = '[questions]\nmode = "none"\n[conditions]\nnames = ["single_prompt"]\n'
    r = load_recipe(_write(tmp_path, '[select]\npreset = "paper"\nrestarts = 8\n' + body))
    cfg = r.select
    assert cfg == SelectConfig(**{**PRESETS["paper"], "restarts": 8}, preset="paper")
    assert r.select.min_full_split_share == 1.0 and r.select.include_original is False
    assert r.section("select")["preset"] == "paper"       # the stage key sees the resolved values
    plain = load_recipe(_write(tmp_path, body)).select
    assert plain == SelectConfig()
