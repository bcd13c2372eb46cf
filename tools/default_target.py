"""Reproduce the shipped default target ``swe_taskflow/data/targets/specstory-long-v2.json``.

The long-session Task Flow (>= 3 user messages) of the real SpecStory sessions in
``../shared/data/interaction-sessions/`` (``$SWE_TASKFLOW_SHARED/data/...`` when set), labelled by the
default (embedded) classifier, with at most ``cap`` sessions per repository (seeded draw) so a few
repositories do not dominate. Only aggregate vectors are written. It is provisional: a public corpus stands
in for a production target, as the paper's Appendix C allows when stated explicitly.

    python -m tools.default_target [--sessions PATH] [--out PATH] [--cap 20] [--seed 0]
                                              [--classifier embedded] [--date YYYY-MM-DD] [--name NAME]
                                              [--confusion C.json] [--bootstrap N]

``--confusion C.json`` writes the *corrected* target instead (``flow measure --confusion``, docs/flow.md): C is the
same classifier's confusion matrix on held-out labels (``classify agreement READER.jsonl CLASSIFIER.jsonl --json
C.json``); its name and file then default to ``specstory-long-v2-corrected``. ``--bootstrap N`` stores share
intervals (sessions, and with ``--confusion`` the matrix too, resampled; seeded by ``--seed``).

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
DEFAULT_NAME = "specstory-long-v2"
DEFAULT_OUT = ROOT / "swe_taskflow" / "data" / "targets" / f"{DEFAULT_NAME}.json"

PROVISIONAL_NOTE = ("Provisional target: a public corpus (SpecStory session exports committed to public GitHub "
                    "repositories) stands in for a production target, as the paper's Appendix C allows when "
                    "stated explicitly. Replace it with your product's measured Task Flow.")


def build_default_target(sessions: Path = DEFAULT_SESSIONS, *, cap: int = 20, seed: int = 0,
                         min_messages: int = 3, classifier: str = "embedded", date: str | None = None,
                         name: str = DEFAULT_NAME, cache: bool = True, confusion: Path | None = None,
                         bootstrap: int = 0):
    """Classify, cap, count, correct if given a confusion file (the algorithm of ``flow measure``); returns the
    :class:`swe_taskflow.target.Target`."""
    from swe_taskflow.confusion import load_confusion
    from swe_taskflow.target import Target

    from builder.flow_measure import Labelling, measure_file, target_counts

    conf = load_confusion(confusion) if confusion is not None else None
    m = measure_file(str(sessions), min_messages=min_messages, cap_per_repo=cap, seed=seed, skip_empty=True,
                     labelling=Labelling(classifier, "auto", cache))
    counts, extra = target_counts(m, confusion=conf, bootstrap=bootstrap, seed=seed)
    capped = m.table
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
        description=PROVISIONAL_NOTE + " Recreate with: python -m tools.default_target"
        + (" --confusion C.json (corrected for the classifier's errors: see correction)" if conf else ""),
        **extra)


def main(argv: list[str] | None = None) -> int:
    from builder.cli import argtypes

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=Path, default=DEFAULT_SESSIONS)
    ap.add_argument("--out", type=Path, default=None, help="default: swe_taskflow/data/targets/NAME.json")
    ap.add_argument("--cap", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--classifier", default="embedded")
    ap.add_argument("--date", default=None, help="measurement date to record (default: today)")
    ap.add_argument("--name", default=None,
                    help="the target's name (default: specstory-long-v2, or specstory-long-v2-corrected with --confusion)")
    ap.add_argument("--confusion", type=Path, default=None, metavar="C.json",
                    help="write the target corrected for the classifier's errors by this confusion matrix")
    ap.add_argument("--bootstrap", type=argtypes.resamples, default=0, metavar="N",
                    help="store intervals of the intent shares from N resamples")
    ap.add_argument("--no-cache", action="store_true")
    args = ap.parse_args(argv)
    check_default(args.sessions, DEFAULT_SESSIONS, "--sessions")
    name = args.name or DEFAULT_NAME + ("-corrected" if args.confusion else "")
    out = args.out or DEFAULT_OUT.with_name(f"{name}.json")
    target = build_default_target(args.sessions, cap=args.cap, seed=args.seed, classifier=args.classifier,
                                  date=args.date, name=name, cache=not args.no_cache, confusion=args.confusion,
                                  bootstrap=args.bootstrap)
    target.save(out)
    ss = target.sample_size
    print(f"wrote {out}{' (corrected)' if target.corrected else ''}: {ss.get('sessions')} sessions, {ss.get('messages')} messages "
          f"({ss.get('retained_messages')} retained), classifier {target.classifier.get('name')} "
          f"{target.classifier.get('version')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main, "default_target"))
