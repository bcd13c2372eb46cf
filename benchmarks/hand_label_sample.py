"""Draw the hand-label sample (seeded) from held-out SpecStory sessions and print it for a human labeller.

Held-out sessions: sha256(session_id) hex ends in 0, 1 or 2. They are never used to write exemplars or to
tune the embedded classifier. The printed texts stay on the labeller's screen: only
``{session_id, index, intent, labeler}`` rows go into ``tests/data/hand_labels_v1.jsonl``.

    python benchmarks/hand_label_sample.py [--n 130] [--seed 8] [--sessions PATH]
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SESSIONS = ROOT.parent / "shared" / "data" / "interaction-sessions" / "specstory_sessions.jsonl"
HELD_OUT_SUFFIXES = "012"


def is_held_out(session_id: str) -> bool:
    return hashlib.sha256(session_id.encode("utf-8")).hexdigest()[-1] in HELD_OUT_SUFFIXES


def sample_keys(sessions_path: Path, n: int = 130, seed: int = 8, *, dev: bool = False) -> list[tuple[str, int, str]]:
    """(session_id, message index, text) of ``n`` messages drawn uniformly from held-out sessions
    (``dev=True``: from the other sessions, the development sample used for tuning)."""
    pool = []
    with open(sessions_path, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            if is_held_out(rec["session_id"]) != dev:
                pool.extend((rec["session_id"], m["index"], m["text"]) for m in rec["user_messages"])
    pool.sort(key=lambda x: (x[0], x[1]))
    rng = np.random.default_rng(seed)
    picks = rng.choice(len(pool), size=min(n, len(pool)), replace=False)
    return [pool[i] for i in sorted(picks)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=130)
    ap.add_argument("--seed", type=int, default=8)
    ap.add_argument("--sessions", type=Path, default=DEFAULT_SESSIONS)
    ap.add_argument("--dev", action="store_true", help="sample the tuning (non-held-out) sessions instead")
    ap.add_argument("--chars", type=int, default=700, help="head chars shown (plus a 200-char tail)")
    args = ap.parse_args()
    for k, (sid, idx, text) in enumerate(sample_keys(args.sessions, args.n, args.seed, dev=args.dev)):
        shown = text if len(text) <= args.chars + 200 else text[:args.chars] + "\n[...]\n" + text[-200:]
        print(f"=== #{k} {sid} {idx} ({len(text)} chars)\n{shown}\n")


if __name__ == "__main__":
    main()
