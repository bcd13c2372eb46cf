"""How close the project's defaults come to the paper, section by section (needs ``../shared``).

    python benchmarks/paper_fidelity.py [--section intents --section agreement ...] [--classifier embedded ...]

Sections (all by default):
- ``intents``: the 731 SWE-Bench Pro prompts classified (the build's ``classify_prompts`` input) beside the
  paper's shares (new-feature 54.7%, bug-fix 39.1%; Section 1 / Figure 1), with two independent readings:
  hand labels of a random held-out sample and SWE-Bench Pro's own ``issue_specificity`` tags (100-row export);
  then the accuracy against the types issues declare about themselves (``Labels: bug``, a ``Feature
  Request`` template...; :mod:`builder.classify.declared`), on the held-out half and, for reference, the
  development half the issue head was fitted on, and against the held-out Pro hand labels.
- ``agreement``: exact agreement and Cohen's kappa with the SpecStory hand labels v1 and v2 (held out, seen
  before) and v3 (fresh, labelled before the classifier was changed, measured once).

Each section is one function taking the parsed arguments; add a section by adding it to ``SECTIONS``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SHARED = ROOT.parent / "shared" / "data"
PRO = SHARED / "swe-bench-pro"
SESSIONS = SHARED / "interaction-sessions" / "specstory_sessions.jsonl"
LABELS = ROOT / "tests" / "data"
#: SWE-Bench Pro prompt intents in the paper (Section 1, "labels from Section 2")
PAPER_SHARES = {"new-feature": 0.547, "bug-fix": 0.391}
#: how close the issue asks the 731-prompt shares to be (percentage points)
SHARE_TOLERANCE = 0.05


def _classifiers(args):
    from builder.classify import load_classifier

    return [(name, load_classifier(name)) for name in args.classifier]


def _pct(x: float) -> str:
    return f"{100 * x:5.1f}%"


def _shares(labels: list[str]) -> dict[str, float]:
    c = Counter(labels)
    out = {k: c[k] / len(labels) for k in ("new-feature", "bug-fix")}
    out["other"] = 1.0 - sum(out.values())
    return out


def intents(args) -> None:
    """731 Pro prompt shares beside the paper's; accuracy on declared types and held-out Pro hand labels."""
    from builder.classify import label_texts
    from builder.classify.declared import declared_type, is_dev_half, specificity_type
    from builder.classify.handlabels import load_hand_labels
    from builder.sources import load_tasks

    tasks = [t for t in load_tasks(str(PRO / "swe_bench_pro_public_731.jsonl")).tasks if t.status == "ok"]
    with open(PRO / "hf_schema_sample_100.jsonl", encoding="utf-8") as fh:
        hf = {r["instance_id"]: json.loads(r["issue_specificity"]) for r in map(json.loads, fh)}
    declared = {t.instance_id: declared_type(t.problem_statement) or
                (specificity_type(hf[t.instance_id]) if t.instance_id in hf else None) for t in tasks}
    hand = {x.session_id: x.intent for x in load_hand_labels(LABELS / "hand_labels_pro_v1.jsonl")}

    print(f"== SWE-Bench Pro prompt intents ({len(tasks)} tasks) ==")
    rows = [("paper (Gemma 4-31B, Appendix A prompt)", PAPER_SHARES | {"other": 1 - sum(PAPER_SHARES.values())})]
    hand_labels = [hand[t.instance_id] for t in tasks if t.instance_id in hand]
    rows.append((f"hand labels, held-out random sample (n={len(hand_labels)})", _shares(hand_labels)))
    kinds = Counter(frozenset(tag.rsplit("_", 1)[-1] for tag in tags) for tags in hf.values())
    feat = sum(v for k, v in kinds.items() if "feat" in k or k == frozenset({"enh"}))
    bug = sum(v for k, v in kinds.items() if "bug" in k and "feat" not in k)
    rows.append((f"SWE-Bench Pro issue_specificity (n={len(hf)}; enh->new-feature)",
                 {"new-feature": feat / len(hf), "bug-fix": bug / len(hf), "other": 1 - (feat + bug) / len(hf)}))
    preds = {}
    for name, clf in _classifiers(args):
        t0 = time.perf_counter()
        preds[name] = [p.intent for p in label_texts([t.original_prompt for t in tasks], clf, cache=False)]
        dt = time.perf_counter() - t0
        rows.append((f"{name} ({len(tasks) / dt:.0f} prompts/s)", _shares(preds[name])))
    print(f"{'':58s} {'new-feature':>12s} {'bug-fix':>9s} {'other':>7s}")
    for label, s in rows:
        print(f"{label:58s} {_pct(s['new-feature']):>12s} {_pct(s['bug-fix']):>9s} {_pct(s['other']):>7s}")
    for name, p in preds.items():
        s = _shares(p)
        gaps = {k: s[k] - PAPER_SHARES[k] for k in PAPER_SHARES}
        ok = all(abs(g) <= SHARE_TOLERANCE for g in gaps.values())
        print(f"  {name}: new-feature {100 * gaps['new-feature']:+.1f} pt, bug-fix {100 * gaps['bug-fix']:+.1f} pt "
              f"from the paper -> {'within' if ok else 'NOT within'} {100 * SHARE_TOLERANCE:.0f} points; "
              f"others: {dict(Counter(x for x in p if x not in PAPER_SHARES).most_common(4))}")

    print("\n== Accuracy against independent type readings ==")
    index = {t.instance_id: i for i, t in enumerate(tasks)}
    sets = {
        "declared type, held-out half": [(index[k], y) for k, y in declared.items() if y and not is_dev_half(k)],
        "declared type, dev half (issue head fitted on it)": [(index[k], y) for k, y in declared.items()
                                                              if y and is_dev_half(k)],
        "Pro hand labels v1 (held out)": [(index[k], y) for k, y in hand.items()],
    }
    for name, p in preds.items():
        for label, pairs in sets.items():
            hits = sum(p[i] == y for i, y in pairs)
            print(f"  {name:12s} {label:50s} {hits:4d}/{len(pairs):<4d} = {hits / len(pairs):.3f}")
        feat_called_bug = sum(p[i] == "bug-fix" for i, y in sets["declared type, held-out half"] if y == "new-feature")
        n_feat = sum(y == "new-feature" for _, y in sets["declared type, held-out half"])
        print(f"  {name:12s} held-out issues declaring a feature that are called bug-fix: {feat_called_bug}/{n_feat}")


def agreement(args) -> None:
    """Exact agreement and kappa on the SpecStory hand labels v1, v2 (seen before) and v3 (fresh)."""
    from builder.classify import label_texts
    from builder.classify.handlabels import load_hand_labels, texts_for
    from swe_taskflow.agreement import cohen_kappa, exact_agreement

    print("\n== Agreement with SpecStory hand labels ==")
    samples = [("v1", "held out, seen while tuning v1"), ("v2", "held out, seen once before"),
               ("v3", "fresh: labelled before any classifier change")]
    classifiers = _classifiers(args)
    print(f"{'sample':62s} " + " ".join(f"{name + ' exact':>18s} {'kappa':>6s}" for name, _ in classifiers))
    for v, what in samples:
        labels = load_hand_labels(LABELS / f"hand_labels_{v}.jsonl")
        texts = texts_for(labels, SESSIONS)
        gold = [x.intent for x in labels]
        cells = []
        for _, clf in classifiers:
            pred = [p.intent for p in label_texts(texts, clf, cache=False)]
            cells.append(f"{exact_agreement(gold, pred):18.3f} {cohen_kappa(gold, pred):6.3f}")
        print(f"{v} ({len(gold)} msgs, {what})".ljust(62) + " " + " ".join(cells))


SECTIONS = {"intents": intents, "agreement": agreement}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--section", action="append", choices=sorted(SECTIONS), help="repeatable; default: all")
    ap.add_argument("--classifier", action="append",
                    help="classifier name (repeatable; default: embedded and the previous default embedded-v1)")
    args = ap.parse_args(argv)
    args.classifier = args.classifier or ["embedded", "embedded-v1"]
    if not (PRO / "swe_bench_pro_public_731.jsonl").is_file() or not SESSIONS.is_file():
        print(f"paper_fidelity: needs the shared data beside the checkout ({SHARED}); not found", file=sys.stderr)
        return 2
    for name in args.section or list(SECTIONS):
        SECTIONS[name](args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
