"""Release recipes: one TOML file per release naming every input of the build.

A recipe is parsed into typed, frozen sections and validated at load time: an unknown section or
key, a wrong type, an unknown name or a missing file fails with a :class:`ConfigError` naming the
recipe file and the dotted key (``proofs.sandbox``). Relative paths are resolved against the
recipe's own folder, so a recipe and the data beside it can move together; ``builder:PATH`` names a file
shipped in the package (``builder:data/example/tasks.jsonl``), so a recipe kept anywhere can use shipped data. What the recipe implies
beyond its sections (its target, the selection's configuration, each split's rule) and the
:func:`preflight` run before any stage live here too.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import tomllib
import warnings
from functools import partial
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping

from swe_taskflow.errors import ConfigError, InputError, TaskflowError
from swe_taskflow.fieldtypes import from_table, setting, settings_rows
from swe_taskflow import untrusted
from swe_taskflow.turns.stress import SLICE_NAME_RE
from swe_taskflow.schema import CONDITIONS, SPLIT_NAME_RE
from swe_taskflow.select_config import MAX_AUGMENTS, SelectConfig, describe_split
from swe_taskflow.target import default_target_path


#: The builder package's import name (``swe_taskflow_builder`` installed, ``builder`` from a checkout): the settings
#: below read their choices from its modules.
_PACKAGE = __name__.split(".")[0]
_PATH = {"keep": ("",), "exists": True}    # an optional path relative to the recipe: set, it must exist


@dataclass(frozen=True)
class LLMSettings:
    """One LLM's settings, the same ``[<section>.llm]`` table in ``[split]``, ``[questions]``, ``[augmentations]`` and
    ``[stress]``: checked once, at load, so a misspelt backend stops ``load_recipe`` (and ``--dry-run``), not the
    stage that would call it after the proofs."""

    backend: str = setting("", choices=f"{_PACKAGE}.llm:BACKENDS", keep=("",), noun="LLM backend",
                           help="LLM backend (``openai``, ``transformers``, ``replay``); empty: none.")
    model: str = setting("", help="Model id for the backend.")
    responses: str = setting("", **_PATH, help="Response store to replay (relative to the recipe); empty: no replay.")

    def flat(self) -> dict[str, str]:
        """The settings under their old flat keys: what stage keys hash, so this table kept every key's bytes."""
        return {"llm": self.backend, "model": self.model, "responses": self.responses}


def _llm(used_by: str) -> Any:
    return setting(LLMSettings(), table=LLMSettings, help=f"The LLM {used_by}: the same table in every section that "
                   "calls one. The old flat keys (``llm = \"openai\"``, ``model``, ``responses``) still load, with a "
                   "deprecation warning.")


#: Recipe sections with an ``llm`` table, and the flat keys it replaces (deprecated: read for one more release).
LLM_SECTIONS = ("split", "questions", "augmentations", "stress")
_FLAT_LLM_KEYS = {"llm": "backend", "model": "model", "responses": "responses"}


@dataclass(frozen=True)
class ReleaseSection:
    name: str = setting(nonempty=True, pattern=r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?$",
                        help="Release (dataset) name, e.g. ``swe-taskflow-example``; usable on the Hub and in file "
                             "names.")
    version: str = setting(nonempty=True, pattern=r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$",
                           help="Release version, e.g. ``0.1.0``; goes into the manifest.")
    description: str = setting("", help="One line for the dataset card.")
    repo_id: str = setting("", pattern=r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$", keep=("",),
                           pattern_error="repository id must look like ORG/NAME",
                           help="Hub dataset repository (``ORG/NAME``) written into the card, croissant.json and the "
                                "manifest; empty: set later by ``swe-taskflow push --repo``.")
    license: str = setting("mit", help="License of the release (a Hub license id), written into the card and "
                                       "croissant.json.")


@dataclass(frozen=True)
class SourceSection:
    spec: str = setting(nonempty=True, help="What the sources module loads: a Hub id, a local file or folder "
                                            "(relative to the recipe).")
    source: str = setting("", help="Source benchmark name recorded in rows (e.g. ``swe-bench-pro``); empty: the "
                                   "loader decides.")
    revision: str = setting("", help="Source revision (Hub commit or release tag) recorded in provenance.")
    split: str = setting("test", help="Split of the source dataset to read.")
    instance_ids: tuple[str, ...] = setting((), help="Subset of tasks to keep, in this order; empty keeps every task.")
    limit: int = setting(0, lo=0, hi=10**9, help="Keep at most this many tasks (0: no limit).")
    run_scripts: str = setting("", **_PATH, help="Folder of the source's per-instance test scripts (SWE-Bench Pro's "
                               "``run_scripts/``: ``<instance_id>/run_script.sh`` and ``parser.py``), relative to the "
                               "recipe. The build records the path and each file's sha256 in the manifest, so "
                               "``export harbor`` finds them without ``--run-scripts``.")


@dataclass(frozen=True)
class ClassifierSection:
    name: str = setting("embedded", help="Classifier name or model folder (``embedded``, ``llm:<model folder>``; "
                                         "see ``swe-taskflow classify --help``).")
    device: str = setting("auto", pattern=r"^(auto|cpu|cuda(:\d+)?)$", help="``auto``, ``cpu`` or ``cuda[:N]``.")
    batch_size: int = setting(64, lo=1, hi=65_536, help="Messages per batch.")
    question_intents: str = setting("declared", choices=("declared", "classify"), noun="question_intents",
                                    help="QA turns' intents: ``declared`` (the intent the question pool declares: the "
                                    "paper adds repository questions as the explain intent) or ``classify`` (labelled "
                                    "by the classifier like every other message). The report shows TFAS under both.")


@dataclass(frozen=True)
class TargetSection:
    path: str = setting("default", exists=True, keep=("default",), noun="target file",
                        help="Target Task-Flow file (relative to the recipe); ``default`` is the project's shipped "
                             "target.")
    compare: tuple[str, ...] = setting((), exists=True, noun="reference flow file",
                                       help="Task-Flow files (target format, relative to the recipe) the report scores "
                                            "beside the source benchmark, e.g. another benchmark's source flow "
                                            "(``../data/reference-flows/``).")


@dataclass(frozen=True)
class SplitSection:
    splitter: str = setting("structural", choices=f"{_PACKAGE}.split:SPLITTERS", noun="splitter",
                            help="``structural`` (no model) or ``llm``.")
    llm: LLMSettings = _llm("of the ``llm`` splitter")
    context_checks: str = setting("on", choices="swe_taskflow.context_checks:MODES", noun="context_checks mode",
                                  help="Evaluation-context checks after splitting (docs/generation.md): ``on`` (a turn "
                                  "without a request, a FAIL_TO_PASS test the split lost), ``strict`` (also every "
                                  "FAIL_TO_PASS test tied to some turn) or ``off``.")


@dataclass(frozen=True)
class PoolSection:
    name: str = setting(pattern=SPLIT_NAME_RE.pattern, pattern_error="pool name must be a valid split-name part",
                        help="Pool name, used in condition split names (``qa_first_<name>``).")
    path: str = setting(exists=True, noun="question pool file", help="Question pool JSONL (QAItem records), "
                                                                     "relative to the recipe.")


@dataclass(frozen=True)
class QuestionsSection:
    mode: str = setting("pool", choices=("pool", "generate", "none"), noun="questions mode",
                        help="``pool`` loads the pools below; ``generate`` mines questions with an LLM; ``none`` "
                             "builds no QA.")
    pools: tuple[PoolSection, ...] = setting((), item=PoolSection,
                                             help="Question pools (mode ``pool``), one table each.")
    llm: LLMSettings = _llm("of ``generate`` (``backend = \"replay\"`` replays ``responses`` offline)")
    trajectories: str = setting("", **_PATH, help="Folder of solving trajectories for ``generate`` (relative to "
                                                  "the recipe).")
    resolved: str = setting("", **_PATH, help="Results file with per-task resolution flags (mini-swe-agent "
                            "``results_summary.json`` or ``{instance_id: bool}``): trajectories of unresolved tasks "
                            "are not mined. Without it the run's exit status (``Submitted``) and a non-empty patch "
                            "decide.")
    max_questions: int = setting(3, lo=1, hi=3, help="Questions proposed per task by ``generate``.")


@dataclass(frozen=True)
class ReposSection:
    bundled: str = setting("", **_PATH, help="A folder of repository files shipped with the recipe (relative to "
                           "it); the build commits it reproducibly, and that commit must be the ``base_commit`` of "
                           "the tasks named by ``bundled_repo``. Links are kept as links, as git does; one that "
                           "leaves the folder (or a fifo, socket or device) is an error.")
    bundled_repo: str = setting("", help="The ``repo`` (``owner/name``) whose repository ``bundled`` is: only tasks "
                                         "of that repository use it.")
    path: str = setting("", **_PATH, help="A folder of real checkouts, one sub-folder per repository "
                        "(``<path>/<instance_id>/`` or ``<path>/<owner>__<name>/``), used instead of ``bundled``.")


@dataclass(frozen=True)
class ProofsSection:
    enabled: bool = setting(True, help="Validate each question's proof script; off keeps every candidate "
                                       "unvalidated (never accepted).")
    sandbox: str = setting("auto", choices=f"{_PACKAGE}.proofs.config:SANDBOXES", noun="sandbox",
                           help="``auto`` (docker when a daemon answers, else bubblewrap), ``docker``, ``bwrap`` "
                                "or ``harbor`` (Harbor environments, one per task image; docs/proofs.md).")
    environment: str = setting("swe_taskflow_harbor.environment:DockerEnvironment",
                               help="``harbor`` only: the Harbor environment (an import path ``module:Class`` or a "
                                    "Harbor environment type such as ``daytona``).")
    concurrency: int = setting(4, lo=1, hi=4096, help="``harbor`` only: environments running at once.")
    environment_kwargs: Mapping[str, Any] | None = setting(None, help="``harbor`` only: keyword "
                                                    "arguments passed to the environment (e.g. a region).")
    image: str = setting("", help="Container image; empty: each task's own image (a bundled task's is built "
                                  "locally).")
    timeout_s: int = setting(60, lo=1, hi=86_400, help="Wall-clock limit per proof run.")
    jobs: int = setting(2, lo=1, hi=64, help="Proofs run in parallel.")
    gold_patch: bool = setting(True, help="Re-run each proof after applying the task's gold patch (off for a "
                                          "stand-in repository).")


@dataclass(frozen=True)
class ConditionsSection:
    names: tuple[str, ...] = setting(CONDITIONS, choices=CONDITIONS, noun="condition", nonempty=True,
                                     help="Conditions to build (each one split of the release).")
    pool: str = setting("", help="Question pool of ``tfas_optimized`` (and of the QA conditions when ``pools`` is "
                                 "empty); empty: the first pool.")
    pools: tuple[str, ...] = setting((), help="Pools the QA conditions are built for, one split per condition and "
                                              "pool named ``<condition>_<pool>`` (two pools give the paper's 12 "
                                              "splits); empty: one split per condition from ``pool``, plain names.")
    seed: int = setting(0, lo=0, hi=2**63 - 1, help="Seed of the seeded placements (``qa_random``).")

    def plan(self, pool_names: tuple[str, ...]):
        """The release's splits (:func:`swe_taskflow.conditions.split_plan`); ``pool_names``: the build's pools."""
        from swe_taskflow.conditions import split_plan

        return split_plan(self.names, qa_pools=self.pools, pool=self.pool or (pool_names[0] if pool_names else None))


@dataclass(frozen=True)
class AugmentationsSection:
    """Verifiable turns beyond issue and QA turns (docs/augmentations.md); off unless ``kinds`` names some."""

    kinds: tuple[str, ...] = setting((), choices="swe_taskflow.turns.kinds:AUGMENT_KINDS",
                                     noun="augmentation kind",
                                     help="Kinds to generate, any of the allowed values (empty: none).")
    writer: str = setting("template", choices=("template", "llm"), noun="augmentation writer",
                          help="Who words the turns: ``template`` (hand-written phrasings, offline) or ``llm``.")
    llm: LLMSettings = _llm("of the ``llm`` writer")
    per_kind: int = setting(2, lo=1, hi=10, help="Accepted items per kind and task, at most.")
    review_attempts: int = setting(4, lo=1, hi=50, help="Seeded defects tried per task for review turns.")
    specs: tuple[str, ...] = setting((), exists=True, noun="spec file", help="Hand-written spec files (JSONL, "
                                     "relative to the recipe), checked like generated ones.")
    max_per_session: int = setting(2, lo=0, hi=MAX_AUGMENTS, help="Augmentation turns the TFAS-optimized selection "
                                   "may add to one session (0: the paper's family); the selection's "
                                   "``max_augments_per_session`` when ``kinds`` names some.")
    intents: str = setting("declared", choices=("classify", "declared"), noun="augmentation intents",
                           help="Intents of augmentation turns for TFAS: ``declared`` (the kind's, as QA turns carry "
                                "explain) or ``classify`` (the classifier's label); the report lists every "
                                "disagreement either way.")
    timeout_s: int = setting(120, lo=1, hi=3600, help="Wall-clock limit of one sandbox run of a check.")


@dataclass(frozen=True)
class StressSliceSection:
    """One stress-test slice (docs/stress.md): its own split ``stress_<name>``, decided before selection."""

    name: str = setting(pattern=SLICE_NAME_RE.pattern, pattern_error="a slice name must be lower-case letters, "
                        "digits and _ (at most 40)", help="Slice name; its split is ``stress_<name>``.")
    kind: str = setting(choices="swe_taskflow.turns.kinds:STRESS_KINDS", noun="stress kind",
                        help="``destructive-request`` or ``security-review``.")
    tasks: int = setting(lo=1, hi=100_000, help="Tasks the slice holds (drawn with ``seed`` among the eligible "
                                                "ones; fewer when fewer are eligible, and the report says so).")
    seed: int = setting(0, lo=0, hi=2**63 - 1, help="Seed of the draw of the slice's tasks and of each task's "
                                                    "request.")


@dataclass(frozen=True)
class StressSection:
    """Stress-test slices (paper Appendix C, step 7): rare, consequential intents evaluated apart from the
    calibrated core; never in TFAS optimization (docs/stress.md)."""

    slices: tuple[StressSliceSection, ...] = setting((), item=StressSliceSection,
                                                     help="The slices, one table each.")
    writer: str = setting("template", choices=("template", "llm"), noun="stress writer",
                          help="Who words the turns: ``template`` (hand-written phrasings, offline) or ``llm``.")
    llm: LLMSettings = _llm("of the ``llm`` writer")
    specs: tuple[str, ...] = setting((), exists=True, noun="spec file", help="Spec files (JSONL, relative to the "
                                     "recipe, rows labelled hand-written): security defects with their probes, and "
                                     "destructive requests; checked like generated ones.")
    timeout_s: int = setting(120, lo=1, hi=3600, help="Wall-clock limit of one sandbox run of a check.")


@dataclass(frozen=True)
class Recipe:
    """A whole release recipe; ``path`` is the file it was read from (for errors and relative paths)."""

    path: Path
    release: ReleaseSection
    source: SourceSection
    classifier: ClassifierSection = ClassifierSection()
    target: TargetSection = TargetSection()
    split: SplitSection = SplitSection()
    questions: QuestionsSection = QuestionsSection()
    repos: ReposSection = ReposSection()
    proofs: ProofsSection = ProofsSection()
    conditions: ConditionsSection = ConditionsSection()
    select: SelectConfig = SelectConfig()
    """``[select]``: checked once, by :meth:`SelectConfig.from_settings` (a preset, then the table's keys)."""
    augmentations: AugmentationsSection = AugmentationsSection()
    stress: StressSection = StressSection()
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @property
    def base(self) -> Path:
        return self.path.parent

    def pool_names(self) -> tuple[str, ...]:
        """Names of the build's question pools (``generated`` for mined questions)."""
        if self.questions.mode == "generate":
            return ("generated",)
        return tuple(p.name for p in self.questions.pools) if self.questions.mode == "pool" else ()

    def splits(self):
        """The release's splits in order: name, condition, question pool."""
        return self.conditions.plan(self.pool_names())

    def resolve(self, rel: str) -> Path:
        """A recipe path made absolute against the recipe's folder."""
        return _resolve(self.base, rel)

    def section(self, name: str) -> dict[str, Any]:
        """The parsed section as plain data (what stage keys hash); paths stay as written."""
        return _plain(getattr(self, name))


#: A recipe path that names a file shipped in the ``builder`` package (``builder:data/example/tasks.jsonl``): a
#: maintainer's recipe kept anywhere (docs/build.md) points at shipped data this way, from a clone or a wheel.
PACKAGE_PREFIX = "builder:"


def resolve_path(base: Path, rel: str) -> Path:
    """A recipe path made absolute: ``builder:PATH`` in the installed package, a relative one against ``base``."""
    if rel.startswith(PACKAGE_PREFIX):
        from ..resources import builder_path

        return builder_path(*Path(rel[len(PACKAGE_PREFIX):]).parts).resolve()
    p = Path(rel).expanduser()
    return p if p.is_absolute() else (base / p).resolve()


_resolve = resolve_path


def _plain(value: Any) -> Any:
    if hasattr(value, "__dataclass_fields__"):
        out: dict[str, Any] = {}
        for f in fields(value):
            v = getattr(value, f.name)
            if isinstance(v, LLMSettings):
                out.update(v.flat())
            else:
                out[f.name] = _plain(v)
        return out
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


_SECTIONS = {
    "release": ReleaseSection, "source": SourceSection, "classifier": ClassifierSection,
    "target": TargetSection, "split": SplitSection, "questions": QuestionsSection, "repos": ReposSection,
    "proofs": ProofsSection, "conditions": ConditionsSection, "select": SelectConfig,
    "augmentations": AugmentationsSection, "stress": StressSection,
}
_REQUIRED = ("release", "source")


def check_recipe(recipe: Recipe) -> None:
    """Every load-time check that relates settings to one another, in order; the first failure raises."""
    p = str(recipe.path)
    # question pools: unique names, and conditions naming only known pools
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
    # stress slices: unique names, and no split name a condition already takes
    names = [s.name for s in recipe.stress.slices]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ConfigError("duplicate stress slice name", path=p, field=f"stress.slices[{i}].name", actual=name)
    if names and not {"split_prompt", "single_prompt"} & set(recipe.conditions.names):
        raise ConfigError("stress slices place their turn in the task's own session: build split_prompt or "
                          "single_prompt", path=p, field="conditions.names", actual=list(recipe.conditions.names))
    # settings that need one another: QA conditions need questions, proofs need repositories
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
    # the LLM splitter, generated questions and the LLM writers name the keys they need
    for section, needs, used in (("split", "the llm splitter", recipe.split.splitter == "llm"),
                                 ("augmentations", "the llm writer", recipe.augmentations.writer == "llm"),
                                 ("stress", "the llm writer", recipe.stress.writer == "llm"),
                                 ("questions", "mode 'generate'", recipe.questions.mode == "generate")):
        if used and not getattr(recipe, section).llm.backend:
            raise ConfigError(f"{needs} needs {section}.llm", path=p, field=f"{section}.llm",
                              hint=f"a [{section}.llm] table with backend = one of {', '.join(_backends())}")
    if recipe.questions.mode == "generate" and not recipe.questions.trajectories:
        raise ConfigError("mode 'generate' needs this key", path=p, field="questions.trajectories")
    if recipe.repos.bundled:   # a link out of it (or a fifo) stops the build now, before any stage
        from ..bundled.repo import check_folder

        check_folder(recipe.resolve(recipe.repos.bundled))


def parse_recipe(data: Mapping[str, Any], path: str | Path) -> Recipe:
    """Build and validate a :class:`Recipe` from parsed TOML data: each section by its declarations
    (:func:`swe_taskflow.fieldtypes.from_table`; ``[select]`` with its preset), then the checks that relate
    settings to one another (:func:`check_recipe`)."""
    path = Path(path).resolve()
    unknown = sorted(set(data) - set(_SECTIONS))
    if unknown:
        raise ConfigError("unknown section", path=str(path), field=unknown[0], expected=sorted(_SECTIONS))
    for name in _REQUIRED:
        if name not in data:
            raise ConfigError("missing section", path=str(path), field=name)

    sections = {name: SelectConfig.from_settings(data[name], where=str(path)) if cls is SelectConfig else
                _section(cls, data[name], path=path, name=name) for name, cls in _SECTIONS.items() if name in data}
    recipe = Recipe(path=path, raw=dict(data), **sections)
    check_recipe(recipe)
    return recipe


def _backends() -> tuple[str, ...]:
    from ..llm import BACKENDS

    return BACKENDS


def _section(cls, table: Any, *, path: Path, name: str):
    """One section from its table; in an LLM section, old flat keys (``llm = "openai"``, ``model``, ``responses``)
    are read as its ``[<name>.llm]`` table, with a deprecation hint, and errors name the keys as written."""
    flat = [k for k in _FLAT_LLM_KEYS if name in LLM_SECTIONS and isinstance(table, dict) and k in table
            and not (k == "llm" and isinstance(table[k], dict))]
    if flat and isinstance(table.get("llm"), dict):
        raise ConfigError(f"{name}.{flat[0]} beside the [{name}.llm] table", path=str(path), field=f"{name}.{flat[0]}",
                          hint=f"write it in [{name}.llm] as {_FLAT_LLM_KEYS[flat[0]]}")
    if flat:   # named at the recipe file, not at this line; the text is what to write instead
        new = "\n".join(f"{_FLAT_LLM_KEYS[k]} = {json.dumps(table[k])}" for k in flat)
        warnings.warn_explicit(f"{', '.join(f'{name}.{k}' for k in flat)}: flat LLM keys are deprecated (read for one "
                               f"more release); write them as a table:\n[{name}.llm]\n{new}", FutureWarning,
                               filename=str(path), lineno=0)
        table = {k: v for k, v in table.items() if k not in flat} | {"llm": {_FLAT_LLM_KEYS[k]: table[k] for k in flat}}
    try:
        return from_table(cls, table, path=str(path), section=name, resolve=partial(_resolve, path.parent))
    except ConfigError as exc:
        old = {f"{name}.llm.{new}": f"{name}.{key}" for key, new in _FLAT_LLM_KEYS.items() if key in flat}
        if exc.field not in old:
            raise
        raise ConfigError(exc.message, path=exc.path, row=exc.row, field=old[exc.field], expected=exc.expected,
                          actual=exc.actual, hint=exc.hint) from None


def settings_markdown() -> str:
    """The recipe reference table of docs/build.md, generated from the declarations (a test keeps the doc equal)."""
    lines = ["| key | type | default | allowed | what |", "|---|---|---|---|---|"]
    for name, cls in _SECTIONS.items():
        for row in settings_rows(cls, name):
            cells = [f"`{row[0]}`", row[1], row[2] if row[2] == "required" else f"`{row[2]}`", *row[3:]]
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def load_recipe(path: str | Path) -> Recipe:
    """Read and validate a recipe file (a regular UTF-8 file); every error names the file and the key (or line)."""
    path = Path(path)
    try:   # the user names the recipe (a link to it is theirs to follow); what it is, and its size, are checked
        data = tomllib.loads(untrusted.read_text(os.path.realpath(path), "recipe file"))
        return parse_recipe(data, path)
    except InputError as exc:
        raise ConfigError(exc.message, path=str(path), row=exc.row) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML ({exc})", path=str(path)) from None
    except RecursionError:
        raise ConfigError("recipe nested too deeply (tables or arrays inside one another)", path=str(path),
                          hint="a recipe is a few flat sections") from None


# -- what a recipe implies beyond its own sections (select, write and report stages, preflight) ----------------
def recipe_target_path(recipe) -> Path:
    """The target Task Flow file: the project's default one, or a path relative to the recipe."""
    if recipe.target.path == "default":
        return Path(default_target_path())
    return recipe.resolve(recipe.target.path)


def recipe_target(recipe):
    """The recipe's target, loaded: the one place its content is checked (preflight and the select stage;
    that the file exists is checked with the ``target.path`` declaration). Errors name the recipe and key."""
    from swe_taskflow.target import load_target

    try:
        return load_target(recipe_target_path(recipe))
    except TaskflowError as exc:
        raise ConfigError(str(exc), path=str(recipe.path), field="target.path") from None


def selection_config(recipe) -> SelectConfig:
    """The TFAS-optimized selection's config: the [select] section's, admitting ``augmentations.max_per_session``
    augmentation turns per session when [augmentations] names kinds (one place for stages and provenance)."""
    sec = recipe.augmentations
    return dataclasses.replace(recipe.select, max_augments_per_session=sec.max_per_session if sec.kinds else 0)


def split_rules(recipe) -> dict[str, str]:
    """Split -> how its candidates were selected (printed beside every TFAS: report, card)."""
    return {s.split: describe_split(s.condition, pool=s.pool, seed=recipe.conditions.seed,
                                    config=selection_config(recipe)) for s in recipe.splits()}


# -- preflight: what a build would otherwise trip over stages later ---------------------------------------------
HUB_ID_RE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def _fail(recipe: Recipe, key: str, exc: Exception | str) -> ConfigError:
    text = exc if isinstance(exc, str) else (str(exc) if isinstance(exc, TaskflowError) else
                                              f"{type(exc).__name__}: {exc}")
    return ConfigError(text, path=str(recipe.path), field=key)


def preflight(recipe: Recipe) -> None:
    """Everything a recipe names must exist and load, checked before any stage, ``--dry-run`` included (cheaply:
    no model is loaded): the source exists, the classifier resolves, the target loads and every question pool
    reads (types, duplicate ids); LLM backends were checked at load (:class:`LLMSettings`). Every error names the
    recipe file and the key."""
    spec = recipe.source.spec
    local = recipe.resolve(spec)
    if not local.exists() and not HUB_ID_RE.match(spec):
        raise _fail(recipe, "source.spec", f"no such file or folder ({local}), and not a Hub dataset id")
    if local.exists():   # a FIFO or a device is never opened (it would hang the source hash)
        try:
            untrusted.check_recipe_path(local, "source")
        except InputError as exc:
            raise _fail(recipe, "source.spec", exc) from None
    if recipe.source.run_scripts and not recipe.resolve(recipe.source.run_scripts).is_dir():
        raise _fail(recipe, "source.run_scripts", f"no such folder ({recipe.resolve(recipe.source.run_scripts)})")
    try:
        from ..classify import resolve_classifier

        resolve_classifier(recipe.classifier.name)
    except ImportError:
        pass
    except TaskflowError as exc:
        raise _fail(recipe, "classifier.name", exc) from None
    recipe_target(recipe)
    if recipe.questions.mode == "pool":
        from swe_taskflow.jsonl import read_records
        from swe_taskflow.schema import QAItem

        for i, pool in enumerate(recipe.questions.pools):
            try:
                read_records(recipe.resolve(pool.path), QAItem, unique="question_id")
            except TaskflowError as exc:
                raise _fail(recipe, f"questions.pools[{i}].path", exc) from None
