"""``build``: a recipe in, a verified release folder and its build report out.

Layout of the output folder::

    OUT/release/     the release (exactly what goes to the Hub), copied from the write stage
    OUT/report/      report.md, report.html, report.json and the Sankey PNGs
    OUT/build.json   per stage: key, output hash, ran or cached, wall time (this run's facts)
    OUT/cache/       the content-addressed stage cache (reused by the next build)
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from swe_taskflow.owned import owned_temp

from swe_taskflow.hygiene import sweep_host
from . import artifacts, outdir
from .cache import StageCache, atomic_write_bytes, replace_dir
from .folder_hash import STAGE_RECORD
from .build_progress import BuildProgress
from .extras import check_extras
from .recipe import Recipe, load_recipe, preflight
from .runner import StageResult, plan, run_stages
from .registry import pipeline_stages


@dataclass
class BuildOutcome:
    recipe: Recipe
    out: Path
    results: list[StageResult]
    wall_s: float = 0.0
    release: Path | None = None
    report: Path | None = None
    dry_run: bool = False
    extra: dict = field(default_factory=dict)

    def outputs(self, stage: str):
        """The typed outputs of a stage of this build (builder.pipeline.stage_data), read from the cache."""
        spec = {s.name: s for s in pipeline_stages()}[stage]
        path = next(r.path for r in self.results if r.name == stage)
        return artifacts.load(spec.outputs, path)

    def hashes(self) -> dict[str, str | None]:
        """Stage name -> content hash of its output (what two builds of the same inputs share)."""
        return {r.name: r.output_hash for r in self.results}


def dry_run_text(results: list[StageResult], stages) -> str:
    desc = {s.name: s.description for s in stages}
    lines = [f"{'stage':<17} {'status':<10} {'key':<14} what"]
    for r in results:
        status = {"cached": "cached", "would-run": "would run", "pending": "would run"}[r.status]
        key = r.key[:12] if r.key else "(after inputs)"
        lines.append(f"{r.name:<17} {status:<10} {key:<14} {desc.get(r.name, '')}")
    n = sum(1 for r in results if r.status == "cached")
    lines.append(f"{n} of {len(results)} stages cached; {len(results) - n} would run.")
    return "\n".join(lines)


def build(recipe_path: str | Path, out: str | Path, *, cache_dir: str | Path | None = None, dry_run: bool = False,
          force: Iterable[str] = (), until: str | None = None, quiet: bool = False,
          overwrite: bool = False) -> BuildOutcome:
    """Run (or plan, with ``dry_run``) the recipe's pipeline into ``out``.

    Before any stage: the recipe is checked in full (:func:`preflight`), and ``out`` must be a folder
    this build may write (:func:`outdir.claim`: not inside a release, no files it did not write unless
    ``overwrite``). Leftovers of a killed earlier build (containers, scratch folders, cgroups, half
    copies) are swept.
    """
    recipe = load_recipe(recipe_path)
    preflight(recipe)
    check_extras(recipe)
    out = Path(out)
    outdir.claim(out, overwrite=overwrite)
    cache = StageCache(Path(cache_dir) if cache_dir else out / "cache")
    stages = pipeline_stages()
    if dry_run:
        return BuildOutcome(recipe, out, plan(stages, recipe, cache), dry_run=True)
    sweep_leftovers()
    t0 = time.monotonic()
    progress = BuildProgress(len(stages), quiet=quiet)
    results = run_stages(stages, recipe, cache, progress=progress, force=force, until=until)
    by_name = {r.name: r for r in results}
    outcome = BuildOutcome(recipe, out, results)
    if "write" in by_name:
        _place_release(by_name["write"].path / "release", out, outcome,
                       say=(lambda m: None) if quiet else (lambda m: print(m, file=sys.stderr)))
    if "report" in by_name:
        replace_dir(by_name["report"].path / "report", out / "report")
        outcome.report = out / "report" / "report.html"
    outcome.wall_s = time.monotonic() - t0
    atomic_write_bytes(out / "build.json", (json.dumps({
        "recipe": str(recipe.path), "wall_s": round(outcome.wall_s, 2),
        "stages": [r.to_dict() for r in results],
        "release": None if outcome.release is None else str(outcome.release),
        "report": None if outcome.report is None else str(outcome.report),
    }, indent=2) + "\n").encode("utf-8"))
    outdir.record(out)
    return outcome


def _place_release(built: Path, out: Path, outcome: BuildOutcome, say) -> None:
    """The write stage's release into ``out/release``, keeping the trajectories an earlier release there carried
    when the rows they are bound to are unchanged (:func:`outdir.carry_trajectories`); verified again after."""
    dest = out / "release"
    if not dest.is_dir():
        replace_dir(built, dest)
    else:
        # owned and named like replace_dir's copies: what a killed build leaves here is swept by the next command
        with owned_temp(".release.carry-", out) as tmp:
            staged = Path(tmp) / "release"
            shutil.copytree(built, staged, ignore=shutil.ignore_patterns(STAGE_RECORD))
            carried = outdir.carry_trajectories(dest, staged, say=say)
            outcome.extra["trajectories"] = carried
            if carried["kept"]:
                from swe_taskflow.verify import verify_folder
                report = verify_folder(staged)
                if not report.ok:
                    raise report.errors[0]
            replace_dir(staged, dest)
    outcome.release = dest


def sweep_leftovers() -> None:
    """What builds killed with ``kill -9`` left on this host: scratch folders, cgroups, containers."""
    sweep_host()
    try:
        from ..proofs.docker_runner import docker_answers
    except ImportError:
        return
    if os.path.exists("/var/run/docker.sock") or os.environ.get("DOCKER_HOST"):
        docker_answers()   # the first client of a process sweeps dead owners' containers
