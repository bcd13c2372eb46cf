"""The card's facts are typed values from the rows; its prose is a Jinja2 template rendered strictly (issue 33, §3)."""

from __future__ import annotations

import dataclasses
import re
import tomllib
from pathlib import Path

import pytest

from builder.release.card import default_template, render_card
from builder.release.writer import read_release
from swe_taskflow.errors import ConfigError
from swe_taskflow.target import load_target
from tests.support.synthetic import small_release

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cardtpl")
    small_release(tmp, name="tpl")
    manifest, rows, _ = read_release(tmp / "rel")
    return tmp, manifest, load_target(tmp / "t.json"), rows


def _render(release, text: str):
    tmp, manifest, target, rows = release
    tpl = tmp / "card.md"
    tpl.write_text(text)
    return render_card(manifest, target, rows, template=tpl)


def test_the_facts_are_frozen_typed_values_computed_from_the_rows(release):
    from builder.release.card_facts import CardFacts, card_facts
    _, manifest, target, rows = release
    facts = card_facts(manifest, target, rows)
    assert isinstance(facts, CardFacts)
    assert facts.release.total_rows == sum(len(r) for r in rows.values())
    assert [s.name for s in facts.release.splits] == list(rows)
    assert facts.stress is None and facts.questions.questions == len(
        {q["question_id"] for rs in rows.values() for r in rs for q in r["questions"]})
    with pytest.raises(dataclasses.FrozenInstanceError):
        facts.release.repos = 0   # type: ignore[misc]


def test_a_name_the_facts_lack_is_an_error_never_an_empty_string(release):
    base = default_template().read_text()
    for typo in ("{{ f.release.taskz }}", "{{ nonesuch }}", "{{ f.questions.authorz|length }}"):
        with pytest.raises(ConfigError, match="names a value the facts do not have") as e:
            _render(release, base + typo + "\n")
        assert "card.md" in str(e.value)


def test_a_template_that_is_not_valid_jinja_is_refused_with_its_line(release):
    with pytest.raises(ConfigError, match="not valid Jinja2") as e:
        _render(release, "---\n{{ card_data }}\n---\n\n{% if f.release.repos %}\nno end\n")
    assert "line" in str(e.value) and "card.md" in str(e.value)


def test_the_template_writes_no_number_of_its_own():
    """Every number in the card comes from the facts: outside Jinja tags the template holds only the method's
    fixed constants."""
    text = re.sub(r"\{[{%#].*?[}%#]\}", "", default_template().read_text(), flags=re.S)
    for constant in ("RFC 8785", "SHA-256", "sha256", "(base 2)", "100 x (S_L x S_T x S_R)^(1/3)", "S_k = 1 - JSD"):
        text = text.replace(constant, "")
    assert not re.findall(r"\d", text)


def test_jinja2_is_declared_where_the_card_is_rendered():
    """jinja2 came only through torch and mlcroissant; the card needs it in the build extra."""
    build = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["build"]
    assert any(re.match(r"jinja2\b", d, re.I) for d in build)
