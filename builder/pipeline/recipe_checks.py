"""Recipe checks beyond types and known names: what a build would otherwise trip over stages later.

:func:`check_ranges` runs when a recipe is parsed (names usable as Hub and file names, a known device
and splitter, non-negative seeds, bounded limits). :func:`preflight` runs before any stage, ``--dry-run``
included: the source exists, the classifier resolves, the target loads, the LLM backends are known and
every question pool reads (types, duplicate ids). Every error names the recipe file and the key.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swe_taskflow.errors import ConfigError, TaskflowError
from swe_taskflow.select_config import SelectConfig

if TYPE_CHECKING:
    from .recipe import Recipe

#: A Hub dataset name (the part after ``org/``) and a version usable in file names.
NAME_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?$")
VERSION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$")
DEVICES_RE = re.compile(r"^(auto|cpu|cuda(:\d+)?)$")
SPLITTERS = ("structural", "llm")
HUB_ID_RE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def recipe_text(path: Path) -> str:
    """A recipe file's text (a regular UTF-8 file), or a ConfigError naming it and the line."""
    from swe_taskflow.errors import InputError
    from swe_taskflow.jsonl import read_text

    try:
        return read_text(path, "recipe file")
    except InputError as exc:
        raise ConfigError(exc.message, path=str(path), row=exc.row) from None


def check_ranges(recipe: "Recipe") -> None:
    p = str(recipe.path)
    for key, value, rx in (("release.name", recipe.release.name, NAME_RE),
                           ("release.version", recipe.release.version, VERSION_RE),
                           ("classifier.device", recipe.classifier.device, DEVICES_RE)):
        if not rx.match(value):
            raise ConfigError("not a valid value", path=p, field=key, expected=rx.pattern, actual=value)
    if recipe.split.splitter not in SPLITTERS:
        raise ConfigError("unknown splitter", path=p, field="split.splitter", expected=SPLITTERS,
                          actual=recipe.split.splitter)
    for key, value, lo, hi in (("conditions.seed", recipe.conditions.seed, 0, 2**63 - 1),
                               ("source.limit", recipe.source.limit, 0, 10**9),
                               ("proofs.timeout_s", recipe.proofs.timeout_s, 1, 86_400),
                               ("proofs.jobs", recipe.proofs.jobs, 1, 64),
                               ("classifier.batch_size", recipe.classifier.batch_size, 1, 65_536),
                               ("questions.max_questions", recipe.questions.max_questions, 1, 3)):
        if not lo <= value <= hi:
            raise ConfigError("out of range", path=p, field=key, expected=f"{lo}..{hi}", actual=value)


def _fail(recipe: "Recipe", key: str, exc: Exception | str) -> ConfigError:
    text = exc if isinstance(exc, str) else (str(exc) if isinstance(exc, TaskflowError) else
                                              f"{type(exc).__name__}: {exc}")
    return ConfigError(text, path=str(recipe.path), field=key)


def preflight(recipe: "Recipe") -> None:
    """Everything a recipe names must exist and load (cheaply: no model is loaded, no stage runs)."""
    spec = recipe.source.spec
    local = recipe.resolve(spec)
    if not local.exists() and not HUB_ID_RE.match(spec):
        raise _fail(recipe, "source.spec", f"no such file or folder ({local}), and not a Hub dataset id")
    try:
        from builder.classify.registry import resolve_classifier

        resolve_classifier(recipe.classifier.name)
    except ImportError:
        pass
    except TaskflowError as exc:
        raise _fail(recipe, "classifier.name", exc) from None
    try:
        from swe_taskflow.target import load_target

        from .recipe_derived import target_path

        load_target(target_path(recipe))
    except TaskflowError as exc:
        raise _fail(recipe, "target.path", exc) from None
    from builder.llm.registry import BACKENDS

    for key, name, used in (("split.llm", recipe.split.llm, recipe.split.splitter == "llm"),
                            ("questions.llm", recipe.questions.llm, recipe.questions.mode == "generate")):
        if used and name not in BACKENDS:
            raise ConfigError("unknown LLM backend", path=str(recipe.path), field=key, expected=BACKENDS, actual=name)
    if recipe.questions.mode == "pool":
        from swe_taskflow.jsonl import read_records
        from swe_taskflow.schema import QAItem

        for i, pool in enumerate(recipe.questions.pools):
            try:
                read_records(recipe.resolve(pool.path), QAItem, unique="question_id")
            except TaskflowError as exc:
                raise _fail(recipe, f"questions.pools[{i}].path", exc) from None


__all__ = ["recipe_text", "check_ranges", "preflight", "NAME_RE", "VERSION_RE", "DEVICES_RE", "SPLITTERS"]


def select_config(table: Any, path: Path) -> SelectConfig:
    """The recipe's ``[select]`` table, checked once by :meth:`SelectConfig.from_settings`."""
    if not isinstance(table, dict):
        raise ConfigError("must be a table", path=str(path), field="select", actual=type(table).__name__)
    if "max_augments_per_task" in table:
        raise ConfigError("unknown key", path=str(path), field="select.max_augments_per_task",
                          hint="augmentation turns per session are set by augmentations.max_per_session")
    return SelectConfig.from_settings(table, where=str(path))
