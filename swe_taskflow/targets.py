"""Target Task-Flow files shipped with the package (``swe_taskflow/data/targets/``)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from .errors import ConfigError

#: The default target: long SpecStory sessions, a provisional public stand-in for a production target.
DEFAULT_TARGET = "specstory-long-v2"


def shipped_targets() -> list[str]:
    """Names of the target files shipped with the package."""
    folder = resources.files(__package__).joinpath("data/targets")
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".json"))


def target_path(name: str) -> Path:
    """Path of the shipped target ``name``; ConfigError listing the shipped ones if unknown."""
    path = Path(str(resources.files(__package__).joinpath(f"data/targets/{name}.json")))
    if not path.is_file():
        raise ConfigError("unknown shipped target", field="target", actual=name,
                          hint="known: " + ", ".join(shipped_targets()))
    return path


def default_target_path() -> Path:
    """Path of the packaged default target file (load it with ``swe_taskflow.target.load_target``)."""
    return target_path(DEFAULT_TARGET)
