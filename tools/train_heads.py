"""Fit the embedded classifier's two linear heads (``builder/data/classifier/heads_v2.json``) on development data.

- General head: multinomial logistic regression over the similarity, cue and form features and the MiniLM
  embedding (:data:`.embedded.GENERAL_BLOCKS`) of the development hand labels
  (``tests/data/dev_labels_v{1,2,3,4}.jsonl``, texts looked up in ``../shared``; messages a rule answers
  stay in: keeping them measured slightly better on every left-out file) plus the hand-written exemplars
  (each left out of its own neighbours, weight ``EXEMPLAR_WEIGHT``).
- Issue head: logistic regression over issue cues and title/opening embeddings (:mod:`.issue`) of the
  development half of SWE-Bench Pro: the hand-labelled ``tests/data/dev_labels_pro_v{1,2}.jsonl`` (random
  samples of the issues that declare no type) and the issues whose declared type (:mod:`.declared`, masked
  from the features) falls in the development half, minus the held-out Pro hand sample
  (``hand_labels_pro_v1.jsonl``: only its keys are read, to leave those issues out). Declared issues are mostly tracker templates, richer
  in bug reports than the rest, so they weigh ``DECLARED_WEIGHT``; then the bug-fix bias is lowered
  until the cross-validated bug-fix count on the hand-labelled sample no longer exceeds its hand count
  (a prior calibrated on development data only).

The held-out samples (``hand_labels_*``, the held-out half of the declared types) are never fitted on.
L-BFGS on fixed data in a fixed order; the only randomness is the seeded shuffle of the issue head's
cross-validation folds (``CV_SEED``): the same inputs give a byte-identical file.
Only aggregate numbers are written (weights and counts), never message text.

    python -m tools.train_heads [--sessions PATH] [--pro-dir DIR] [--out PATH] [--cv]
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import numpy as np

from tools.shared_data import ROOT, check_default, run_main, shared_data

LABELS = ROOT / "tests" / "data"
DEFAULT_SESSIONS = shared_data("interaction-sessions/specstory_sessions.jsonl")
DEFAULT_PRO_DIR = shared_data("swe-bench-pro")
DEV_LABELS = tuple(f"dev_labels_v{v}.jsonl" for v in (1, 2, 3, 4))
PRO_DEV_LABELS = ("dev_labels_pro_v1.jsonl", "dev_labels_pro_v2.jsonl")
#: held-out Pro hand labels: never fitted on, so issues in it are left out of the declared-type pool too
PRO_HELD_OUT = "hand_labels_pro_v1.jsonl"
C_GENERAL, C_ISSUE, EXEMPLAR_WEIGHT, DECLARED_WEIGHT = 10.0, 0.3, 0.3, 0.5
#: 5-fold cross-validation folds of the issue head (fixed shuffle seed)
CV_SEED = 0


def _fit(x: np.ndarray, y: list[str], c: float, weight: np.ndarray | None = None):
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=c, max_iter=5000).fit(x, y, sample_weight=weight)


def _file_facts(path: Path, n: int) -> dict:
    return {"file": path.name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "rows": n}


def general_data(clf, sessions: Path, label_files=DEV_LABELS, label_dir: Path = LABELS):
    """(per-file feature blocks and labels, exemplar blocks and labels, provenance, block widths) for the general
    head."""
    from builder.classify.embedded import GENERAL_BLOCKS
    from tools.dev_labels import load_hand_labels, texts_for
    from builder.classify.rules import rule_label

    files, facts = [], []
    for name in label_files:
        labels = load_hand_labels(label_dir / name)
        texts = texts_for(labels, sessions)
        comp = clf.components(texts)
        files.append((name, np.hstack([comp[b] for b in GENERAL_BLOCKS]), [x.intent for x in labels],
                      [rule_label(t) for t in texts]))
        facts.append(_file_facts(label_dir / name, len(labels)))
    ex = clf.exemplar_components()
    ex_x = np.hstack([ex[b] for b in GENERAL_BLOCKS])
    return files, (ex_x, list(clf.exemplars.intents)), facts, tuple((b, ex[b].shape[1]) for b in GENERAL_BLOCKS)


def issue_data(clf, pro_dir: Path, label_dir: Path = LABELS):
    """(features, labels, provenance) of the development half of SWE-Bench Pro for the issue head."""
    from builder.sources import load_tasks

    from builder.classify.declared import declared_type
    from tools.dev_labels import is_dev_half, specificity_type
    from tools.dev_labels import load_hand_labels

    tasks = [t for t in load_tasks(str(pro_dir / "swe_bench_pro_public_731.jsonl")).tasks if t.status == "ok"]
    with open(pro_dir / "hf_schema_sample_100.jsonl", encoding="utf-8") as fh:
        spec = {r["instance_id"]: specificity_type(r["issue_specificity"]) for r in map(json.loads, fh)}
    hand = {x.session_id: x.intent for name in PRO_DEV_LABELS for x in load_hand_labels(label_dir / name)}
    held_out = {x.session_id for x in load_hand_labels(label_dir / PRO_HELD_OUT)}
    rows, n_declared = [], 0
    for t in tasks:
        if t.instance_id in hand:
            rows.append((t.original_prompt, hand[t.instance_id], True))
            continue
        y = declared_type(t.problem_statement) or spec.get(t.instance_id)
        if y is not None and is_dev_half(t.instance_id) and t.instance_id not in held_out:
            rows.append((t.original_prompt, y, False))
            n_declared += 1
    x = clf.issue_features([p for p, _, _ in rows])
    facts = {"hand": [_file_facts(label_dir / name, len(load_hand_labels(label_dir / name))) for name in PRO_DEV_LABELS],
             "declared_dev_half": n_declared,
             "tasks_file_sha256": hashlib.sha256((pro_dir / "swe_bench_pro_public_731.jsonl").read_bytes()).hexdigest()}
    return x, [y for _, y, _ in rows], np.array([h for _, _, h in rows]), facts


def _issue_cv_log_proba(x: np.ndarray, y: list[str], weight: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Out-of-fold log-probabilities of the issue head (5 fixed folds, stratified on bug-fix vs the rest)."""
    from sklearn.model_selection import StratifiedKFold

    ya = np.array(y)
    classes = sorted(set(y))
    out = np.zeros((len(y), len(classes)))
    for tr, te in StratifiedKFold(5, shuffle=True, random_state=CV_SEED).split(x, ya == "bug-fix"):
        m = _fit(x[tr], list(ya[tr]), C_ISSUE, weight[tr])
        out[np.ix_(te, [classes.index(c) for c in m.classes_])] = m.predict_log_proba(x[te])
    return out, classes


def calibrate_bug_fix(cv_lp: np.ndarray, classes: list[str], y: list[str], hand: np.ndarray) -> float:
    """The smallest bias (grid of 0.05) to subtract from bug-fix so that the out-of-fold bug-fix count on the
    hand-labelled rows does not exceed their hand count."""
    ya, j = np.array(y), classes.index("bug-fix")
    for step in range(41):
        lp = cv_lp.copy()
        lp[:, j] -= 0.05 * step
        pred = np.array(classes)[lp.argmax(1)]
        if (pred[hand] == "bug-fix").sum() <= (ya[hand] == "bug-fix").sum():
            return round(0.05 * step, 2)
    return 2.0


def cross_validate(files, exemplars, issue_x, issue_y, hand, bias) -> dict:
    """Leave-one-label-file-out exact agreement of the classifier (rules + general head) on each development file;
    5-fold (fixed folds) accuracy of the issue head."""
    out = {}
    ex_x, ex_y = exemplars
    for k, (name, x_hold, y_hold, rules) in enumerate(files):
        rest = [f for j, f in enumerate(files) if j != k]
        x = np.vstack([f[1] for f in rest] + [ex_x])
        y = [lab for f in rest for lab in f[2]] + ex_y
        w = np.r_[np.ones(len(y) - len(ex_y)), np.full(len(ex_y), EXEMPLAR_WEIGHT)]
        pred = [r or p for r, p in zip(rules, _fit(x, y, C_GENERAL, w).predict(x_hold))]
        out[name] = round(float(np.mean(np.array(pred) == np.array(y_hold))), 3)
    lp, classes = _issue_cv_log_proba(issue_x, issue_y, np.where(hand, 1.0, DECLARED_WEIGHT))
    lp[:, classes.index("bug-fix")] -= bias
    pred, y = np.array(classes)[lp.argmax(1)], np.array(issue_y)
    out["issue 5-fold (hand-labelled)"] = round(float(np.mean(pred[hand] == y[hand])), 3)
    out["issue 5-fold (declared)"] = round(float(np.mean(pred[~hand] == y[~hand])), 3)
    return out


def train(sessions: Path = DEFAULT_SESSIONS, pro_dir: Path = DEFAULT_PRO_DIR, out: Path | None = None,
          cv: bool = False) -> dict:
    import sklearn

    from builder.classify.embedded import EmbeddedClassifier
    from builder.classify.embedded import DEFAULT_HEADS, LinearHead
    from tools.dev_labels import save_heads
    from builder.classify.issue import CUE_NAMES

    clf = EmbeddedClassifier(heads_path=None)
    files, (ex_x, ex_y), facts, widths = general_data(clf, sessions)
    x = np.vstack([f[1] for f in files] + [ex_x])
    y = [lab for f in files for lab in f[2]] + ex_y
    w = np.r_[np.ones(len(y) - len(ex_y)), np.full(len(ex_y), EXEMPLAR_WEIGHT)]
    gen = _fit(x, y, C_GENERAL, w)
    general = LinearHead(tuple(gen.classes_), widths, gen.coef_, gen.intercept_)
    ix, iy, hand, ifacts = issue_data(clf, pro_dir)
    iw = np.where(hand, 1.0, DECLARED_WEIGHT)
    bias = calibrate_bug_fix(*_issue_cv_log_proba(ix, iy, iw), iy, hand)
    iss = _fit(ix, iy, C_ISSUE, iw)
    intercept = iss.intercept_.copy()
    intercept[list(iss.classes_).index("bug-fix")] -= bias
    dim = (ix.shape[1] - len(CUE_NAMES)) // 2
    issue = LinearHead(tuple(iss.classes_), (("cues", len(CUE_NAMES)), ("title_emb", dim), ("body_emb", dim)),
                       iss.coef_, intercept)
    training = {"general": {"label_files": facts, "exemplars": len(ex_y), "exemplars_sha256": clf.exemplars.sha256,
                            "exemplar_weight": EXEMPLAR_WEIGHT, "C": C_GENERAL,
                            "rows": len(y)},
                "issue": {**ifacts, "C": C_ISSUE, "rows": len(iy), "declared_weight": DECLARED_WEIGHT,
                          "bug_fix_bias": bias, "cv_seed": CV_SEED,
                          "classes": dict(sorted((c, iy.count(c)) for c in set(iy)))},
                "fit": f"sklearn {sklearn.__version__} LogisticRegression(lbfgs, max_iter=5000)",
                "never_fitted_on": "tests/data/hand_labels_* (SpecStory v1-v3, Pro v1) and the held-out half of the "
                                   "declared issue types"}
    save_heads(out or DEFAULT_HEADS, general, issue, training)
    report = {"general_rows": len(y), "issue_rows": len(iy), "bug_fix_bias": bias}
    if cv:
        report["cv"] = cross_validate(files, (ex_x, ex_y), ix, iy, hand, bias)
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=Path, default=DEFAULT_SESSIONS)
    ap.add_argument("--pro-dir", type=Path, default=DEFAULT_PRO_DIR)
    ap.add_argument("--out", type=Path, default=None, help="default: builder/data/classifier/heads_v2.json")
    ap.add_argument("--cv", action="store_true", help="also print cross-validated accuracy on the development data")
    args = ap.parse_args(argv)
    check_default(args.sessions, DEFAULT_SESSIONS, "--sessions")
    check_default(args.pro_dir, DEFAULT_PRO_DIR, "--pro-dir")
    print(json.dumps(train(args.sessions, args.pro_dir, args.out, args.cv), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main, "train_heads"))
