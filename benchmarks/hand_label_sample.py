"""Draw the hand-label sample (seeded) from held-out SpecStory sessions and print it for a human labeller.

Held-out sessions: sha256(session_id) hex ends in 0, 1 or 2 (v1) or in d, e or f (v2, drawn after v1 had been
looked at, from sessions in no earlier label file); v3 (issue 15) draws from the sessions of either held-out
suffix set that are in no label file at all, before any classifier ran on it. They are never used to write exemplars or to tune the
embedded classifier. The printed texts stay on the labeller's screen: only
``{session_id, index, intent, labeler}`` rows go into ``tests/data/hand_labels_v{1,2}.jsonl``.

    python benchmarks/hand_label_sample.py [--n 130] [--seed 8] [--sessions PATH]
    python benchmarks/hand_label_sample.py --heldout v2 --n 100 --seed 29   # tests/data/hand_labels_v2.jsonl
    python benchmarks/hand_label_sample.py --dev --n 120 --seed 31          # tests/data/dev_labels_v2.jsonl
    python benchmarks/hand_label_sample.py --dev --n 80 --seed 47 --exclude tests/data/hand_labels_v1.jsonl \
        --exclude tests/data/dev_labels_v1.jsonl --exclude tests/data/hand_labels_v2.jsonl \
        --exclude tests/data/dev_labels_v2.jsonl                            # tests/data/dev_labels_v3.jsonl
    python benchmarks/hand_label_sample.py --heldout v3 --n 170 --seed 53  # tests/data/hand_labels_v3.jsonl
    python benchmarks/hand_label_sample.py --dev --n 200 --seed 97 --exclude tests/data/hand_labels_v1.jsonl \
        --exclude tests/data/hand_labels_v2.jsonl --exclude tests/data/hand_labels_v3.jsonl \
        --exclude tests/data/dev_labels_v1.jsonl --exclude tests/data/dev_labels_v2.jsonl \
        --exclude tests/data/dev_labels_v3.jsonl                            # tests/data/dev_labels_v4.jsonl
    python benchmarks/hand_label_sample.py --pro --n 80 --seed 71          # tests/data/hand_labels_pro_v1.jsonl
    python benchmarks/hand_label_sample.py --pro --dev --n 80 --seed 83    # tests/data/dev_labels_pro_v1.jsonl
    python benchmarks/hand_label_sample.py --pro --dev --n 100 --seed 89 \
        --exclude tests/data/dev_labels_pro_v1.jsonl                        # tests/data/dev_labels_pro_v2.jsonl

``--pro`` draws SWE-Bench Pro issue texts (the prompt the build classifies) from the tasks outside the
100-row Hugging Face export (whose ``issue_specificity`` is a development signal); their rows carry the
instance id as ``session_id`` and index 0. ``--pro --dev`` draws the tuning sample from the rest, leaving out
the held-out Pro sample and every issue that declares its own type (that signal is measured separately).

``--dev`` draws from sessions in neither held-out set (hex suffix 3-c); tests/data/dev_labels_v1.jsonl was
drawn before v2 existed, from every non-v1 session.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from swe_taskflow.errors import InputError  # noqa: E402
from tools.shared_data import check_default, run_main, shared_data  # noqa: E402

DEFAULT_SESSIONS = shared_data("interaction-sessions/specstory_sessions.jsonl")
PRO_DIR = shared_data("swe-bench-pro")
HELD_OUT_SUFFIXES = "012"
#: second held-out set: sessions whose sha256 hex ends in one of these (and in no earlier label file)
HELD_OUT_V2_SUFFIXES = "def"
#: third held-out set: any held-out session (v1 or v2 suffix) in no label file
HELD_OUT_V3_SUFFIXES = HELD_OUT_SUFFIXES + HELD_OUT_V2_SUFFIXES
LABEL_DIR = ROOT / "tests" / "data"
#: label files whose sessions a new sample leaves out by default (those that existed when v2 was drawn)
DEFAULT_EXCLUDE = (LABEL_DIR / "hand_labels_v1.jsonl", LABEL_DIR / "dev_labels_v1.jsonl")
#: every label file that existed when v3 was drawn
V3_EXCLUDE = tuple(LABEL_DIR / f for f in ("hand_labels_v1.jsonl", "hand_labels_v2.jsonl", "dev_labels_v1.jsonl",
                                          "dev_labels_v2.jsonl", "dev_labels_v3.jsonl"))


def is_held_out(session_id: str, suffixes: str = HELD_OUT_SUFFIXES) -> bool:
    return hashlib.sha256(session_id.encode("utf-8")).hexdigest()[-1] in suffixes


def labelled_sessions(label_files: list[Path]) -> set[str]:
    """Session ids already present in any of ``label_files`` (they must not enter a new held-out sample)."""
    out: set[str] = set()
    for path in label_files:
        with open(path, encoding="utf-8") as fh:
            out.update(json.loads(line)["session_id"] for line in fh if line.strip())
    return out


def sample_keys(sessions_path: Path, n: int = 130, seed: int = 8, *, dev: bool = False,
                heldout: str = "v1", exclude: set[str] | None = None) -> list[tuple[str, int, str]]:
    """(session_id, message index, text) of ``n`` messages drawn uniformly from held-out sessions
    (``dev=True``: from the sessions of neither held-out set, the development sample used for tuning).
    ``heldout="v2"``: the second held-out set (hex suffix d-f); ``"v3"``: either held-out suffix set;
    ``exclude``: session ids left out."""
    suffixes = {"v1": HELD_OUT_SUFFIXES, "v2": HELD_OUT_V2_SUFFIXES, "v3": HELD_OUT_V3_SUFFIXES}[heldout]
    exclude = exclude or set()
    pool = []
    with open(sessions_path, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            sid = rec["session_id"]
            if sid in exclude:
                continue
            if dev:
                keep = not is_held_out(sid) and not is_held_out(sid, HELD_OUT_V2_SUFFIXES)
            else:
                keep = is_held_out(sid, suffixes)
            if keep:
                pool.extend((sid, m["index"], m["text"]) for m in rec["user_messages"])
    pool.sort(key=lambda x: (x[0], x[1]))
    rng = np.random.default_rng(seed)
    picks = rng.choice(len(pool), size=min(n, len(pool)), replace=False)
    return [pool[i] for i in sorted(picks)]


def sample_pro(n: int, seed: int, pro_dir: Path = PRO_DIR, *, dev: bool = False,
               exclude_files: tuple[Path, ...] = ()) -> list[tuple[str, int, str]]:
    """(instance_id, 0, issue text) of ``n`` Pro tasks outside the 100-row HF export, drawn with a seeded rng;
    ``dev``: also outside the held-out Pro sample (and ``exclude_files``) and without a declared type."""
    with open(pro_dir / "hf_schema_sample_100.jsonl", encoding="utf-8") as fh:
        skip = {json.loads(line)["instance_id"] for line in fh if line.strip()}
    if dev:
        import sys

        sys.path.insert(0, str(ROOT))
        from builder.classify.declared import declared_type

        skip |= labelled_sessions([f for f in (LABEL_DIR / "hand_labels_pro_v1.jsonl", *exclude_files) if f.is_file()])
    with open(pro_dir / "swe_bench_pro_public_731.jsonl", encoding="utf-8") as fh:
        pool = sorted((r["instance_id"], 0, r["problem_statement"]) for r in map(json.loads, fh)
                      if r["instance_id"] not in skip and not (dev and declared_type(r["problem_statement"])))
    picks = np.random.default_rng(seed).choice(len(pool), size=min(n, len(pool)), replace=False)
    return [pool[i] for i in sorted(picks)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=130)
    ap.add_argument("--seed", type=int, default=8)
    ap.add_argument("--sessions", type=Path, default=DEFAULT_SESSIONS)
    ap.add_argument("--dev", action="store_true", help="sample the tuning (non-held-out) sessions instead")
    ap.add_argument("--heldout", choices=["v1", "v2", "v3"], default="v1",
                    help="v2: the second held-out set (sha256 hex ends in d-f), minus the sessions of --exclude; "
                         "v3: either held-out suffix set minus the sessions of every earlier label file")
    ap.add_argument("--exclude", type=Path, action="append", metavar="LABELS.jsonl",
                    help="leave out the sessions of this label file (repeatable; default with --heldout v2 or --dev: "
                         "tests/data/hand_labels_v1.jsonl and tests/data/dev_labels_v1.jsonl)")
    ap.add_argument("--pro", action="store_true", help="sample SWE-Bench Pro issue texts instead (see above)")
    ap.add_argument("--chars", type=int, default=700, help="head chars shown (plus a 200-char tail)")
    args = ap.parse_args()
    if args.pro:
        for name in ("hf_schema_sample_100.jsonl", "swe_bench_pro_public_731.jsonl"):
            if not (PRO_DIR / name).is_file():
                raise InputError("file not found in the shared data folder", path=str(PRO_DIR / name),
                                 hint="Set SWE_TASKFLOW_SHARED to the folder that holds data/")
    else:
        check_default(args.sessions, DEFAULT_SESSIONS, "--sessions")
    exclude: set[str] = set()
    if args.heldout == "v3":
        exclude = labelled_sessions(args.exclude or list(V3_EXCLUDE))
    elif args.heldout == "v2" or args.dev:
        exclude = labelled_sessions(args.exclude or list(DEFAULT_EXCLUDE))
    if args.pro:
        keys = sample_pro(args.n, args.seed, dev=args.dev, exclude_files=tuple(args.exclude or ()))
    else:
        keys = sample_keys(args.sessions, args.n, args.seed, dev=args.dev, heldout=args.heldout, exclude=exclude)
    for k, (sid, idx, text) in enumerate(keys):
        shown = text if len(text) <= args.chars + 200 else text[:args.chars] + "\n[...]\n" + text[-200:]
        print(f"=== #{k} {sid} {idx} ({len(text)} chars)\n{shown}\n")


if __name__ == "__main__":
    raise SystemExit(run_main(main, "hand_label_sample"))
