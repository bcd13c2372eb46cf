"""The release pipeline's stages, in build order, with what each one's cache key depends on.

ingest -> classify_prompts -> split -> questions -> proofs -> augment -> classify_turns -> assemble
-> select -> write -> verify -> report. Each stage module (builder.pipeline.stages) has one
``run(inputs, ctx) -> Outputs`` with its typed ``Inputs``; what it reads from the recipe, which files it
hashes and which modules implement it are declared here, next to each other, so stages never import the
runner.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from builder.proofs.run import resolve_sandbox
from builder.release.writer import package_info
from builder.resources import builder_path

from .recipe_derived import target_path
from .runner import Stage
from .stages import (STAGE_NAMES, assemble, augment, classify_prompts, classify_turns, ingest, proofs, questions,
                     report, select, split, verify, write)


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
    p = target_path(r)
    return [p] if p.exists() else []


#: Data the code reads at run time (prompt templates, classifier exemplars): hashed like code.
PROMPTS = builder_path("prompts")
CLASSIFIER_DATA = builder_path("data", "classifier")


def _existing(*paths: Path) -> list[Path]:
    return [p for p in paths if p.exists()]


def _sandbox_here(r, used: bool) -> str:
    """The sandbox ``auto`` picks on this machine now, where the stage uses one (part of its key: docker
    and bwrap runs differ); planning must not fail, running reports why none is usable."""
    if not used:
        return "none"
    try:
        return resolve_sandbox(r.proofs.sandbox)
    except Exception as exc:  # noqa: BLE001
        return f"unavailable: {type(exc).__name__}"


def _proofs_config(r):
    used = bool(r.proofs.enabled) and r.questions.mode != "none"
    return {"proofs": r.section("proofs"), "repos": r.section("repos"), "resolved_sandbox": _sandbox_here(r, used)}


def _augment_sandbox(r):
    return _sandbox_here(r, bool(r.augmentations.kinds or r.augmentations.specs))


def _augment_config(r):
    return {"augmentations": r.section("augmentations"), "proofs": r.section("proofs"),
            "repos": r.section("repos"), "seed": r.conditions.seed, "resolved_sandbox": _augment_sandbox(r)}


def _files_augment(r) -> list[Path]:
    return ([r.resolve(f) for f in r.augmentations.specs] + _files_repos(r) + _existing(PROMPTS)
            + ([r.resolve(r.augmentations.responses)] if r.augmentations.responses else []))


def _select_config(r):
    return {"select": r.section("select"), "target": r.section("target"), "conditions": list(r.conditions.names),
            "max_augments": r.augmentations.max_per_session if r.augmentations.kinds else 0}


def _report_config(r):
    return {"release": r.section("release"), "conditions": r.section("conditions"),
            "select": r.section("select"), "classifier": r.section("classifier")}


def _write_config(r):
    return {"release": r.section("release"), "conditions": r.section("conditions"), "select": r.section("select"),
            "recipe_raw": dict(r.raw), "package": package_info()}


CLASSIFY_CODE = ("builder.classify", "builder.pipeline.stages.common")
#: Modules every stage's I/O goes through: a change to how outputs are stored rebuilds every stage.
IO_CODE = ("builder.pipeline.artifacts", "builder.pipeline.stage_data")


def pipeline_stages() -> list[Stage]:
    """Every stage in build order; each one's key material (``code`` also gets IO_CODE)."""
    stages = [
        Stage("ingest", ingest.run, ingest.Inputs, ingest.Outputs, config=lambda r: {"source": r.section("source")}, files=_files_source,
              code=("builder.sources", "builder.evaluation.source", "builder.pipeline.stages.ingest"),
              description="read and normalize the source benchmark's tasks"),
        Stage("classify_prompts", classify_prompts.run, classify_prompts.Inputs, classify_prompts.Outputs, config=lambda r: {"classifier": r.section("classifier")},
              files=lambda r: _existing(CLASSIFIER_DATA, PROMPTS),
              code=CLASSIFY_CODE + ("builder.pipeline.stages.classify_prompts",), items="labels",
              description="label each task's original prompt (the source benchmark's Task Flow)"),
        Stage("split", split.run, split.Inputs, split.Outputs, config=lambda r: {"split": r.section("split")},
              files=lambda r: _files_split(r) + _existing(PROMPTS),
              code=("builder.split", "builder.llm", "swe_taskflow.split_checks", "swe_taskflow.context_checks",
                    "builder.pipeline.stages.split"),
              description="split each issue into three ordered turns"),
        Stage("questions", questions.run, questions.Inputs, questions.Outputs, config=lambda r: {"questions": r.section("questions"), "repos": r.section("repos")},
              files=lambda r: _files_pools(r) + (_files_repos(r) + _existing(PROMPTS)
                                                 if r.questions.mode == "generate" else []),
              code=("builder.qa", "builder.pipeline.stages.questions"),
              description="load question pools (or mine questions with an LLM)"),
        Stage("proofs", proofs.run, proofs.Inputs, proofs.Outputs, config=_proofs_config, files=_files_repos,
              code=("builder.proofs", "builder.bundled", "swe_taskflow.proofs", "builder.pipeline.stages.proofs",
                    "builder.pipeline.repos", "builder.pipeline.volatile"),
              description="run each question's proof script in a sandbox"),
        Stage("augment", augment.run, augment.Inputs, augment.Outputs, config=_augment_config, files=_files_augment,
              code=("builder.augment", "swe_taskflow.augment", "builder.proofs", "builder.pipeline.stages.augment",
                    "builder.pipeline.repos", "builder.pipeline.volatile"),
              description="generate execute/debug/planning/review turns and check them at creation"),
        Stage("classify_turns", classify_turns.run, classify_turns.Inputs, classify_turns.Outputs, config=lambda r: {"classifier": r.section("classifier"), "augment_intents": r.augmentations.intents},
              files=lambda r: _existing(CLASSIFIER_DATA, PROMPTS),
              code=CLASSIFY_CODE + ("swe_taskflow.candidates", "builder.pipeline.stages.classify_turns"),
              items="labels",
              description="label every issue and question turn"),
        Stage("assemble", assemble.run, assemble.Inputs, assemble.Outputs, config=lambda r: {"conditions": r.section("conditions")},
              code=("swe_taskflow.conditions", "swe_taskflow.candidates", "builder.pipeline.materials", "builder.pipeline.stages.assemble"),
              description="build the sessions of each fixed condition"),
        Stage("select", select.run, select.Inputs, select.Outputs, config=_select_config,
              files=_files_target, code=("swe_taskflow.select", "swe_taskflow.select_config",
                                         "swe_taskflow.select_families", "swe_taskflow.select_search",
                                         "swe_taskflow.target", "swe_taskflow.targets",
                                         "builder.pipeline.materials", "builder.pipeline.recipe_derived",
                                         "builder.pipeline.stages.select"),
              description="choose the TFAS-optimized session per task"),
        Stage("write", write.run, write.Inputs, write.Outputs, config=_write_config, code=("builder.release", "swe_taskflow.rows", "swe_taskflow.features",
                                          "swe_taskflow.select_config", "swe_taskflow.conditions",
                                          "swe_taskflow.manifest", "swe_taskflow.hashing",
                                          "builder.pipeline.materials", "builder.pipeline.recipe_derived",
                                          "builder.pipeline.stages.write"),
              description="write the release folder (parquet, card, manifest)"),
        Stage("verify", verify.run, verify.Inputs, verify.Outputs, code=("swe_taskflow.verify", "builder.pipeline.stages.verify"),
              description="verify the release as an auditor would"),
        Stage("report", report.run, report.Inputs, report.Outputs, config=_report_config,
              code=("builder.report", "swe_taskflow.gap", "swe_taskflow.select_config",
                    "builder.pipeline.materials", "builder.pipeline.recipe_derived",
                    "builder.pipeline.stages.report"),
              description="render the build report (Markdown, HTML, Sankey PNGs)"),
    ]
    return [dataclasses.replace(st, code=st.code + IO_CODE) for st in stages]


__all__ = ["STAGE_NAMES", "pipeline_stages"]
