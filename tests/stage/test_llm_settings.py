"""One ``[<section>.llm]`` table type (LLMSettings) in [split], [questions], [augmentations] and [stress], checked
when the recipe loads (issue 33): a misspelt backend used to pass load_recipe, preflight and ``build --dry-run`` and
fail only when the augment stage started, after the proofs. The old flat keys still load, with a deprecation hint,
and hash to the same stage-key bytes."""

from __future__ import annotations

import warnings

import pytest

from builder.llm import BACKENDS
from builder.pipeline.recipe import LLM_SECTIONS, LLMSettings, load_recipe, preflight
from swe_taskflow.errors import ConfigError

HEAD = '[release]\nname = "x"\nversion = "1"\n[source]\nspec = "tasks.jsonl"\n'
#: each section with what makes it call its LLM
USES = {"split": 'splitter = "llm"\n', "questions": 'mode = "generate"\ntrajectories = "trajs"\n',
        "augmentations": 'kinds = ["planning"]\nwriter = "llm"\n', "stress": 'writer = "llm"\n'}


def _recipe(tmp_path, section: str, llm: str) -> str:
    (tmp_path / "tasks.jsonl").write_text("")
    (tmp_path / "trajs").mkdir(exist_ok=True)
    (tmp_path / "store").mkdir(exist_ok=True)
    body = HEAD + f"[{section}]\n{USES[section]}{llm}"
    body += '[questions]\nmode = "none"\n' if section != "questions" else '[proofs]\nenabled = false\n'
    p = tmp_path / "r.toml"
    p.write_text(body + '[conditions]\nnames = ["single_prompt"]\n')
    return str(p)


FLAT = 'llm = "{b}"\nmodel = "m"\nresponses = "store"\n'
TABLE = '[{s}.llm]\nbackend = "{b}"\nmodel = "m"\nresponses = "store"\n'


@pytest.mark.parametrize("section", LLM_SECTIONS)
@pytest.mark.parametrize("spelling", ["flat", "table"])
def test_an_unknown_backend_fails_at_load_naming_file_key_and_the_known_ones(tmp_path, section, spelling):
    text = (FLAT if spelling == "flat" else TABLE).format(s=section, b="opnai")
    with warnings.catch_warnings(), pytest.raises(ConfigError) as info:
        warnings.simplefilter("ignore", FutureWarning)
        load_recipe(_recipe(tmp_path, section, text))
    err = info.value
    assert err.field == (f"{section}.llm" if spelling == "flat" else f"{section}.llm.backend")
    assert "unknown LLM backend" in str(err) and "r.toml" in str(err) and err.actual == "opnai"
    assert all(b in str(err) for b in BACKENDS)


@pytest.mark.parametrize("section", LLM_SECTIONS)
def test_flat_keys_still_load_with_a_deprecation_hint_and_hash_as_before(tmp_path, section):
    with pytest.warns(FutureWarning, match=rf"{section}\.llm, {section}\.model, {section}\.responses: .*deprecated"
                                           rf"(.|\n)*\[{section}\.llm\]\nbackend = \"replay\"\nmodel = \"m\"") as seen:
        flat = load_recipe(_recipe(tmp_path, section, FLAT.format(s=section, b="replay")))
    assert seen[0].filename.endswith("r.toml")                    # named at the recipe, not at the code
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)            # the table spelling warns of nothing
        table = load_recipe(_recipe(tmp_path, section, TABLE.format(s=section, b="replay")))
    want = LLMSettings(backend="replay", model="m", responses="store")
    assert getattr(flat, section).llm == getattr(table, section).llm == want
    # what stage keys hash keeps the flat keys' bytes: caches and published keys stay valid
    plain = table.section(section)
    assert flat.section(section) == plain
    assert {k: plain[k] for k in ("llm", "model", "responses")} == {"llm": "replay", "model": "m", "responses": "store"}
    assert not any(isinstance(v, dict) for v in plain.values())


def test_both_spellings_at_once_are_refused(tmp_path):
    text = 'model = "m"\n' + TABLE.format(s="augmentations", b="replay")
    with pytest.raises(ConfigError, match=r"augmentations\.model beside the \[augmentations\.llm\] table") as info:
        load_recipe(_recipe(tmp_path, "augmentations", text))
    assert info.value.field == "augmentations.model"


@pytest.mark.parametrize("section", LLM_SECTIONS)
def test_a_used_llm_without_a_backend_is_named(tmp_path, section):
    with pytest.raises(ConfigError, match=rf"needs {section}\.llm") as info:
        load_recipe(_recipe(tmp_path, section, ""))
    assert info.value.field == f"{section}.llm" and "backend" in info.value.hint


def test_unknown_keys_of_the_table_and_a_table_that_is_not_one(tmp_path):
    with pytest.raises(ConfigError, match="unknown key") as info:
        load_recipe(_recipe(tmp_path, "stress", '[stress.llm]\nbackend = "replay"\ntemperature = 1\n'))
    assert info.value.field == "stress.llm.temperature"
    with pytest.raises(ConfigError, match="wrong type") as info:
        load_recipe(_recipe(tmp_path, "stress", '[stress.llm]\nbackend = 3\n'))
    assert info.value.field == "stress.llm.backend"


def test_dry_run_refuses_the_misspelt_backend_before_any_stage(tmp_path, capsys):
    from builder.cli import main

    path = _recipe(tmp_path, "augmentations", TABLE.format(s="augmentations", b="opnai"))
    assert main(["build", path, "--out", str(tmp_path / "out"), "--dry-run"]) == 2
    assert "augmentations.llm.backend" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_good_table_passes_preflight(tmp_path):
    preflight(load_recipe(_recipe(tmp_path, "augmentations", TABLE.format(s="augmentations", b="replay"))))


def test_the_stages_open_the_backend_the_table_names(tmp_path):
    """The splitter, the question miner's backend and both writers are built from the one table."""
    from builder import llm
    from builder.turns import LLMWriter, get_writer
    from builder.pipeline.stages.split import make_splitter

    for section in ("augmentations", "stress"):
        r = load_recipe(_recipe(tmp_path, section, TABLE.format(s=section, b="replay")))
        writer, backend = get_writer(getattr(r, section), r.resolve, section=section)
        assert isinstance(writer, LLMWriter) and isinstance(backend, llm.ReplayBackend)
        assert backend.store is not None and backend.config.model == "m"
    r = load_recipe(_recipe(tmp_path, "split", TABLE.format(s="split", b="replay")))
    assert isinstance(make_splitter(r).llm, llm.ReplayBackend)
    r = load_recipe(_recipe(tmp_path, "questions", TABLE.format(s="questions", b="replay")))
    assert isinstance(llm.backend_from(r.questions.llm, r.resolve), llm.ReplayBackend)
