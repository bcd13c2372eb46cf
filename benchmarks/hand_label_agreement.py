"""How far the classifiers are from careful readers: the grouped cross-validation figure (the number to trust),
held-out hand labels, a fresh held-out file, and reader against reader.

    python benchmarks/hand_label_agreement.py [--classifier embedded --classifier zero-shot ...]
        [--labels tests/data/hand_labels_v1.jsonl ...] [--fresh FILE] [--second-reader FILE] [--cv] [--confusion]

1. Grouped cross-validation (development labels, every repository scored by heads fitted without it;
   tools/grouped_cv.py): the figure recorded in the shipped heads file when it was fitted, or, with ``--cv``,
   recomputed now (it re-fits the general head five times on this machine's features).
2. Held-out hand labels: by default tests/data/hand_labels_v1.jsonl, _v2 and _v3 (never used for exemplars or
   fitting; the rows that cover a reserved message are gone from them). ``--fresh FILE`` adds a label file of the
   careful readers' shape, scored on all its rows and on those read with high or medium confidence.
3. ``--second-reader FILE``: a blind second reading of messages the committed label files (and ``--fresh``)
   already label: exact agreement and kappa of reader against reader on their common messages.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from builder.classify import label_texts, load_classifier  # noqa: E402
from swe_taskflow.agreement import cohen_kappa, confusion, exact_agreement, format_confusion  # noqa: E402
from tools.dev_labels import load_hand_labels, paired_readings, texts_for  # noqa: E402
from tools.grouped_cv import CONFIDENT  # noqa: E402
from tools.shared_data import check_default, run_main, shared_data  # noqa: E402

DEFAULT_SESSIONS = shared_data("interaction-sessions/specstory_sessions.jsonl")
DATA = ROOT / "tests" / "data"


def _line(gold: list[str], pred: list[str]) -> str:
    return f"exact agreement {exact_agreement(gold, pred):.3f}  kappa {cohen_kappa(gold, pred):.3f}  (n={len(gold)})"


def grouped_cv_section(recompute: bool, sessions: Path) -> None:
    from builder.classify.embedded import load_heads

    print("== grouped cross-validation, development labels (the number to trust) ==")
    if recompute:
        from builder.classify.embedded import EmbeddedClassifier
        from tools.train_heads import DEFAULT_RESERVED, GENERAL, general_data, grouped_cv

        clf = EmbeddedClassifier(heads_path=None)
        cv = grouped_cv(general_data(clf, sessions, DEFAULT_RESERVED, load_heads().issue), GENERAL)
        where = "recomputed now"
    else:
        cv = load_heads().training.get("general", {}).get("grouped_cv")
        where = "recorded in the shipped heads file (--cv recomputes)"
        if cv is None:
            print("  the shipped heads file records none: run with --cv")
            return
    order = ("all", "high+medium", "high", "medium", "low", "unrated")
    cells = "  ".join(f"{k} {cv[k]['exact']:.3f} (n={cv[k]['n']})" for k in order if k in cv)
    print(f"    embedded: {cells}  [{cv['folds']} folds by {cv['grouped_by']}, {where}]")


def second_reader_section(path: Path, first_files: list[Path]) -> None:
    first = [lab for f in first_files for lab in load_hand_labels(f)]
    pairs = paired_readings(first, load_hand_labels(path))
    print(f"== reader against reader: {path.name} against the first readings ({len(pairs)} common messages) ==")
    if not pairs:
        return
    sure = [(a, b) for a, b in pairs if a.confidence in CONFIDENT and b.confidence in CONFIDENT]
    for name, rows in (("all", pairs), ("both high+medium", sure)):
        if rows:
            print(f"  {name:>16}: " + _line([a.intent for a, _ in rows], [b.intent for _, b in rows]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--classifier", action="append", help="name or model folder (repeatable)")
    ap.add_argument("--labels", type=Path, action="append",
                    help="hand-label file (repeatable; default: tests/data/hand_labels_v1.jsonl, _v2 and _v3)")
    ap.add_argument("--fresh", type=Path, help="a fresh held-out label file (careful readers' rows)")
    ap.add_argument("--second-reader", type=Path, metavar="FILE",
                    help="a blind second reading: agreement with the first readings on the common messages")
    ap.add_argument("--cv", action="store_true", help="recompute the grouped cross-validation figure")
    ap.add_argument("--sessions", type=Path, default=DEFAULT_SESSIONS)
    ap.add_argument("--confusion", action="store_true", help="print the confusion table (rows: hand)")
    ap.add_argument("--write-sessions", type=Path, metavar="OUT.jsonl",
                    help="also write the sample as a sessions file (one message per session, hand intents) for "
                         "`swe-taskflow classify` / `classify agreement`; it holds corpus text: keep it local")
    args = ap.parse_args()
    check_default(args.sessions, DEFAULT_SESSIONS, "--sessions")
    label_files = args.labels or [DATA / f"hand_labels_v{v}.jsonl" for v in (1, 2, 3)]
    if args.fresh:
        label_files = [*label_files, args.fresh]
    samples = []
    for path in label_files:
        labels = load_hand_labels(path)
        samples.append((path, labels, texts_for(labels, args.sessions)))
    if args.write_sessions:
        from swe_taskflow.jsonl import write_jsonl

        write_jsonl(args.write_sessions, ({"session_id": f"{x.session_id}#{x.index}",
                                           "messages": [{"text": t, "intent": x.intent}]}
                                          for _, labels, texts in samples for x, t in zip(labels, texts)))
    names = args.classifier or ["embedded", "zero-shot"]
    if "embedded" in names:
        grouped_cv_section(args.cv, args.sessions)
    print("== held-out labels ==")
    classifiers = [(name, load_classifier(name)) for name in names]
    for path, labels, texts in samples:
        print(f"{len(labels)} labelled messages from {len({x.session_id for x in labels})} sessions ({path.name})")
        subsets = [("all", list(range(len(labels))))]
        sure = [i for i, x in enumerate(labels) if x.confidence in CONFIDENT]
        if sure:
            subsets.append(("high+medium", sure))
        for name, clf in classifiers:
            t0 = time.perf_counter()
            pred = [p.intent for p in label_texts(texts, clf, cache=False)]
            dt = time.perf_counter() - t0
            for subset, idx in subsets:
                gold_s, pred_s = [labels[i].intent for i in idx], [pred[i] for i in idx]
                print(f"{name:>12} {subset:>11}: " + _line(gold_s, pred_s)
                      + (f"  ({dt:.1f} s, version {clf.info['version']})" if subset == "all" else ""))
            if args.confusion:
                print(format_confusion(confusion([x.intent for x in labels], pred)))
    if args.second_reader:
        firsts = sorted(DATA.glob("*labels_v*.jsonl")) + ([args.fresh] if args.fresh else [])
        second_reader_section(args.second_reader, [f for f in firsts if f.resolve() != args.second_reader.resolve()])


if __name__ == "__main__":
    raise SystemExit(run_main(main, "hand_label_agreement"))
