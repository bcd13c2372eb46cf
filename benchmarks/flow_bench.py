"""How long measuring and scoring one million messages takes (prints figures; not a test).

    .venv/bin/python benchmarks/flow_bench.py [--messages 1000000] [--bootstrap 200] [--seed 0]

Synthetic sessions from a seeded rng (lengths 1..20, all 16 labels). Timed steps:
read a labelled sessions JSONL file (what `flow measure` parses), count from label lists, count
from integer codes (the vectorized core), normalize + score against a target, and bootstrap.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from swe_taskflow import flow
from swe_taskflow.bootstrap import bootstrap_score, session_counts
from swe_taskflow.sessions import intent_lists, read_sessions
from swe_taskflow.taxonomy import INTENTS


def _timed(label: str, fn):
    t0 = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t0
    print(f"{label:<58s} {dt:8.3f} s")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--bootstrap", type=int, default=200, help="resamples for the bootstrap timing (0 = skip)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    rng = np.random.default_rng(args.seed)
    lengths = rng.integers(1, 21, size=args.messages // 5)
    lengths = lengths[np.cumsum(lengths) <= args.messages]
    if lengths.sum() < args.messages:
        lengths = np.append(lengths, args.messages - lengths.sum())
    codes = rng.integers(0, len(INTENTS), size=int(lengths.sum()))
    names = np.asarray(INTENTS)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    sessions = [names[codes[offsets[i]:offsets[i + 1]]].tolist() for i in range(lengths.size)]
    print(f"{int(lengths.sum()):,} messages in {lengths.size:,} sessions (seed {args.seed})")

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sessions.jsonl"
        with path.open("w", encoding="utf-8") as fh:
            for i, s in enumerate(sessions):
                fh.write(json.dumps({"session_id": str(i), "messages": [{"text": "", "intent": x} for x in s]}) + "\n")
        recs = _timed("read + validate sessions JSONL (read_sessions)", lambda: read_sessions(path))
        lists = intent_lists(recs)
    counts = _timed("count from label lists (flow.count_sessions)", lambda: flow.count_sessions(lists))
    _timed("count from int codes (flow.counts_from_codes)", lambda: flow.counts_from_codes(codes, lengths))
    target = flow.measure(sessions[: len(sessions) // 2], min_messages=3)
    res = _timed("normalize + score vs a target (TFAS, 3 JSDs)", lambda: flow.score(target, counts.normalized()))
    print(f"  TFAS {res.tfas:.3f}  S_L {res.S_L:.4f}  S_T {res.S_T:.4f}  S_R {res.S_R:.4f}")
    if args.bootstrap:
        sc = _timed("per-session sparse count matrix (session_counts)", lambda: session_counts(lists))
        boot = _timed(f"bootstrap, {args.bootstrap} resamples of whole sessions",
                      lambda: bootstrap_score(target, sc, n_resamples=args.bootstrap, seed=args.seed))
        print(f"  TFAS 95% interval [{boot.tfas.lo:.3f}, {boot.tfas.hi:.3f}]")


if __name__ == "__main__":
    main()
