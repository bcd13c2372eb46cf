"""Run a recipe's stages in order, each cached by the hash of its inputs.

A stage's key hashes: its name and version, the recipe sections it reads, the content hashes of
the files the recipe points it at, the source hashes of the modules that implement it (so a code
or prompt change rebuilds it), and the output hashes of the stages it consumes. A stage whose key
is in the cache is not run; its recorded output is used as is. Outputs are content-hashed with
volatile files (wall times) left out, so two builds of the same inputs end with the same hashes.
"""

from __future__ import annotations

import dataclasses
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from swe_taskflow.errors import ConfigError, TaskflowError

from . import artifacts
from ..json_cache import JsonCache
from .cache import StageCache
from .code_closure import CodeBase, installed
from .folder_hash import paths_hash, key_sha256
from .build_progress import BuildProgress, StageProgress
from .recipe import Recipe
from .stage_data import StageRef

#: Bump when the cache layout or key material changes: every stage is rebuilt.
PIPELINE_VERSION = 3


class UndeclaredRecipeRead(Exception):
    """A stage read a recipe section its key does not hash: a bug in the stage's declaration, never a user error."""


class RecipeSlice:
    """The recipe as one stage receives it: only the sections it declares (``Stage.reads``), which are exactly
    what its key hashes, so a stage cannot depend on a setting without that setting keying its cache. Methods and
    properties of the recipe run against the slice, so what they read is checked too."""

    _ALWAYS = frozenset({"path", "base", "resolve"})

    def __init__(self, recipe: Any, reads: Sequence[str]):
        object.__setattr__(self, "_recipe", recipe)
        object.__setattr__(self, "_reads", frozenset(reads))

    def __getattr__(self, name: str) -> Any:
        recipe = self._recipe
        member = getattr(type(recipe), name, None)
        if isinstance(member, property):
            return member.fget(self)
        if callable(member) and not isinstance(member, type):
            return member.__get__(self)
        if name not in self._ALWAYS:
            self._declared(name)
        return getattr(recipe, name)

    def section(self, name: str) -> Any:
        self._declared(name)
        return self._recipe.section(name)

    def _declared(self, name: str) -> None:
        if name not in self._reads:
            raise UndeclaredRecipeRead(f"reads recipe section '{name}', which is not in its declared reads "
                                       f"{sorted(self._reads)}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a stage's recipe is read-only")


@dataclass
class StageContext:
    """What a running stage sees besides its typed inputs: the recipe, progress, its item cache, the
    build's work area (persistent scratch such as committed stand-in repositories) and its upstream
    stages' keys and hashes. It never sees the cache folder or another stage's files."""

    name: str
    recipe: Recipe
    progress: StageProgress
    items: JsonCache
    work: Path
    upstream: Mapping[str, StageRef] = field(default_factory=dict)
    _out: Path | None = None

    def folder(self, name: str) -> Path:
        """A folder output (declared with ``artifacts.folder(name)``) for the stage to fill."""
        assert self._out is not None
        path = self._out / name
        path.mkdir(parents=True, exist_ok=True)
        return path


@dataclass(frozen=True)
class Stage:
    """One pipeline step: ``run(inputs, ctx) -> outputs``, typed by ``inputs`` and ``outputs``.

    ``inputs`` is a dataclass whose fields are named after the upstream stages it consumes and typed
    by their Outputs; the runner loads them. ``outputs`` declares the stage's files
    (builder.pipeline.artifacts); the runner writes them.
    """

    name: str
    run: Callable[[Any, StageContext], Any]
    inputs: type | None = None
    outputs: type | None = None
    config: Callable[[Any], Any] = lambda recipe: {}
    """The recipe data this stage depends on (hashed into its key)."""
    files: Callable[[Any], Sequence[Path]] = lambda recipe: ()
    """Files or folders the recipe points this stage at (their contents are hashed into its key)."""
    module: str | None = None
    """The module that implements the stage: its import closure within the project and the package data that
    closure reads (builder.pipeline.code_closure) are hashed into its key."""
    reads: tuple[str, ...] | None = None
    """The recipe sections the stage receives (its ``ctx.recipe`` is a :class:`RecipeSlice` of them) and its key
    hashes; ``None`` hands it the whole recipe object (test pipelines over plain objects)."""
    version: int = 1
    """Bump to rebuild this stage's cached outputs after a change its key cannot see (a third-party upgrade)."""
    description: str = ""
    items: str | None = None
    """The item cache it uses (default: its own name; the two classify stages share ``labels``)."""

    @property
    def needs(self) -> tuple[str, ...]:
        """Upstream stages whose outputs this stage reads (their hashes enter its key)."""
        return tuple(f.name for f in dataclasses.fields(self.inputs)) if self.inputs is not None else ()


@dataclass
class StageResult:
    name: str
    key: str
    status: str          # "ran" | "cached" | "would-run" | "pending"
    path: Path | None = None
    output_hash: str | None = None
    wall_s: float = 0.0
    summary: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"stage": self.name, "key": self.key, "status": self.status,
                "path": None if self.path is None else str(self.path), "output_hash": self.output_hash,
                "wall_s": round(self.wall_s, 3), "summary": self.summary}


def stage_key(stage: Stage, recipe: Any, upstream: Mapping[str, str],
              code: CodeBase | None = None) -> tuple[str, dict[str, Any]]:
    """The key of ``stage`` given its upstream output hashes, and the material it hashes. ``code``: where the
    project's modules are (default: the installed ones)."""
    files = list(stage.files(recipe))
    base = getattr(recipe, "base", Path("."))
    material = {
        "pipeline_version": PIPELINE_VERSION,
        "stage": stage.name,
        "stage_version": stage.version,
        "recipe": None if stage.reads is None else {s: recipe.section(s) for s in sorted(stage.reads)},
        "config": stage.config(recipe),
        "files": paths_hash(files, base) if files else None,
        "code": None if stage.module is None else (code or installed()).material(stage.module),
        "upstream": {n: upstream[n] for n in stage.needs},
    }
    return key_sha256(material), material


def _check_graph(stages: Sequence[Stage]) -> None:
    seen: set[str] = set()
    for st in stages:
        if st.name in seen:
            raise ConfigError("duplicate stage", field=st.name)
        for need in st.needs:
            if need not in seen:
                raise ConfigError(f"stage '{st.name}' needs '{need}', which does not run before it",
                                  field=st.name, expected=sorted(seen))
        seen.add(st.name)


def plan(stages: Sequence[Stage], recipe: Any, cache: StageCache) -> list[StageResult]:
    """What a build would do, without running anything: per stage its key and whether it is cached."""
    _check_graph(stages)
    hashes: dict[str, str | None] = {}
    out: list[StageResult] = []
    for st in stages:
        if any(hashes.get(n) is None for n in st.needs):
            out.append(StageResult(st.name, key="", status="pending"))
            hashes[st.name] = None
            continue
        key, _ = stage_key(st, recipe, {n: hashes[n] for n in st.needs})  # type: ignore[misc]
        record = cache.lookup(st.name, key)
        if record is not None:
            hashes[st.name] = record["output_hash"]
            out.append(StageResult(st.name, key, "cached", cache.stage_dir(st.name, key), record["output_hash"],
                                   summary=record.get("summary", {})))
        else:
            hashes[st.name] = None
            out.append(StageResult(st.name, key, "would-run"))
    return out


def run_stages(stages: Sequence[Stage], recipe: Any, cache: StageCache, *,
               progress: BuildProgress | None = None, force: Iterable[str] = (),
               until: str | None = None) -> list[StageResult]:
    """Run (or reuse) every stage in order; returns one result per stage that was reached.

    ``force`` names stages to rebuild even when cached; ``until`` stops after the named stage.
    """
    _check_graph(stages)
    force = set(force)
    unknown = force - {s.name for s in stages}
    if unknown or (until is not None and until not in {s.name for s in stages}):
        raise ConfigError("unknown stage", field="force/until", expected=[s.name for s in stages],
                          actual=sorted(unknown) or until)
    progress = progress or BuildProgress(len(stages), quiet=True)
    results: list[StageResult] = []
    done: dict[str, StageResult] = {}
    loaded: dict[str, Any] = {}

    def outputs_of(name: str) -> Any:
        """An upstream stage's typed outputs, read from its cache folder once per build."""
        if name not in loaded:
            spec = by_name[name]
            loaded[name] = artifacts.load(spec.outputs, done[name].path) if spec.outputs is not None else None
        return loaded[name]

    by_name = {s.name: s for s in stages}
    hashes: dict[str, str] = {}
    cache.lock()
    try:
        for i, st in enumerate(stages, start=1):
            key, material = stage_key(st, recipe, hashes)
            record = None if st.name in force else cache.lookup(st.name, key)
            if record is not None and not cache.verify(st.name, key, record):
                progress.note(f"[{i}/{len(stages)}] {st.name}: cached output was modified on disk; rebuilding")
                record = None
            sp = progress.stage(st.name, i)
            if record is not None:
                summary = record.get("summary", {})
                sp.restore(summary.get("items_total"), summary.get("items_done", 0), summary.get("items_failed", 0),
                           record.get("items_failed_expected", 0))
                progress.finish(sp, "cached")
                res = StageResult(st.name, key, "cached", cache.stage_dir(st.name, key), record["output_hash"],
                                  summary=summary)
            else:
                res = _run_one(st, key, material, recipe, cache, sp, progress,
                               {n: outputs_of(n) for n in st.needs}, {n: StageRef(done[n].key, hashes[n])
                                                                      for n in done if n in st.needs})
            done[st.name] = res
            hashes[st.name] = res.output_hash  # type: ignore[assignment]
            results.append(res)
            if until is not None and st.name == until:
                break
    finally:
        progress.close()
        cache.unlock()
    return results


def _run_one(st: Stage, key: str, material: dict[str, Any], recipe: Any, cache: StageCache, sp: StageProgress,
             progress: BuildProgress, upstream: dict[str, Any], refs: dict[str, StageRef]) -> StageResult:
    """Run one stage into a private folder, write its outputs and summary, and commit it to the cache."""
    t0 = time.monotonic()
    tmp = cache.new_tmp(st.name)
    view = recipe if st.reads is None else RecipeSlice(recipe, st.reads)
    ctx = StageContext(st.name, view, sp, cache.items(st.items or st.name), cache.work_dir(), refs, tmp)
    inputs = st.inputs(**upstream) if st.inputs is not None else None
    try:
        outputs = st.run(inputs, ctx)
        counts = {"items_total": sp.total if sp.total is not None else sp.done, "items_done": sp.done,
                  "items_failed": sp.failed}
        if st.outputs is not None:
            if not isinstance(outputs, st.outputs):
                raise TypeError(f"returned {type(outputs).__name__}, not {st.outputs.__name__}")
            artifacts.save(outputs, tmp, counts)
        else:
            artifacts.write_summary(tmp, counts)
    except TaskflowError as exc:   # keep its type and fields; say which stage it stopped
        progress.finish(sp, "FAILED")
        if not exc.message.startswith("stage '"):
            exc.message = f"stage '{st.name}': {exc.message}"
            exc.args = (str(exc),)
        raise
    except Exception as exc:
        progress.finish(sp, "FAILED")
        raise TaskflowError(f"stage '{st.name}' failed: {type(exc).__name__}: {exc}") from exc
    except BaseException:   # Ctrl-C, SIGTERM: the half-written stage output is debris
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    summary = artifacts.read_summary(tmp)
    wall = time.monotonic() - t0
    # the display's "deliberately broken" count lives in the stage record, outside the output hash: the
    # release's provenance names every stage's output hash, and a progress hint must not change it
    shown = {"items_failed_expected": sp.failed_expected} if sp.failed_expected else {}
    record = cache.commit(st.name, key, tmp, {"inputs": material, "summary": summary, "wall_s": round(wall, 3),
                                              **shown})
    progress.finish(sp, "ran")
    return StageResult(st.name, key, "ran", cache.stage_dir(st.name, key), record["output_hash"], wall, summary)
