"""Cost of admitting augmentation turns into the TFAS-optimized selection, at the paper's scale.

The synthetic instance of select_bench.py (700 tasks with 3 split parts, ~460 questions over 255
tasks) plus augmentation items: two planning turns on every task (for parts 1 and 2, as planning
needs only the gold patch) and execute, debug and review turns on ``--sandbox-share`` of the tasks
(those whose repository and tests run). Prints the family sizes and the search time without and
with augmentations (``max_augments`` per session), and the TFAS of both selections.

    .venv/bin/python benchmarks/augment_bench.py [--tasks 700] [--max-augments 2] [--restarts 64]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from select_bench import synthetic_instance, synthetic_target  # noqa: E402
from swe_taskflow.turns.kinds import KINDS  # noqa: E402
from swe_taskflow.schema import QAItem  # noqa: E402
from swe_taskflow.select import SelectConfig, build_families, select  # noqa: E402


def add_augments(materials, share: float, seed: int):
    rng = np.random.default_rng(seed + 7)
    out = []
    for m in materials:
        items = [QAItem(f"{m.instance_id}::planning-{p}", m.instance_id, f"plan {p} of {m.instance_id}", "ref",
                        kind="planning", intent=KINDS["planning"].intent, requirement_part=p, status="accepted")
                 for p in (1, 2)]
        if rng.random() < share:
            items += [QAItem(f"{m.instance_id}::{k}", m.instance_id, f"{k} of {m.instance_id}", "ref", kind=k,
                             intent=KINDS[k].intent, status="accepted") for k in ("execute", "debug", "review")]
        out.append(dataclasses.replace(m, augments=tuple(items)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=700)
    ap.add_argument("--qa-tasks", type=int, default=255)
    ap.add_argument("--sandbox-share", type=float, default=0.1)
    ap.add_argument("--max-augments", type=int, default=2)
    ap.add_argument("--restarts", type=int, default=64)
    ap.add_argument("--sweeps", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    materials, intents, n_q = synthetic_instance(args.tasks, args.qa_tasks, args.seed)
    materials = add_augments(materials, args.sandbox_share, args.seed)
    target = synthetic_target(args.seed)
    n_aug = sum(len(m.augments) for m in materials)
    print(f"{args.tasks} tasks, {n_q} questions, {n_aug} augmentation items "
          f"({args.sandbox_share:.0%} of tasks with execute/debug/review)")
    for label, k in (("without augmentations", 0), (f"with <= {args.max_augments} per session", args.max_augments)):
        cfg = SelectConfig(restarts=args.restarts, sweeps=args.sweeps, seed=args.seed, max_augments_per_session=k)
        t0 = time.perf_counter()
        fams = build_families(materials, intents, min_turns=target.min_messages, config=cfg)
        t_fam = time.perf_counter() - t0
        sizes = np.array([f.n_family for f in fams])
        distinct = np.array([len(f.candidates) for f in fams])
        t0 = time.perf_counter()
        sel = select(materials, intents, target, cfg)
        t_sel = time.perf_counter() - t0
        rep = sel.report()
        s = rep["score"]
        print(f"- {label}: family per task mean {sizes.mean():.0f} (max {sizes.max()}), distinct intent "
              f"sequences mean {distinct.mean():.0f} (max {distinct.max()}); families built in {t_fam:.2f} s; "
              f"selection {t_sel:.2f} s ({rep['search']['candidate_evaluations'] / max(t_sel, 1e-9) / 1e6:.2f} M "
              f"evaluations/s); TFAS {s['tfas']:.2f} (S_L {s['S_L']:.3f}, S_T {s['S_T']:.3f}, S_R {s['S_R']:.3f}); "
              f"augmentation turns kept {rep['augmentations']['retained']} {rep['augmentations']['by_kind']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
