"""Release recipes: one TOML file per release naming every input of the build.

A recipe is parsed into typed, frozen sections and validated at load time: an unknown section or
key, a wrong type, an unknown name or a missing file fails with a :class:`ConfigError` naming the
recipe file and the dotted key (``proofs.sandbox``). Relative paths are resolved against the
recipe's own folder, so a recipe and the data beside it can move together.
"""

from __future__ import annotations

import tomllib
from dataclasses import MISSING as _MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping

from swe_taskflow.errors import ConfigError
from swe_taskflow.schema import CONDITIONS
from swe_taskflow.select_config import SelectConfig

from .recipe_augment import AugmentationsSection, check_augmentations
from .recipe_checks import check_recipe, recipe_text, select_config


@dataclass(frozen=True)
class ReleaseSection:
    name: str
    """Release (dataset) name, e.g. ``swe-taskflow-example``."""
    version: str
    """Release version, e.g. ``0.1.0``; goes into the manifest."""
    description: str = ""
    """One line for the dataset card."""
    repo_id: str = ""
    """Hub dataset repository (``ORG/NAME``) written into the card, croissant.json and the manifest;
    empty: set later by ``swe-taskflow push --repo``."""
    license: str = "mit"
    """License of the release (a Hub license id), written into the card and croissant.json."""


@dataclass(frozen=True)
class SourceSection:
    spec: str
    """What the sources module loads: a Hub id, a local file or folder (relative to the recipe)."""
    source: str = ""
    """Source benchmark name recorded in rows (e.g. ``swe-bench-pro``); empty: the loader decides."""
    revision: str = ""
    """Source revision (Hub commit or release tag) recorded in provenance."""
    split: str = "test"
    """Split of the source dataset to read."""
    instance_ids: tuple[str, ...] = ()
    """Subset of tasks to keep, in this order; empty keeps every task."""
    limit: int = 0
    """Keep at most this many tasks (0: no limit)."""
    run_scripts: str = ""
    """Folder of the source's per-instance test scripts (SWE-Bench Pro's ``run_scripts/``:
    ``<instance_id>/run_script.sh`` and ``parser.py``), relative to the recipe. The build records the path and
    each file's sha256 in the manifest, so ``export harbor`` finds them without ``--run-scripts``."""


@dataclass(frozen=True)
class ClassifierSection:
    name: str = "embedded"
    """Classifier name or model folder (see ``swe-taskflow classify --help``)."""
    device: str = "auto"
    """``auto``, ``cpu`` or ``cuda``."""
    batch_size: int = 64
    """Messages per batch."""
    question_intents: str = "declared"
    """QA turns' intents: ``declared`` (the intent the question pool declares: the paper adds repository
    questions as the explain intent) or ``classify`` (labelled by the classifier like every other message).
    The build report shows TFAS and the intent mix under both."""


@dataclass(frozen=True)
class TargetSection:
    path: str = "default"
    """Target Task-Flow file; ``default`` is the project's shipped target."""


@dataclass(frozen=True)
class SplitSection:
    splitter: str = "structural"
    """``structural`` (no model) or ``llm``."""
    llm: str = ""
    """LLM backend name for the ``llm`` splitter (e.g. ``openai``, ``transformers``, ``replay``)."""
    model: str = ""
    """Model id for the LLM backend."""
    responses: str = ""
    """Response store to replay (relative to the recipe); empty: no replay."""
    context_checks: str = "on"
    """Evaluation-context checks after splitting (docs/generation.md): ``on`` (a turn without a request, a
    FAIL_TO_PASS test the split lost), ``strict`` (also every FAIL_TO_PASS test tied to some turn) or ``off``."""


@dataclass(frozen=True)
class PoolSection:
    name: str
    """Pool name, used in condition split names (``qa_first`` for the first pool)."""
    path: str
    """Question pool JSONL (QAItem records), relative to the recipe."""


@dataclass(frozen=True)
class QuestionsSection:
    mode: str = "pool"
    """``pool`` loads the pools below; ``generate`` mines questions with an LLM; ``none`` builds no QA."""
    pools: tuple[PoolSection, ...] = ()
    """Question pools (mode ``pool``)."""
    llm: str = ""
    """LLM backend for ``generate`` (``replay`` to replay ``responses`` offline)."""
    model: str = ""
    """Model id for ``generate``."""
    responses: str = ""
    """Response store for ``generate`` (relative to the recipe)."""
    trajectories: str = ""
    """Folder of solving trajectories for ``generate`` (relative to the recipe)."""
    resolved: str = ""
    """Optional results file with per-task resolution flags (mini-swe-agent ``results_summary.json`` or
    ``{instance_id: bool}``): trajectories of unresolved tasks are not mined. Without it the run's exit status
    (``Submitted``) and a non-empty patch decide."""
    max_questions: int = 3
    """Questions proposed per task by ``generate``."""


@dataclass(frozen=True)
class ReposSection:
    bundled: str = ""
    """A folder of repository files shipped with the recipe (relative to it); the build commits it
    reproducibly, and that commit must be the ``base_commit`` of the tasks named by ``bundled_repo``."""
    bundled_repo: str = ""
    """The ``repo`` (``owner/name``) whose repository ``bundled`` is: only tasks of that repository use it."""
    path: str = ""
    """A folder of real checkouts, one sub-folder per repository (used instead of ``bundled``)."""


@dataclass(frozen=True)
class ProofsSection:
    enabled: bool = True
    """Validate each question's proof script; off keeps every candidate unvalidated (never accepted)."""
    sandbox: str = "auto"
    """``auto`` (docker when a daemon answers, else bubblewrap), ``docker`` or ``bwrap``."""
    image: str = ""
    """Container image; empty: build the project's small local image when docker is used."""
    timeout_s: int = 60
    """Wall-clock limit per proof run."""
    jobs: int = 2
    """Proofs run in parallel."""
    gold_patch: bool = True
    """Re-run each proof after applying the task's gold patch (off for a stand-in repository)."""


@dataclass(frozen=True)
class ConditionsSection:
    names: tuple[str, ...] = CONDITIONS
    """Conditions to build (each one split of the release)."""
    pool: str = ""
    """Question pool of ``tfas_optimized`` (and of the QA conditions when ``pools`` is empty); empty: the first
    pool."""
    pools: tuple[str, ...] = ()
    """Pools the QA conditions are built for, one split per condition and pool named ``<condition>_<pool>``
    (two pools give the paper's 12 splits); empty: one split per condition from ``pool``, plain names."""
    seed: int = 0
    """Seed of the seeded placements (``qa_random``)."""

    def plan(self, pool_names: tuple[str, ...]):
        """The release's splits (:func:`swe_taskflow.conditions.split_plan`); ``pool_names``: the build's pools."""
        from swe_taskflow.conditions import split_plan

        return split_plan(self.names, qa_pools=self.pools, pool=self.pool or (pool_names[0] if pool_names else None))


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
        p = Path(rel).expanduser()
        return p if p.is_absolute() else (self.base / p).resolve()

    def section(self, name: str) -> dict[str, Any]:
        """The parsed section as plain data (what stage keys hash); paths stay as written."""
        value = getattr(self, name)
        return _plain(value)


def _plain(value: Any) -> Any:
    if hasattr(value, "__dataclass_fields__"):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


_SECTIONS = {
    "release": ReleaseSection, "source": SourceSection, "classifier": ClassifierSection,
    "target": TargetSection, "split": SplitSection, "questions": QuestionsSection, "repos": ReposSection,
    "proofs": ProofsSection, "conditions": ConditionsSection, "select": SelectConfig,
    "augmentations": AugmentationsSection,
}
_REQUIRED = ("release", "source")


def _type_ok(value: Any, annotation: str) -> bool:
    if annotation == "str":
        return isinstance(value, str)
    if annotation == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if annotation == "bool":
        return isinstance(value, bool)
    if annotation == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if annotation.startswith("tuple[str"):
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    return True


def _build(cls, data: Any, where: str, path: Path):
    if not isinstance(data, dict):
        raise ConfigError("must be a table", path=str(path), field=where, actual=type(data).__name__)
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ConfigError("unknown key", path=str(path), field=f"{where}.{unknown[0]}", expected=sorted(known))
    kwargs: dict[str, Any] = {}
    for name, f in known.items():
        if name not in data:
            continue
        value = data[name]
        key = f"{where}.{name}"
        if name == "pools" and cls is QuestionsSection:
            if not isinstance(value, list):
                raise ConfigError("must be an array of tables", path=str(path), field=key)
            value = tuple(_build(PoolSection, v, f"{key}[{i}]", path) for i, v in enumerate(value))
        else:
            ann = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
            if not _type_ok(value, ann):
                raise ConfigError("wrong type", path=str(path), field=key, expected=ann, actual=value)
            if ann.startswith("tuple"):
                value = tuple(value)
            elif ann == "float":
                value = float(value)
        kwargs[name] = value
    try:
        return cls(**kwargs)
    except TypeError as exc:
        missing = [n for n, f in known.items() if n not in kwargs and f.default is _MISSING and f.default_factory is _MISSING]
        raise ConfigError("missing key", path=str(path), field=f"{where}.{missing[0] if missing else '?'}") from exc


def parse_recipe(data: Mapping[str, Any], path: str | Path) -> Recipe:
    """Build and validate a :class:`Recipe` from parsed TOML data."""
    path = Path(path).resolve()
    unknown = sorted(set(data) - set(_SECTIONS))
    if unknown:
        raise ConfigError("unknown section", path=str(path), field=unknown[0], expected=sorted(_SECTIONS))
    for name in _REQUIRED:
        if name not in data:
            raise ConfigError("missing section", path=str(path), field=name)
    sections = {name: _build(cls, data[name], name, path) for name, cls in _SECTIONS.items()
                if name in data and name != "select"}
    if "select" in data:
        sections["select"] = select_config(data["select"], path)
    recipe = Recipe(path=path, raw=dict(data), **sections)
    check_recipe(recipe)
    check_augmentations(recipe)
    return recipe


def load_recipe(path: str | Path) -> Recipe:
    """Read and validate a recipe file; every error names the file and the key."""
    path = Path(path)
    try:
        data = tomllib.loads(recipe_text(path))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML ({exc})", path=str(path)) from None
    return parse_recipe(data, path)
