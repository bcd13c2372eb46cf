"""Data files shipped inside the ``builder`` package (prompts, classifier exemplars, example data,
release recipes, the dataset-card template), found through ``importlib.resources`` so that a wheel
install reads the same files as a source checkout."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from swe_taskflow.errors import ConfigError


def builder_path(*parts: str) -> Path:
    """Path of a file or folder shipped in the ``builder`` package (``builder_path("prompts")``), whichever name it
    is imported under (``swe_taskflow_builder`` installed, ``builder`` from a checkout)."""
    return Path(str(resources.files(__package__).joinpath(*parts)))


def shipped_recipes() -> list[str]:
    """Names of the release recipes shipped with the package (``example``, ...)."""
    return sorted(p.stem for p in builder_path("releases").glob("*.toml"))


def resolve_recipe(name_or_path: str | Path) -> Path:
    """A recipe path as given, or the shipped recipe of that name (``swe-taskflow build example``)."""
    p = Path(name_or_path)
    if p.exists() or p.suffix == ".toml" or "/" in str(name_or_path):
        return p
    shipped = builder_path("releases", f"{name_or_path}.toml")
    if shipped.is_file():
        return shipped
    raise ConfigError("recipe not found: neither a file nor a shipped recipe", path=str(name_or_path),
                      hint="shipped: " + ", ".join(shipped_recipes()))


__all__ = ["builder_path", "shipped_recipes", "resolve_recipe"]
