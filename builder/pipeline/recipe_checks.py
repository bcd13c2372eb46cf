"""Recipe checks beyond each setting's own declaration: what a build would otherwise trip over stages later.

Every key's type, bounds, names and paths are declared with the key and checked once when the recipe is
parsed (builder/pipeline/recipe.py, :func:`swe_taskflow.fieldtypes.setting`). Here: :func:`check_recipe`,
the settings that relate to one another (pools the conditions name, keys a mode needs), also at parse
time; and :func:`preflight`, run before any stage, ``--dry-run`` included: the source exists, the
classifier resolves, the target loads, the LLM backends are known and every question pool reads (types,
duplicate ids). Every error names the recipe file and the key.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from swe_taskflow.errors import ConfigError, TaskflowError

if TYPE_CHECKING:
    from .recipe import Recipe

HUB_ID_RE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def recipe_text(path: Path) -> str:
    """A recipe file's text (a regular UTF-8 file), or a ConfigError naming it and the line."""
    from swe_taskflow.errors import InputError
    from swe_taskflow.jsonl import read_text

    try:
        return read_text(path, "recipe file")
    except InputError as exc:
        raise ConfigError(exc.message, path=str(path), row=exc.row) from None


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
    from .recipe_derived import recipe_target

    recipe_target(recipe)
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


def check_recipe(recipe: "Recipe") -> None:
    """Every load-time check that relates settings to one another, in order; the first failure raises."""
    _check_pools(recipe)
    _check_requirements(recipe)
    _check_llm_keys(recipe)


def _check_pools(recipe: "Recipe") -> None:
    """Question pools: unique names, and conditions naming only known pools."""
    p = str(recipe.path)
    names = [pool.name for pool in recipe.questions.pools]
    if len(set(names)) != len(names):
        raise ConfigError("duplicate pool name", path=p, field="questions.pools", actual=names)
    if recipe.questions.mode == "pool" and not recipe.questions.pools:
        raise ConfigError("mode 'pool' needs at least one [[questions.pools]]", path=p, field="questions.pools")
    known = recipe.pool_names()
    if recipe.conditions.pool and recipe.conditions.pool not in known and recipe.questions.mode != "none":
        raise ConfigError("unknown pool", path=p, field="conditions.pool", expected=known, actual=recipe.conditions.pool)
    for i, name in enumerate(recipe.conditions.pools):
        if name not in known:
            raise ConfigError("unknown pool", path=p, field=f"conditions.pools[{i}]", expected=known, actual=name)
    if len(set(recipe.conditions.pools)) != len(recipe.conditions.pools):
        raise ConfigError("duplicate pool", path=p, field="conditions.pools", actual=list(recipe.conditions.pools))
    try:
        recipe.splits()
    except ConfigError as exc:
        raise ConfigError(exc.message, path=p, field="conditions", actual=exc.actual) from None


def _check_requirements(recipe: "Recipe") -> None:
    """Settings that need one another: QA conditions need questions, proofs need repositories."""
    p = str(recipe.path)
    qa_conditions = [c for c in recipe.conditions.names if c.startswith("qa_")]
    if qa_conditions and recipe.questions.mode == "none":
        raise ConfigError("QA conditions need questions", path=p, field="conditions.names",
                          actual=qa_conditions, hint="set questions.mode or drop the QA conditions")
    if recipe.questions.mode != "none" and recipe.proofs.enabled and not (recipe.repos.bundled or recipe.repos.path):
        raise ConfigError("proofs need repositories", path=p, field="repos",
                          hint="set repos.bundled or repos.path, or proofs.enabled = false")
    if bool(recipe.repos.bundled) != bool(recipe.repos.bundled_repo):
        raise ConfigError("repos.bundled and repos.bundled_repo go together", path=p,
                          field="repos.bundled_repo" if recipe.repos.bundled else "repos.bundled",
                          hint="name the folder and the owner/name of the tasks whose repository it is")


def _check_llm_keys(recipe: "Recipe") -> None:
    """The LLM splitter, generated questions and the LLM augmentation writer name the keys they need."""
    p = str(recipe.path)
    if recipe.split.splitter == "llm" and not recipe.split.llm:
        raise ConfigError("the llm splitter needs split.llm", path=p, field="split.llm")
    if recipe.augmentations.writer == "llm" and not recipe.augmentations.llm:
        raise ConfigError("the llm writer needs augmentations.llm", path=p, field="augmentations.llm")
    if recipe.questions.mode == "generate":
        for key in ("llm", "trajectories"):
            if not getattr(recipe.questions, key):
                raise ConfigError("mode 'generate' needs this key", path=p, field=f"questions.{key}")


__all__ = ["recipe_text", "check_recipe", "preflight", "HUB_ID_RE"]
