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
from swe_taskflow.schema import CONDITIONS, SPLIT_NAME_RE
from swe_taskflow.select_config import SelectConfig

from builder.proofs.config import SANDBOXES

if TYPE_CHECKING:
    from .recipe import Recipe

#: A Hub dataset name (the part after ``org/``) and a version usable in file names.
NAME_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?$")
VERSION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$")
DEVICES_RE = re.compile(r"^(auto|cpu|cuda(:\d+)?)$")
SPLITTERS = ("structural", "llm")
HUB_ID_RE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
QUESTION_MODES = ("pool", "generate", "none")
QUESTION_INTENTS = ("classify", "declared")


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
    if recipe.source.run_scripts and not recipe.resolve(recipe.source.run_scripts).is_dir():
        raise _fail(recipe, "source.run_scripts", f"no such folder ({recipe.resolve(recipe.source.run_scripts)})")
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


def select_config(table: Any, path: Path) -> SelectConfig:
    """The recipe's ``[select]`` table, checked once by :meth:`SelectConfig.from_settings`."""
    if not isinstance(table, dict):
        raise ConfigError("must be a table", path=str(path), field="select", actual=type(table).__name__)
    if "max_augments_per_task" in table:
        raise ConfigError("unknown key", path=str(path), field="select.max_augments_per_task",
                          hint="augmentation turns per session are set by augmentations.max_per_session")
    return SelectConfig.from_settings(table, where=str(path))


def check_recipe(recipe: "Recipe") -> None:
    """Every load-time check of a parsed recipe, in order; the first failure raises its ConfigError."""
    _check_known_names(recipe)
    _check_required_values(recipe)
    check_ranges(recipe)
    _check_pools(recipe)
    _check_requirements(recipe)
    _check_paths_exist(recipe)
    _check_llm_keys(recipe)


def _check_known_names(recipe: "Recipe") -> None:
    """Sandbox, context-check mode, question intents and mode, and conditions are known names."""
    from swe_taskflow.context_checks import MODES as CONTEXT_MODES

    p = str(recipe.path)
    if recipe.proofs.sandbox not in SANDBOXES:
        raise ConfigError("unknown sandbox", path=p, field="proofs.sandbox", expected=SANDBOXES,
                          actual=recipe.proofs.sandbox)
    if recipe.split.context_checks not in CONTEXT_MODES:
        raise ConfigError("unknown context_checks mode", path=p, field="split.context_checks", expected=CONTEXT_MODES,
                          actual=recipe.split.context_checks)
    if recipe.classifier.question_intents not in QUESTION_INTENTS:
        raise ConfigError("unknown question_intents", path=p, field="classifier.question_intents",
                          expected=QUESTION_INTENTS, actual=recipe.classifier.question_intents)
    if recipe.questions.mode not in QUESTION_MODES:
        raise ConfigError("unknown questions mode", path=p, field="questions.mode", expected=QUESTION_MODES,
                          actual=recipe.questions.mode)
    for i, name in enumerate(recipe.conditions.names):
        if name not in CONDITIONS:
            raise ConfigError("unknown condition", path=p, field=f"conditions.names[{i}]", expected=CONDITIONS,
                              actual=name)
    if not recipe.conditions.names:
        raise ConfigError("no condition to build", path=p, field="conditions.names", expected=CONDITIONS)


def _check_required_values(recipe: "Recipe") -> None:
    """Release name, version and source spec are set; the repo id has the ORG/NAME shape."""
    p = str(recipe.path)
    for key, value in (("release.name", recipe.release.name), ("release.version", recipe.release.version),
                       ("source.spec", recipe.source.spec)):
        if not value.strip():
            raise ConfigError("must not be empty", path=p, field=key)
    if recipe.release.repo_id and not re.match(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$", recipe.release.repo_id):
        raise ConfigError("repository id must look like ORG/NAME", path=p, field="release.repo_id",
                          actual=recipe.release.repo_id)


def _check_pools(recipe: "Recipe") -> None:
    """Question pools: valid unique names, files that exist, and conditions naming only known pools."""
    p = str(recipe.path)
    names = [pool.name for pool in recipe.questions.pools]
    for i, pool in enumerate(recipe.questions.pools):
        if not SPLIT_NAME_RE.match(pool.name):
            raise ConfigError("pool name must be a valid split-name part", path=p,
                              field=f"questions.pools[{i}].name", expected=SPLIT_NAME_RE.pattern, actual=pool.name)
        if not recipe.resolve(pool.path).exists():
            raise ConfigError("question pool file not found", path=p, field=f"questions.pools[{i}].path",
                              actual=str(recipe.resolve(pool.path)))
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


def _check_paths_exist(recipe: "Recipe") -> None:
    p = str(recipe.path)
    for key, value in (("repos.bundled", recipe.repos.bundled), ("repos.path", recipe.repos.path),
                       ("split.responses", recipe.split.responses),
                       ("questions.responses", recipe.questions.responses),
                       ("questions.trajectories", recipe.questions.trajectories),
                       ("questions.resolved", recipe.questions.resolved)):
        if value and not recipe.resolve(value).exists():
            raise ConfigError("path not found", path=p, field=key, actual=str(recipe.resolve(value)))
    if recipe.target.path != "default" and not recipe.resolve(recipe.target.path).exists():
        raise ConfigError("target file not found", path=p, field="target.path",
                          actual=str(recipe.resolve(recipe.target.path)))


def _check_llm_keys(recipe: "Recipe") -> None:
    """The LLM splitter and generated questions name the keys they need."""
    p = str(recipe.path)
    if recipe.split.splitter == "llm" and not recipe.split.llm:
        raise ConfigError("the llm splitter needs split.llm", path=p, field="split.llm")
    if recipe.questions.mode == "generate":
        for key in ("llm", "trajectories"):
            if not getattr(recipe.questions, key):
                raise ConfigError("mode 'generate' needs this key", path=p, field=f"questions.{key}")


__all__ = ["recipe_text", "check_recipe", "check_ranges", "preflight", "select_config", "NAME_RE", "VERSION_RE",
           "DEVICES_RE", "SPLITTERS", "QUESTION_MODES", "QUESTION_INTENTS"]
