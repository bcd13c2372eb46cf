"""Reproduce the shipped default target ``swe_taskflow/data/targets/specstory-long-v2.json``.

The long-session Task Flow (>= 3 user messages) of the real SpecStory sessions in
``../shared/data/interaction-sessions/`` (``$SWE_TASKFLOW_SHARED/data/...`` when set), labelled by the
default (embedded) classifier, with at most ``cap`` sessions per repository (seeded draw) so a few
repositories do not dominate. Only aggregate vectors are written. It is provisional: a public corpus stands
in for a production target, as the paper's Appendix C allows when stated explicitly.

    python -m tools.default_target [--sessions PATH] [--out PATH] [--cap 20] [--seed 0]
                                              [--classifier embedded] [--date YYYY-MM-DD] [--name NAME]

``specstory-long-v1.json`` holds the same sessions labelled by the previous default (now ``embedded-v1``),
measured 2026-11-29 and kept for comparison.

Same inputs, seed, classifier and ``--date`` -> a byte-identical file.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import sys
from pathlib import Path

if __package__ in (None, ""):   # run as a file: python tools/default_target.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.shared_data import ROOT, check_default, run_main, shared_data  # noqa: E402

DEFAULT_SESSIONS = shared_data("interaction-sessions/specstory_sessions.jsonl")
DEFAULT_OUT = ROOT / "swe_taskflow" / "data" / "targets" / "specstory-long-v2.json"

PROVISIONAL_NOTE = ("Provisional target: a public corpus (SpecStory session exports committed to public GitHub "
                    "repositories) stands in for a production target, as the paper's Appendix C allows when "
                    "stated explicitly. Replace it with your product's measured Task Flow.")


def build_default_target(sessions: Path = DEFAULT_SESSIONS, *, cap: int = 20, seed: int = 0,
                         min_messages: int = 3, classifier: str = "embedded", date: str | None = None,
                         name: str = "specstory-long-v2", cache: bool = True):
    """Classify, cap, count (the algorithm of ``flow measure``); returns the :class:`swe_taskflow.target.Target`."""
    from swe_taskflow.target import Target

    from builder.flow_measure import Labelling, measure_file

    m = measure_file(str(sessions), min_messages=min_messages, cap_per_repo=cap, seed=seed, skip_empty=True,
                     labelling=Labelling(classifier, "auto", cache))
    counts, capped = m.counts, m.table
    corpus_sha = hashlib.sha256(Path(sessions).read_bytes()).hexdigest()
    return Target.from_counts(
        counts, name=name,
        population=("SpecStory IDE session exports (Cursor, VS Code Copilot, Claude Code) committed to public "
                    "GitHub repositories (a snapshot of 1,022 sessions from 53 repositories; its sha256 is "
                    "session_filter.corpus_sha256): user messages only"),
        min_messages=min_messages,
        session_filter={"cap_per_repo": cap, "cap_seed": seed, "repos": len({r.repo for r in capped.records()}),
                        "sessions_read": m.n_read, "empty_sessions_skipped": m.n_skipped,
                        "long_sessions_before_cap": m.n_long, "corpus_sha256": corpus_sha},
        classifier=m.classifier,
        measured_on=date or dt.date.today().isoformat(), provisional=True,
        description=PROVISIONAL_NOTE + " Recreate with: python -m tools.default_target")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=Path, default=DEFAULT_SESSIONS)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--cap", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--classifier", default="embedded")
    ap.add_argument("--date", default=None, help="measurement date to record (default: today)")
    ap.add_argument("--name", default="specstory-long-v2", help="the target's name (default: specstory-long-v2)")
    ap.add_argument("--no-cache", action="store_true")
    args = ap.parse_args(argv)
    check_default(args.sessions, DEFAULT_SESSIONS, "--sessions")
    target = build_default_target(args.sessions, cap=args.cap, seed=args.seed, classifier=args.classifier,
                                  date=args.date, name=args.name, cache=not args.no_cache)
    target.save(args.out)
    ss = target.sample_size
    print(f"wrote {args.out}: {ss.get('sessions')} sessions, {ss.get('messages')} messages "
          f"({ss.get('retained_messages')} retained), classifier {target.classifier.get('name')} "
          f"{target.classifier.get('version')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main, "default_target"))
