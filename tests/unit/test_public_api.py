"""The curated public API of ``swe_taskflow`` changes only together with CHANGELOG.md's "Public API" list."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import swe_taskflow

CHANGELOG = Path(__file__).resolve().parents[2] / "CHANGELOG.md"


def changelog_names(section: str) -> list[str]:
    """The names a ``## <section>`` list of CHANGELOG.md gives (``- `name` ...`` lines)."""
    text = CHANGELOG.read_text(encoding="utf-8")
    m = re.search(rf"^## {re.escape(section)}\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    assert m, f"CHANGELOG.md has no '## {section}' section"
    return re.findall(r"^- `([A-Za-z_][A-Za-z0-9_]*)`", m.group(1), flags=re.M)


def assert_listed(section: str, exported, module: str) -> None:
    """``module``'s ``__all__`` (``exported``) and CHANGELOG.md's ``## <section>`` list name the same names, each
    listed once."""
    listed = changelog_names(section)
    assert len(listed) == len(set(listed)), f"a name is listed twice in CHANGELOG.md's {section}"
    added = sorted(set(exported) - set(listed))
    removed = sorted(set(listed) - set(exported))
    assert not added, f"{module} names not in CHANGELOG.md's {section} list (say so under Unreleased): {added}"
    assert not removed, f"CHANGELOG.md lists names {module} no longer exports: {removed}"


def test_public_api_matches_the_changelog():
    assert_listed("Public API", swe_taskflow.__all__, "swe_taskflow")


def test_every_public_name_resolves_to_its_defining_module():
    for name in swe_taskflow.__all__:
        value = getattr(swe_taskflow, name)
        if name == "__version__":
            continue
        module = importlib.import_module(f"swe_taskflow.{swe_taskflow._EXPORTS[name]}")
        assert getattr(module, name) is value
        defined_in = getattr(value, "__module__", None)
        if defined_in is not None and not isinstance(value, (str, int, float, tuple)):
            assert defined_in == module.__name__, f"{name} is re-exported from {module.__name__}, defined in {defined_in}"


def test_unknown_name_is_an_attribute_error():
    try:
        swe_taskflow.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("an unknown name resolved")


def test_import_stays_light():
    """``import swe_taskflow`` loads no numpy, pyarrow or datasets: names load on first use."""
    code = "import sys, swe_taskflow; print(sorted(m for m in ('numpy', 'pyarrow', 'datasets') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
