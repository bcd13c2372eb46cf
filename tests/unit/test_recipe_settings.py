"""Recipe settings are declared once (type, default, bounds, help) and checked once; the docs' table is theirs."""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

import pytest

from builder.pipeline.recipe import _SECTIONS, parse_recipe, settings_markdown
from swe_taskflow.errors import ConfigError
from swe_taskflow.fieldtypes import from_table, setting, settings_rows
from swe_taskflow.select_config import SelectConfig

ROOT = Path(__file__).resolve().parents[2]
BASE = {"release": {"name": "x", "version": "1"}, "source": {"spec": "tasks.jsonl"},
        "questions": {"mode": "none"}, "conditions": {"names": ["single_prompt"]}}


def _parse(tmp_path, **sections):
    return parse_recipe({**BASE, **sections}, tmp_path / "r.toml")


def test_docs_table_is_generated_from_the_declarations():
    text = (ROOT / "docs" / "build.md").read_text()
    begin = text.index("<!-- recipe-settings:begin (generated) -->\n")
    end = text.index("<!-- recipe-settings:end -->")
    assert text[text.index("\n", begin) + 1:end] == settings_markdown()


def test_every_recipe_key_is_in_the_table():
    table = settings_markdown()
    for name, cls in _SECTIONS.items():
        for f in fields(cls):
            spec = f.metadata["setting"]
            if spec.table is not None:
                assert f"`[{name}.{spec.key or f.name}]`" in table
            elif not spec.set_by and spec.item is None:
                assert f"`{name}.{spec.key or f.name}`" in table


def _bounded():
    for name, cls in _SECTIONS.items():
        for f in fields(cls):
            spec = f.metadata["setting"]
            if spec.set_by:
                continue
            key = spec.key or f.name
            if spec.hi is not None:
                yield name, key, spec.hi + (1 if isinstance(spec.hi, int) else 0.5), "out of range"
            if spec.lo is not None:
                yield name, key, spec.lo - 1, "out of range"
            if spec.choices and f.name != "names":
                yield name, key, ["no-such-name"] if "tuple" in str(f.type) else "no-such-name", "unknown"


@pytest.mark.parametrize("section, key, value, words", list(_bounded()),
                         ids=lambda v: v if isinstance(v, str) else None)
def test_every_declared_bound_is_enforced_naming_file_and_key(tmp_path, section, key, value, words):
    with pytest.raises(ConfigError) as info:
        _parse(tmp_path, **{section: {**BASE.get(section, {}), key: value}})
    assert info.value.field in (f"{section}.{key}", f"{section}.{key}[0]")
    assert words in info.value.message and info.value.path == str(tmp_path / "r.toml")


def test_documented_error_line_holds(tmp_path):
    """docs/build.md shows this line for a negative selection seed."""
    with pytest.raises(ConfigError) as info:
        _parse(tmp_path, select={"seed": -1})
    assert str(info.value).endswith("field 'select.seed': out of range (expected '0..9223372036854775807', got -1)")


@pytest.mark.parametrize("key, value", [("include_original", "false"), ("apply_target_filter", 0),
                                        ("max_questions", True), ("restarts", 8.0)])
def test_select_settings_are_type_checked(tmp_path, key, value):
    """A quoted "false" was taken as a true flag before; now every [select] key has its declared type."""
    with pytest.raises(ConfigError, match="wrong type") as info:
        _parse(tmp_path, select={key: value})
    assert info.value.field == f"select.{key}"


def test_select_config_built_in_code_is_checked_too():
    with pytest.raises(ConfigError, match="wrong type"):
        SelectConfig(include_original="no")
    with pytest.raises(ConfigError, match="max_augments_per_session"):
        SelectConfig(max_augments_per_session=5)


def test_integer_shares_are_numbers(tmp_path):
    """``min_question_share = 1`` and ``= 1.0`` are one setting: the same value, the same stage key."""
    one = _parse(tmp_path, select={"min_question_share": 1})
    other = _parse(tmp_path, select={"min_question_share": 1.0})
    assert one.select == other.select and isinstance(one.select.min_question_share, float)
    assert one.section("select") == other.section("select")


def test_augmentation_turns_have_one_recipe_name(tmp_path):
    with pytest.raises(ConfigError, match="unknown key") as info:
        _parse(tmp_path, select={"max_augments_per_session": 1})
    assert info.value.field == "select.max_augments_per_session" and "augmentations.max_per_session" in info.value.hint
    assert "`select.max_augments_per_session`" not in settings_markdown()    # a recipe key in one section only


def test_a_target_that_does_not_load_names_the_recipe_key(tmp_path):
    from builder.pipeline.recipe import recipe_target

    (tmp_path / "t.json").write_text('{"format": "something else"}')
    r = _parse(tmp_path, target={"path": "t.json"})
    with pytest.raises(ConfigError) as info:
        recipe_target(r)
    assert info.value.field == "target.path" and info.value.path == str(tmp_path / "r.toml")
    assert "t.json" in str(info.value)


def test_a_new_setting_touches_one_place(tmp_path):
    """Declaring a field is all it takes: parsing, every check and the docs row follow from it."""

    @dataclass(frozen=True)
    class Demo:
        level: int = setting(1, lo=0, hi=5, help="How loud.")
        colour: str = setting("red", choices=("red", "blue"), noun="colour", help="Which colour.")
        files: tuple[str, ...] = setting((), exists=True, noun="demo file", help="Files that must exist.")

    (tmp_path / "a.txt").write_text("")
    ok = from_table(Demo, {"level": 5, "files": ["a.txt"]}, path="r.toml", section="demo", resolve=tmp_path.joinpath)
    assert ok == Demo(level=5, files=("a.txt",))
    for table, field, words in (({"level": 6}, "demo.level", "out of range (expected '0..5', got 6)"),
                                ({"level": "6"}, "demo.level", "wrong type"),
                                ({"colour": "green"}, "demo.colour", "unknown colour"),
                                ({"files": ["a.txt", "b.txt"]}, "demo.files[1]", "demo file not found"),
                                ({"size": 1}, "demo.size", "unknown key")):
        with pytest.raises(ConfigError) as info:
            from_table(Demo, table, path="r.toml", section="demo", resolve=tmp_path.joinpath)
        assert info.value.field == field and words in str(info.value) and str(info.value).startswith("r.toml: ")
    assert [r[0] for r in settings_rows(Demo, "demo")] == ["demo.level", "demo.colour", "demo.files"]
    assert settings_rows(Demo, "demo")[0][2:] == ("1", "0..5", "How loud.")
