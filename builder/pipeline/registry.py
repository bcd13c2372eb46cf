"""The release pipeline's stages, in build order, with what each one's cache key depends on.

ingest -> classify_prompts -> split -> questions -> proofs -> augment -> classify_turns -> assemble
-> select -> write -> verify -> report. Each stage module (builder.pipeline.stages) has one
``run(inputs, ctx) -> Outputs`` with its typed ``Inputs``. Declared here: the recipe sections each stage
receives (nothing else of the recipe reaches it) and the files the recipe points it at; the code and package
data it runs are derived from its module's import closure, never listed by hand.
"""

from __future__ import annotations

from pathlib import Path

from builder.proofs.run import resolve_sandbox
from builder.release.writer import package_info

from .recipe_derived import recipe_target_path
from .runner import Stage
from .stages import (STAGE_NAMES, assemble, augment, classify_prompts, classify_turns, ingest, proofs, questions,
                     report, select, split, stress, verify, write)


def _files_source(r) -> list[Path]:
    paths = [r.resolve(r.source.spec)] + ([r.resolve(r.source.run_scripts)] if r.source.run_scripts else [])
    return [p for p in paths if p.exists()]


def _files_pools(r) -> list[Path]:
    out = [r.resolve(p.path) for p in r.questions.pools] if r.questions.mode == "pool" else []
    if r.questions.mode == "generate":
        out += [r.resolve(x) for x in (r.questions.responses, r.questions.trajectories, r.questions.resolved) if x]
    return out


def _files_repos(r) -> list[Path]:
    return [r.resolve(x) for x in (r.repos.bundled, r.repos.path) if x]


def _files_split(r) -> list[Path]:
    return [r.resolve(r.split.responses)] if r.split.responses else []


def _files_target(r) -> list[Path]:
    p = recipe_target_path(r)
    return [p] if p.exists() else []


def _sandbox_here(r, used: bool) -> str:
    """The sandbox ``auto`` picks on this machine now, where the stage uses one (part of its key: docker
    and bwrap runs differ); planning must not fail, running reports why none is usable."""
    if not used:
        return "none"
    try:
        return resolve_sandbox(r.proofs.sandbox)
    except Exception as exc:  # noqa: BLE001
        return f"unavailable: {type(exc).__name__}"


def _proofs_derived(r):
    return {"resolved_sandbox": _sandbox_here(r, bool(r.proofs.enabled) and r.questions.mode != "none")}


def _augment_derived(r):
    return {"resolved_sandbox": _sandbox_here(r, bool(r.augmentations.kinds or r.augmentations.specs))}


def _files_augment(r) -> list[Path]:
    return ([r.resolve(f) for f in r.augmentations.specs] + _files_repos(r)
            + ([r.resolve(r.augmentations.responses)] if r.augmentations.responses else []))


def _stress_derived(r):
    return {"resolved_sandbox": _sandbox_here(r, bool(r.stress.slices or r.stress.specs))}


def _files_stress(r) -> list[Path]:
    return ([r.resolve(f) for f in r.stress.specs] + _files_repos(r)
            + ([r.resolve(r.stress.responses)] if r.stress.responses else []))


def _stage(name: str, module, *, reads: tuple[str, ...], description: str, **kw) -> Stage:
    """A pipeline stage: its code key comes from ``module``'s import closure, its recipe key from ``reads``."""
    return Stage(name, module.run, module.Inputs, module.Outputs, module=module.__name__, reads=reads,
                 description=description, **kw)


def pipeline_stages() -> list[Stage]:
    """Every stage in build order, each with the recipe sections it receives and the files the recipe points it at;
    the code each one runs is found from its module (builder.pipeline.code_closure)."""
    return [
        _stage("ingest", ingest, reads=("source",), files=_files_source,
               description="read and normalize the source benchmark's tasks"),
        _stage("classify_prompts", classify_prompts, reads=("classifier",), items="labels",
               description="label each task's original prompt (the source benchmark's Task Flow)"),
        _stage("split", split, reads=("split",), files=_files_split,
               description="split each issue into three ordered turns"),
        _stage("questions", questions, reads=("questions", "repos"),
               files=lambda r: _files_pools(r) + (_files_repos(r) if r.questions.mode == "generate" else []),
               description="load question pools (or mine questions with an LLM)"),
        _stage("proofs", proofs, reads=("proofs", "repos", "questions"), config=_proofs_derived, files=_files_repos,
               description="run each question's proof script in a sandbox"),
        _stage("augment", augment, reads=("augmentations", "proofs", "repos", "conditions"), config=_augment_derived,
               files=_files_augment,
               description="generate execute/debug/planning/review turns and check them at creation"),
        _stage("stress", stress, reads=("stress", "proofs", "repos"), config=_stress_derived, files=_files_stress,
               description="draw the stress-test slices' tasks and check their turns at creation"),
        _stage("classify_turns", classify_turns, reads=("classifier", "augmentations"), items="labels",
               description="label every issue and question turn"),
        _stage("assemble", assemble, reads=("conditions", "questions"),
               description="build the sessions of each fixed condition"),
        _stage("select", select, reads=("select", "target", "conditions", "questions", "augmentations"),
               files=_files_target, description="choose the TFAS-optimized session per task"),
        _stage("write", write,
               reads=("release", "conditions", "questions", "proofs", "select", "augmentations", "raw"),
               config=lambda r: {"package": package_info()},
               description="write the release folder (parquet, card, manifest)"),
        _stage("verify", verify, reads=(), description="verify the release as an auditor would"),
        _stage("report", report, reads=("release", "conditions", "questions", "select", "classifier",
                                        "augmentations", "target"),
               files=lambda r: _files_target(r) + [r.resolve(p) for p in r.target.compare],
               description="render the build report (Markdown, HTML, Sankey PNGs)"),
    ]


__all__ = ["STAGE_NAMES", "pipeline_stages"]
