"""The paper and the source benchmarks a release cites (``swe_taskflow/data/citations.json``)."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any


@lru_cache(maxsize=1)
def _doc() -> dict[str, Any]:
    return json.loads(resources.files(__package__).joinpath("data/citations.json").read_text(encoding="utf-8"))


def paper() -> dict[str, Any]:
    """The SWE-TaskFlow paper: ``name``, ``url``, ``bibtex``."""
    return dict(_doc()["paper"])


def paper_section(key: str) -> dict[str, Any]:
    """A passage of the paper a release cites for a choice (``where``, ``text``), e.g. ``stress_slices``:
    Appendix C, step 7, why stress-test slices are built and reported apart."""
    return dict(_doc()["paper"]["sections"][key])


def source_info(source: str) -> dict[str, Any] | None:
    """What is on record for a source benchmark named by a row's ``source`` (a family or a Hub id)."""
    sources = _doc()["sources"]
    for key, info in sources.items():
        if source == key or source in info.get("aliases", ()):
            out = {"key": key, **info}
            if "bibtex_of" in out:
                out["bibtex"] = sources[out.pop("bibtex_of")]["bibtex"]
            return out
    return None


__all__ = ["paper", "paper_section", "source_info"]
