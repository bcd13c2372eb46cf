"""Speed of the TFAS-optimized selection at the paper's scale, against a naive implementation.

Paper scale (Appendix F): 700 tasks with 3 split parts each, a pool of about 460 questions over
about 255 tasks, 64 restarts x 20 sweeps. Intents are synthetic (a seeded generator); the target is
synthetic too (random long sessions) unless ``--target`` names a target file.

The naive implementation recomputes the corpus distributions for every candidate it evaluates
(``counts_from_codes`` over all sessions, then ``score``); it is timed on a small sample of
evaluations and extrapolated to the number of evaluations the fast search made.

    .venv/bin/python benchmarks/select_bench.py [--tasks 700] [--qa-tasks 255] [--seed 0] [--preset paper]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from swe_taskflow.candidates import build_materials, resolve_intents  # noqa: E402
from swe_taskflow.flow import count_sessions, counts_from_codes, score  # noqa: E402
from swe_taskflow.schema import QAItem, SplitResult  # noqa: E402
from swe_taskflow.select import SelectConfig, build_families, describe, select  # noqa: E402
from swe_taskflow.target import Target, load_target  # noqa: E402
from swe_taskflow.taxonomy import RETAINED, encode  # noqa: E402

ISSUE_INTENTS = ("bug-fix", "new-feature", "tests", "refactor", "debug", "planning", "execute",
                 "code-review", "generate-docs", "transformation")
ISSUE_WEIGHTS = np.array([30, 28, 10, 8, 6, 6, 5, 3, 2, 2], dtype=float)


def synthetic_instance(n_tasks: int, n_qa_tasks: int, seed: int):
    """Tasks with 3 split parts each, ~1.8 questions on each of ``n_qa_tasks`` tasks, random intents."""
    rng = np.random.default_rng(seed)
    splits = [SplitResult(f"task-{i:04d}", "ok", tuple(f"task {i} part {j}" for j in range(3)),
                          original_prompt=f"task {i} original issue") for i in range(n_tasks)]
    pool, qn = [], 0
    for i in sorted(rng.choice(n_tasks, size=n_qa_tasks, replace=False)):
        for _ in range(int(rng.choice([1, 2, 3], p=[0.4, 0.42, 0.18]))):
            pool.append(QAItem(f"q-{qn:04d}", f"task-{i:04d}", f"question {qn}", "reference",
                               status="accepted", pool="synthetic"))
            qn += 1
    materials, _ = build_materials(splits, pool)
    texts = [t for m in materials for t in m.issue_texts()]
    p = ISSUE_WEIGHTS / ISSUE_WEIGHTS.sum()
    labels = rng.choice(len(ISSUE_INTENTS), size=len(texts), p=p)
    intents = resolve_intents(texts, dict(zip(texts, (ISSUE_INTENTS[i] for i in labels))))
    return materials, intents, len(pool)


def synthetic_target(seed: int) -> Target:
    """Random long sessions (3-12 messages) with a skewed intent mix: a stand-in production target."""
    rng = np.random.default_rng(seed + 1)
    w = rng.dirichlet(np.ones(len(RETAINED)) * 0.7)
    sessions = [[RETAINED[j] for j in rng.choice(len(RETAINED), size=int(rng.integers(3, 13)), p=w)]
                for _ in range(2000)]
    return Target.from_counts(count_sessions(sessions), name="synthetic-benchmark-target",
                              population="synthetic", min_messages=3, provisional=True)


def naive_seconds_per_eval(families, chosen, target, n_sample: int, seed: int) -> float:
    """Time the naive evaluation: rebuild the whole corpus and score it for each candidate."""
    rng = np.random.default_rng(seed)
    codes = [encode(list(f.candidates[c].intents)) for f, c in zip(families, chosen)]
    active = [i for i, f in enumerate(families) if len(f.candidates) > 1]
    done, t0 = 0, time.perf_counter()
    while done < n_sample:
        i = int(rng.choice(active))
        fam = families[i]
        for cand in fam.candidates:
            trial = list(codes)
            trial[i] = encode(list(cand.intents))
            lengths = np.array([len(c) for c in trial])
            counts = counts_from_codes(np.concatenate(trial), lengths)
            score(target.flow, counts.normalized())
            done += 1
            if done >= n_sample:
                break
    return (time.perf_counter() - t0) / done


def compare_with_naive(sel, target: Target, args: argparse.Namespace, wall: float) -> None:
    """Print the naive cost per evaluation, extrapolated to the fast search's evaluations."""
    per = naive_seconds_per_eval(sel.families, sel.chosen, target, args.naive_sample, args.seed)
    naive_total = per * sel.stats.evaluations
    print(f"naive: {per * 1e6:.1f} us per evaluation (timed on {args.naive_sample}), "
          f"extrapolated to {sel.stats.evaluations:,} evaluations: {naive_total:,.0f} s")
    print(f"speed-up vs naive: {naive_total / wall:,.0f}x")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=700)
    ap.add_argument("--qa-tasks", type=int, default=255)
    ap.add_argument("--restarts", type=int, default=64)
    ap.add_argument("--sweeps", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--naive-sample", type=int, default=2000, help="naive evaluations to time")
    ap.add_argument("--target", help="a target Task-Flow file (default: a synthetic one)")
    ap.add_argument("--min-full-split-share", type=float, default=None,
                    help="1.0: every task keeps its 3 issue turns (the paper preset sets it)")
    ap.add_argument("--preset", default="", help="a named selection preset, e.g. 'paper' (Appendix F's run)")
    args = ap.parse_args()

    materials, intents, n_q = synthetic_instance(args.tasks, args.qa_tasks, args.seed)
    target = load_target(args.target) if args.target else synthetic_target(args.seed)
    settings = dict(restarts=args.restarts, sweeps=args.sweeps, seed=args.seed,
                    min_full_split_share=args.min_full_split_share)
    cfg = (SelectConfig.from_preset(args.preset, **settings) if args.preset else
           SelectConfig(**{k: v for k, v in settings.items() if v is not None}))
    print(f"selection: {describe(cfg)}")
    fams = build_families(materials, intents, min_turns=target.min_messages, config=cfg)
    print(f"instance: {args.tasks} tasks x 3 split parts, {n_q} questions over {args.qa_tasks} tasks; "
          f"target {target.name}; family sizes: total {sum(f.n_family for f in fams)}, "
          f"distinct {sum(len(f.candidates) for f in fams)}, active tasks "
          f"{sum(1 for f in fams if len(f.candidates) > 1)}")

    t0, c0 = time.perf_counter(), time.process_time()
    sel = select(materials, intents, target, cfg)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    ev = sel.stats.evaluations
    s = sel.score
    print(f"fast search: {args.restarts} restarts x <= {args.sweeps} sweeps, wall {wall:.2f} s "
          f"(cpu {cpu:.2f} s; incl. family build), {ev:,} candidate evaluations, {ev / wall:,.0f} evaluations/s")
    print(f"  sweeps per restart: {sel.stats.to_dict()['sweeps']}; TFAS {s.tfas:.3f} "
          f"(S_L {s.S_L:.4f}, S_T {s.S_T:.4f}, S_R {s.S_R:.4f})")
    rep = sel.report()
    print(f"  sessions by questions {rep['sessions_by_questions']}, placement {rep['placement']}, "
          f"slots {rep['questions_by_slot']}")
    print("  constraints (bound / achieved): " + ", ".join(
        f"{k} {c['bound']}/{c['achieved']}" for k, c in rep["constraints"].items() if c["bound"]))

    compare_with_naive(sel, target, args, wall)
    return 0


if __name__ == "__main__":
    sys.exit(main())
