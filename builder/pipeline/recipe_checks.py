"""Recipe checks beyond each setting's own declaration: what a build would otherwise trip over stages later.

Every key's type, bounds, names and paths are declared with the key and checked once when the recipe is
parsed (builder/pipeline/recipe.py, :func:`swe_taskflow.fieldtypes.setting`). Here: :func:`preflight`, run before any stage, ``--dry-run`` included: the source exists, the
classifier resolves, the target loads, the LLM backends are known and every question pool reads (types,
duplicate ids). Every error names the recipe file and the key.
"""

from __future__ import annotations

import re
from swe_taskflow.errors import ConfigError, TaskflowError

from .recipe import Recipe

HUB_ID_RE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def _fail(recipe: Recipe, key: str, exc: Exception | str) -> ConfigError:
    text = exc if isinstance(exc, str) else (str(exc) if isinstance(exc, TaskflowError) else
                                              f"{type(exc).__name__}: {exc}")
    return ConfigError(text, path=str(recipe.path), field=key)


def preflight(recipe: Recipe) -> None:
    """Everything a recipe names must exist and load (cheaply: no model is loaded, no stage runs)."""
    spec = recipe.source.spec
    local = recipe.resolve(spec)
    if not local.exists() and not HUB_ID_RE.match(spec):
        raise _fail(recipe, "source.spec", f"no such file or folder ({local}), and not a Hub dataset id")
    if recipe.source.run_scripts and not recipe.resolve(recipe.source.run_scripts).is_dir():
        raise _fail(recipe, "source.run_scripts", f"no such folder ({recipe.resolve(recipe.source.run_scripts)})")
    try:
        from builder.classify import resolve_classifier

        resolve_classifier(recipe.classifier.name)
    except ImportError:
        pass
    except TaskflowError as exc:
        raise _fail(recipe, "classifier.name", exc) from None
    from .recipe_derived import recipe_target

    recipe_target(recipe)
    from builder.llm import BACKENDS

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


__all__ = ["preflight", "HUB_ID_RE"]
