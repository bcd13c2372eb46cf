"""The release pipeline's stages, in build order, with what each one's cache key depends on.

ingest -> classify_prompts -> split -> questions -> proofs -> augment -> classify_turns -> assemble
-> select -> write -> verify -> report. Each stage module has one ``run(ctx)``; what it reads from the recipe,
which files it hashes and which modules implement it are declared here, next to each other.
"""

from __future__ import annotations

from pathlib import Path

from ..runner import Stage
from builder.resources import builder_path


def _files_source(r) -> list[Path]:
    p = r.resolve(r.source.spec)
    return [p] if p.exists() else []


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
    from .select import target_path

    try:
        p = target_path(r)
    except Exception:  # noqa: BLE001 - the default target's module may be missing while planning
        return []
    return [p] if p.exists() else []


#: Data the code reads at run time (prompt templates, classifier exemplars): hashed like code.
PROMPTS = builder_path("prompts")
CLASSIFIER_DATA = builder_path("data", "classifier")


def _existing(*paths: Path) -> list[Path]:
    return [p for p in paths if p.exists()]


def _package_state() -> dict:
    """Package version and git commit/dirty state: they go into the manifest, so into the write key."""
    try:
        from builder.release.writer import package_info

        return package_info()
    except ImportError:
        return {}


def _proofs_config(r):
    from .proofs import resolved_sandbox

    return {"proofs": r.section("proofs"), "repos": r.section("repos"), "resolved_sandbox": resolved_sandbox(r)}


def _augment_sandbox(r):
    """The sandbox the augmentation checks would use here (docker and bwrap runs differ: part of the key)."""
    if not r.augmentations.kinds and not r.augmentations.specs:
        return "none"
    try:
        from builder.proofs.run import resolve_sandbox

        return resolve_sandbox(r.proofs.sandbox)
    except Exception as exc:  # noqa: BLE001 - planning must not fail; running reports it
        return f"unavailable: {type(exc).__name__}"


def _write_config(r):
    return {"release": r.section("release"), "conditions": r.section("conditions"), "select": r.section("select"),
            "recipe_raw": dict(r.raw), "package": _package_state()}


CLASSIFY_CODE = ("builder.classify", "builder.pipeline.stages.common")


def pipeline_stages() -> list[Stage]:
    from . import (assemble, augment, classify_prompts, classify_turns, ingest, proofs, questions, report, select,
                   split, verify, write)

    return [
        Stage("ingest", ingest.run, config=lambda r: {"source": r.section("source")}, files=_files_source,
              code=("builder.sources", "builder.pipeline.stages.ingest"),
              description="read and normalize the source benchmark's tasks"),
        Stage("classify_prompts", classify_prompts.run, needs=("ingest",),
              config=lambda r: {"classifier": r.section("classifier")},
              files=lambda r: _existing(CLASSIFIER_DATA, PROMPTS),
              code=CLASSIFY_CODE + ("builder.pipeline.stages.classify_prompts",),
              description="label each task's original prompt (the source benchmark's Task Flow)"),
        Stage("split", split.run, needs=("ingest",), config=lambda r: {"split": r.section("split")},
              files=lambda r: _files_split(r) + _existing(PROMPTS),
              code=("builder.split", "builder.llm", "swe_taskflow.split_checks", "swe_taskflow.context_checks",
                    "builder.pipeline.stages.split"),
              description="split each issue into three ordered turns"),
        Stage("questions", questions.run, needs=("ingest",),
              config=lambda r: {"questions": r.section("questions"), "repos": r.section("repos")},
              files=lambda r: _files_pools(r) + (_files_repos(r) + _existing(PROMPTS)
                                                 if r.questions.mode == "generate" else []),
              code=("builder.qa", "builder.pipeline.stages.questions"),
              description="load question pools (or mine questions with an LLM)"),
        Stage("proofs", proofs.run, needs=("ingest", "questions"), config=_proofs_config, files=_files_repos,
              code=("builder.proofs", "builder.bundled", "swe_taskflow.proofs", "builder.pipeline.stages.proofs",
                    "builder.pipeline.stages.repos"),
              description="run each question's proof script in a sandbox"),
        Stage("augment", augment.run, needs=("ingest", "split"),
              config=lambda r: {"augmentations": r.section("augmentations"), "proofs": r.section("proofs"),
                                "repos": r.section("repos"), "seed": r.conditions.seed,
                                "resolved_sandbox": _augment_sandbox(r)},
              files=lambda r: [r.resolve(f) for f in r.augmentations.specs] + _files_repos(r) + _existing(PROMPTS)
              + ([r.resolve(r.augmentations.responses)] if r.augmentations.responses else []),
              code=("builder.augment", "swe_taskflow.augment", "builder.proofs", "builder.pipeline.stages.augment",
                    "builder.pipeline.stages.repos"),
              description="generate execute/debug/planning/review turns and check them at creation"),
        Stage("classify_turns", classify_turns.run, needs=("split", "proofs", "augment"),
              config=lambda r: {"classifier": r.section("classifier"), "augment_intents": r.augmentations.intents},
              files=lambda r: _existing(CLASSIFIER_DATA, PROMPTS),
              code=CLASSIFY_CODE + ("swe_taskflow.candidates", "builder.pipeline.stages.classify_turns"),
              description="label every issue and question turn"),
        Stage("assemble", assemble.run, needs=("split", "classify_turns"),
              config=lambda r: {"conditions": r.section("conditions")},
              code=("swe_taskflow.conditions", "swe_taskflow.candidates", "builder.pipeline.stages.assemble"),
              description="build the sessions of each fixed condition"),
        Stage("select", select.run, needs=("split", "classify_turns"),
              config=lambda r: {"select": r.section("select"), "target": r.section("target"),
                                "conditions": list(r.conditions.names),
                                "max_augments": r.augmentations.max_per_session if r.augmentations.kinds else 0},
              files=_files_target, code=("swe_taskflow.select", "swe_taskflow.select_config",
                                         "swe_taskflow.select_families", "swe_taskflow.select_search",
                                         "swe_taskflow.target", "swe_taskflow.targets",
                                         "builder.pipeline.stages.select"),
              description="choose the TFAS-optimized session per task"),
        Stage("write", write.run, needs=("ingest", "split", "questions", "proofs", "augment", "classify_turns",
                                         "assemble", "select"),
              config=_write_config, code=("builder.release", "swe_taskflow.rows", "swe_taskflow.features",
                                          "swe_taskflow.select_config", "swe_taskflow.conditions",
                                          "swe_taskflow.manifest", "swe_taskflow.hashing",
                                          "builder.pipeline.stages.write"),
              description="write the release folder (parquet, card, manifest)"),
        Stage("verify", verify.run, needs=("write",), code=("swe_taskflow.verify", "builder.pipeline.stages.verify"),
              description="verify the release as an auditor would"),
        Stage("report", report.run, needs=("ingest", "classify_prompts", "split", "questions", "proofs", "augment",
                                           "classify_turns", "assemble", "select", "write", "verify"),
              config=lambda r: {"release": r.section("release"), "conditions": r.section("conditions"),
                                "select": r.section("select"), "classifier": r.section("classifier")},
              code=("builder.report", "swe_taskflow.gap", "swe_taskflow.select_config",
                    "builder.pipeline.stages.report"),
              description="render the build report (Markdown, HTML, Sankey PNGs)"),
    ]


STAGE_NAMES = ("ingest", "classify_prompts", "split", "questions", "proofs", "augment", "classify_turns",
               "assemble", "select", "write", "verify", "report")
