"""Exact agreement of classifiers with the hand labels (held-out SpecStory sessions), plus Cohen's kappa.

    python benchmarks/hand_label_agreement.py [--classifier embedded --classifier zero-shot ...]
                                              [--labels tests/data/hand_labels_v1.jsonl ...] [--confusion]

Default label files: the three held-out samples, never used for exemplars or tuning:
tests/data/hand_labels_v1.jsonl (sessions whose sha256(session_id) hex ends in 0-2),
tests/data/hand_labels_v2.jsonl (hex ends in d-f, drawn later from sessions in no earlier label file) and
tests/data/hand_labels_v3.jsonl (hex 0-2 or d-f, in no earlier label file; issue 15's fresh sample).
tests/data/dev_labels_v{1,2,3,4}.jsonl are the tuning samples (pass them with --labels to see dev figures).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from builder.classify import label_texts, load_classifier  # noqa: E402
from tools.dev_labels import load_hand_labels, texts_for  # noqa: E402
from swe_taskflow.agreement import cohen_kappa, confusion, exact_agreement, format_confusion  # noqa: E402
from tools.shared_data import check_default, run_main, shared_data  # noqa: E402

DEFAULT_SESSIONS = shared_data("interaction-sessions/specstory_sessions.jsonl")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--classifier", action="append", help="name or model folder (repeatable)")
    ap.add_argument("--labels", type=Path, action="append",
                    help="hand-label file (repeatable; default: tests/data/hand_labels_v1.jsonl, _v2 and _v3)")
    ap.add_argument("--sessions", type=Path, default=DEFAULT_SESSIONS)
    ap.add_argument("--confusion", action="store_true", help="print the confusion table (rows: hand)")
    ap.add_argument("--write-sessions", type=Path, metavar="OUT.jsonl",
                    help="also write the sample as a sessions file (one message per session, hand intents) for "
                         "`swe-taskflow classify` / `classify agreement`; it holds corpus text: keep it local")
    args = ap.parse_args()
    check_default(args.sessions, DEFAULT_SESSIONS, "--sessions")
    label_files = args.labels or [ROOT / "tests" / "data" / f"hand_labels_v{v}.jsonl" for v in (1, 2, 3)]
    samples = []
    for path in label_files:
        labels = load_hand_labels(path)
        samples.append((path, labels, texts_for(labels, args.sessions)))
    if args.write_sessions:
        from swe_taskflow.jsonl import write_jsonl

        write_jsonl(args.write_sessions, ({"session_id": f"{x.session_id}#{x.index}",
                                           "messages": [{"text": t, "intent": x.intent}]}
                                          for _, labels, texts in samples for x, t in zip(labels, texts)))
    classifiers = [(name, load_classifier(name)) for name in args.classifier or ["embedded", "zero-shot"]]
    for path, labels, texts in samples:
        gold = [x.intent for x in labels]
        print(f"{len(gold)} hand-labelled messages from {len({x.session_id for x in labels})} sessions ({path.name})")
        for name, clf in classifiers:
            t0 = time.perf_counter()
            pred = [p.intent for p in label_texts(texts, clf, cache=False)]
            dt = time.perf_counter() - t0
            print(f"{name:>12}: exact agreement {exact_agreement(gold, pred):.3f}  "
                  f"kappa {cohen_kappa(gold, pred):.3f}  ({dt:.1f} s, version {clf.info['version']})")
            if args.confusion:
                print(format_confusion(confusion(gold, pred)))


if __name__ == "__main__":
    raise SystemExit(run_main(main, "hand_label_agreement"))
