"""How close the project's defaults come to the paper (issue 15), one section per question.

    .venv/bin/python benchmarks/paper_fidelity.py [--section tfas] [--tasks PATH] [--build-dir DIR]

Sections (each a function ``section_<name>(args)`` that prints its part):

- ``tfas``: the full-set build (all 731 SWE-Bench Pro tasks, ``builder/releases/swe-bench-pro-paper.toml``:
  single, split, concat and the TFAS-optimized selection with ``select.preset = "paper"``) against the default
  target, TFAS with S_L, S_T, S_R beside it and the candidate-selection configuration of every row; the
  evaluation-context checks' retention; for contrast, the optimized selection without the preset and without
  the long-slice filter (free to merge split turns or keep the original prompt) on the same tasks. The build is cached in ``--build-dir``: the first run takes minutes.

The paper's Table 2 is measured against its long-session Production target, which is not public: its figures
are printed for orientation only, never compared as if they were the same measurement.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_TASKS = ROOT.parent / "shared" / "data" / "swe-bench-pro" / "swe_bench_pro_public_731.jsonl"
PAPER_RECIPE = ROOT / "builder" / "releases" / "swe-bench-pro-paper.toml"
#: The paper's Table 2 / Section 4 figures (Production target, Sol question pool): orientation only.
PAPER_TABLE2 = {"split_prompt": 59.6, "qa fixed placements": "75.6-77.1", "tfas_optimized": 77.8, "single_prompt": 0.0}


def _local_recipe(tasks: Path, build_dir: Path) -> Path:
    """The paper recipe with ``source.spec`` pointing at a local copy of the 731 tasks (no Hub here)."""
    text = PAPER_RECIPE.read_text(encoding="utf-8")
    text, n = re.subn(r'(?m)^spec = ".*"$', f"spec = {json.dumps(str(tasks.resolve()))}", text)
    assert n == 1, "the paper recipe's source.spec line changed"
    build_dir.mkdir(parents=True, exist_ok=True)
    path = build_dir / "recipe.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _stage_dir(outcome, name: str) -> Path:
    return next(r.path for r in outcome.results if r.name == name)


def section_tfas(args: argparse.Namespace) -> None:
    from builder.pipeline.build import build
    from builder.pipeline.stages.common import read_splits
    from swe_taskflow.candidates import build_materials
    from swe_taskflow.jsonl import read_jsonl
    from swe_taskflow.select import SelectConfig, describe, select
    from swe_taskflow.target import load_target

    tasks = Path(args.tasks)
    if not tasks.is_file():
        print(f"tfas: skipped, the 731 SWE-Bench Pro tasks are not at {tasks} (pass --tasks)")
        return
    recipe = _local_recipe(tasks, Path(args.build_dir))
    t0 = time.perf_counter()
    outcome = build(recipe, Path(args.build_dir) / "out", quiet=not args.progress)
    wall = time.perf_counter() - t0
    ran = sum(r.status == "ran" for r in outcome.results)
    report = json.loads((outcome.out / "report" / "report.json").read_text())
    split = json.loads((_stage_dir(outcome, "split") / "summary.json").read_text())
    print(f"== TFAS of the full-set build ({tasks.name}; recipe {PAPER_RECIPE.relative_to(ROOT)}; "
          f"target {report['target']}) ==")
    print(f"build: {wall:.0f} s ({ran} of {len(outcome.results)} stages ran, the rest cached); release "
          f"{outcome.release}")
    by_status = split.get("by_status", {})
    print(f"splitting + evaluation-context checks (mode {split.get('context_checks')}): {by_status.get('ok', 0)} of "
          f"{sum(by_status.values())} tasks split, {split.get('context_failed', 0)} failed the context checks "
          f"(paper: 700 of 731); FAIL_TO_PASS tests tied to no turn: {split.get('tests_unattributed', 0)}")
    rules = {"source benchmark (single prompts)": "none: the source benchmark's own prompts",
             **report.get("split_rules", {})}
    print(f"\n{'benchmark':36s} {'sessions':>8s} {'S_L':>6s} {'S_T':>6s} {'S_R':>6s} {'TFAS':>6s}  candidate selection")
    for row in report["tfas"]:
        vals = [f"{row[k]:6.3f}" if k in row else "     -" for k in ("S_L", "S_T", "S_R")]
        tfas = f"{row['tfas']:6.1f}" if "tfas" in row else "     -"
        print(f"{row['name']:36s} {row['sessions']:8d} {' '.join(vals)} {tfas}  {rules.get(row['name'], '-')}")

    # contrast: the same tasks, the optimizer free to merge split turns or keep the original (no preset, no
    # long-slice filter: with the filter and no questions only the 3 split turns qualify)
    target = load_target(_stage_dir(outcome, "select") / "target.json")
    splits = read_splits(_stage_dir(outcome, "split"))
    materials, _ = build_materials(splits, [])
    intents = {o["text"]: o["intent"] for _, o in read_jsonl(_stage_dir(outcome, "classify_turns") / "intents.jsonl")}
    cfg = SelectConfig(apply_target_filter=False)
    t0 = time.perf_counter()
    free = select(materials, intents, target, cfg)
    s = free.score
    rep = free.report()
    print(f"{'tfas_optimized, no preset/filter':36s} {len(materials):8d} {s.S_L:6.3f} {s.S_T:6.3f} {s.S_R:6.3f} "
          f"{s.tfas:6.1f}  {describe(cfg)} (backbones chosen: {rep['backbones']}; {time.perf_counter() - t0:.1f} s)")
    sel = report.get("selection") or {}
    if sel:
        print(f"\npaper-preset selection: {sel.get('config_text')}; constraints (bound/achieved): "
              + ", ".join(f"{k} {c['bound']}/{c['achieved']}" for k, c in sel.get("constraints", {}).items()))
    print("\npaper (Table 2, its Production target and Sol questions; orientation only): "
          + ", ".join(f"{k} {v}" for k, v in PAPER_TABLE2.items()))


SECTIONS = {"tfas": section_tfas}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--section", action="append", choices=sorted(SECTIONS), help="run only these (repeatable)")
    ap.add_argument("--tasks", default=str(DEFAULT_TASKS), help="the 731 SWE-Bench Pro tasks (JSONL)")
    ap.add_argument("--build-dir", default=str(ROOT / "build" / "paper-fidelity"),
                    help="where the full-set build and its cache live (reused by the next run)")
    ap.add_argument("--progress", action="store_true", help="show the build's progress on stderr")
    args = ap.parse_args()
    for name in args.section or list(SECTIONS):
        SECTIONS[name](args)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
