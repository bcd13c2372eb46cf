"""The release pipeline's stages, in build order, with what each one's cache key depends on.

ingest -> classify_prompts -> split -> questions -> proofs -> augment -> stress -> classify_turns
-> assemble -> select -> write -> verify -> report (``STAGE_NAMES``; a test keeps this list equal to it).
Each stage module (builder.pipeline.stages) has one ``run(inputs, ctx) -> Outputs`` with its typed ``Inputs``.
Declared here: the recipe sections each stage receives (nothing else of the recipe reaches it) and the files the
recipe points it at; the code and package data it runs are derived from its module's import closure, never listed
by hand.
"""

from __future__ import annotations

from pathlib import Path

from ..proofs.run import resolve_sandbox
from ..release.writer import package_info

from .recipe import recipe_target_path
from .runner import Stage
from .stages import (STAGE_NAMES, assemble, augment, classify_prompts, classify_turns, ingest, proofs, questions,
                     report, select, split, stress, verify, write)


def _files_source(r) -> list[Path]:
    paths = [r.resolve(r.source.spec)] + ([r.resolve(r.source.run_scripts)] if r.source.run_scripts else [])
    return [p for p in paths if p.exists()]


def _files_pools(r) -> list[Path]:
    out = [r.resolve(p.path) for p in r.questions.pools] if r.questions.mode == "pool" else []
    if r.questions.mode == "generate":
        out += [r.resolve(x) for x in (r.questions.llm.responses, r.questions.trajectories, r.questions.resolved) if x]
    return out


def _files_repos(r) -> list[Path]:
    return [r.resolve(x) for x in (r.repos.bundled, r.repos.path) if x]


def _files_target(r) -> list[Path]:
    p = recipe_target_path(r)
    return [p] if p.exists() else []


def _sandbox_config(used):
    """A checking stage's config: the sandbox ``auto`` picks on this machine now, where ``used(recipe)`` says the
    stage runs one (part of its key: docker and bwrap runs differ); planning must not fail, running reports why
    none is usable."""
    def config(r) -> dict:
        if not used(r):
            return {"resolved_sandbox": "none"}
        try:
            return {"resolved_sandbox": resolve_sandbox(r.proofs.sandbox)}
        except Exception as exc:  # noqa: BLE001
            return {"resolved_sandbox": f"unavailable: {type(exc).__name__}"}
    return config


def _files_checks(section: str):
    """A checking stage's files: its spec files, the repositories and its response store."""
    def files(r) -> list[Path]:
        sec = getattr(r, section)
        responses = [r.resolve(sec.llm.responses)] if sec.llm.responses else []
        return [r.resolve(f) for f in sec.specs] + _files_repos(r) + responses
    return files


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
        _stage("split", split, reads=("split",),
               files=lambda r: [r.resolve(r.split.llm.responses)] if r.split.llm.responses else [],
               description="split each issue into three ordered turns"),
        _stage("questions", questions, reads=("questions", "repos"),
               files=lambda r: _files_pools(r) + (_files_repos(r) if r.questions.mode == "generate" else []),
               description="load question pools (or mine questions with an LLM)"),
        _stage("proofs", proofs, reads=("proofs", "repos", "questions"), files=_files_repos,
               config=_sandbox_config(lambda r: r.proofs.enabled and r.questions.mode != "none"),
               description="run each question's proof script in a sandbox"),
        _stage("augment", augment, reads=("augmentations", "proofs", "repos", "conditions"),
               files=_files_checks("augmentations"),
               config=_sandbox_config(lambda r: r.augmentations.kinds or r.augmentations.specs),
               description="generate execute/debug/planning/review turns and check them at creation"),
        _stage("stress", stress, reads=("stress", "proofs", "repos"), files=_files_checks("stress"),
               config=_sandbox_config(lambda r: r.stress.slices or r.stress.specs),
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
