"""CLI: ``swe-taskflow build RECIPE --out DIR``: the whole pipeline from a release recipe."""

from __future__ import annotations

import argparse
import sys


def register(sub) -> None:
    from ..pipeline.stages import STAGE_NAMES   # the registry's order (a constant: --help stays fast)

    p = sub.add_parser(
        "build", help="build a release from a recipe (cached, resumable, verified)",
        description=f"Run a release recipe's pipeline, {len(STAGE_NAMES)} stages: {' -> '.join(STAGE_NAMES)}. "
                    "Each stage is cached by the hash of its inputs; rerunning after an interruption resumes. "
                    "--dry-run also checks that the extras the recipe's stages need are installed.")
    p.add_argument("recipe", help="release recipe (TOML file), or the name of a shipped recipe: "
                                  "`example` (builder/releases/example.toml)")
    p.add_argument("--out", required=True, help="output folder (release/, report/, cache/, build.json)")
    p.add_argument("--cache", default=None, help="stage cache folder (default: OUT/cache)")
    p.add_argument("--dry-run", action="store_true", help="print what would run and what is cached, run nothing")
    p.add_argument("--force", action="append", default=[], metavar="STAGE",
                   help="rebuild this stage even when cached (repeatable)")
    p.add_argument("--until", default=None, metavar="STAGE", help="stop after this stage")
    p.add_argument("--quiet", action="store_true", help="no progress display")
    p.add_argument("--overwrite", action="store_true",
                   help="replace OUT/release and OUT/report even when they hold files this build did not write")
    p.set_defaults(func=run, out_is_dir=True)


def run(args: argparse.Namespace) -> int:
    from .. import api

    built = api.build(args.recipe, args.out, cache=args.cache, dry_run=args.dry_run, force=args.force,
                      until=args.until, quiet=args.quiet, overwrite=args.overwrite)
    if built.dry_run:
        print(built.plan)
        return 0
    print(f"built {built.name} {built.version} in {built.wall_s:.1f}s "
          f"({built.ran} stages ran, {len(built.stages) - built.ran} cached)")
    if built.release is not None:
        print(f"release: {built.release}")
    if built.report is not None:
        print(f"report:  {built.report}  (and report.md beside it)")
    sys.stdout.flush()
    return 0
