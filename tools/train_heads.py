"""Fit the embedded classifier's two linear heads (``builder/data/classifier/heads_v3.json``) on development data.

- General head: multinomial logistic regression over the similarity, cue and form features and the MiniLM
  embedding (:data:`.embedded.GENERAL_BLOCKS`) of the development labels (``tests/data/dev_labels_v*.jsonl``:
  the first hand samples v1-v4 and the careful readers' v5 batches; texts looked up in ``../shared``) less
  the messages that may not be fitted on (:func:`tools.dev_labels.development_set`: reserved texts, held-out
  repositories, second copies of a text), plus the hand-written exemplars (each left out of its own
  neighbours). Every setting (``GENERAL``) is chosen by cross-validation grouped by repository
  (:mod:`tools.grouped_cv`, ``--grid``), whose figure the heads file records.
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
Only aggregate numbers are written (weights, counts and agreement figures), never message text.

    python -m tools.train_heads [--sessions PATH] [--pro-dir DIR] [--reserved PATH] [--out PATH] [--grid]
                                [--confusion-out C.json]

``--confusion-out`` writes the readers' labels against the grouped-CV out-of-fold labels as a confusion file
(``classify agreement --json`` format): what ``python -m tools.default_target --confusion`` corrects by.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from tools.shared_data import ROOT, check_default, run_main, shared_data

LABELS = ROOT / "tests" / "data"
DEFAULT_SESSIONS = shared_data("interaction-sessions/specstory_sessions.jsonl")
DEFAULT_RESERVED = shared_data("interaction-sessions/reserved_messages.sha256")
DEFAULT_PRO_DIR = shared_data("swe-bench-pro")
#: development label files of the general head, in the order their rows are taken (a text labelled twice keeps
#: its first row): the first hand samples, then the careful readers' batches of issue 34
DEV_LABELS = tuple(f"dev_labels_v{v}.jsonl" for v in (1, 2, 3, 4)) + tuple(f"dev_labels_v5_{b}.jsonl"
                                                                             for b in range(1, 7))
PRO_DEV_LABELS = ("dev_labels_pro_v1.jsonl", "dev_labels_pro_v2.jsonl")
#: held-out Pro hand labels: never fitted on, so issues in it are left out of the declared-type pool too
PRO_HELD_OUT = "hand_labels_pro_v1.jsonl"
C_ISSUE, DECLARED_WEIGHT = 0.3, 0.5
#: 5-fold cross-validation folds of the issue head (fixed shuffle seed)
CV_SEED = 0


@dataclass(frozen=True)
class GeneralSettings:
    """How the general head is fitted; chosen by the grouped cross-validation (``--grid``)."""

    c: float = 1.0
    """Inverse L2 strength of the logistic regression."""
    exemplar_weight: float = 0.3
    """Weight of a hand-written exemplar row (a development row weighs 1)."""
    low_weight: float = 1.0
    """Weight of a row its reader gave ``low`` confidence."""


#: the shipped settings: the best high+medium figure of the grouped cross-validation among C = 0.3, 1 and 10
GENERAL = GeneralSettings()
#: the settings ``--grid`` compares
GRID = (*(GeneralSettings(c) for c in (0.3, 1.0, 3.0, 10.0)), GeneralSettings(exemplar_weight=0.0),
        GeneralSettings(exemplar_weight=1.0), GeneralSettings(low_weight=0.0), GeneralSettings(low_weight=0.5))


def _fit(x: np.ndarray, y: list[str], c: float, weight: np.ndarray | None = None):
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=c, max_iter=5000).fit(x, y, sample_weight=weight)


def _file_facts(path: Path, n: int) -> dict:
    return {"file": path.name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "rows": n}


@dataclass(frozen=True)
class GeneralData:
    """The general head's development rows (features and what the classifier decides before the head) and the
    exemplars'."""

    x: np.ndarray
    y: list[str]
    confidence: list[str | None]
    repos: list[str]
    fixed: list[str | None]
    """The label a rule or the issue head gives the row (the head never decides it), else None."""
    ex_x: np.ndarray
    ex_y: list[str]
    facts: dict
    widths: tuple[tuple[str, int], ...]
    seen: list[str]
    """What the model read of each development row (:meth:`.EmbeddedClassifier.seen`)."""

    def rows(self, idx: np.ndarray, settings: GeneralSettings) -> tuple[np.ndarray, list[str], np.ndarray]:
        """Training rows ``idx`` plus the exemplars, with their weights."""
        w = np.array([settings.low_weight if self.confidence[i] == "low" else 1.0 for i in idx])
        return (np.vstack([self.x[idx], self.ex_x]), [self.y[i] for i in idx] + self.ex_y,
                np.r_[w, np.full(len(self.ex_y), settings.exemplar_weight)])


def general_data(clf, sessions: Path, reserved: Path, issue_head, label_files=DEV_LABELS,
                 label_dir: Path = LABELS) -> GeneralData:
    from builder.classify.embedded import GENERAL_BLOCKS
    from builder.classify.issue import is_issue
    from builder.classify.rules import rule_label
    from tools.dev_labels import development_set, load_hand_labels

    paths = [label_dir / name for name in label_files]
    msgs, dropped = development_set(paths, sessions, reserved)
    texts = [m.text for m in msgs]
    seen = clf.seen(texts)
    comp = clf.components(texts)
    fixed = [rule_label(t) for t in texts]
    issues = [i for i, t in enumerate(texts) if fixed[i] is None and is_issue(t)]
    if issues:
        lp = issue_head.log_proba(clf.issue_features([texts[i] for i in issues]))
        for i, k in zip(issues, lp.argmax(1)):
            fixed[i] = issue_head.classes[int(k)]
    ex = clf.exemplar_components()
    facts = {"label_files": [_file_facts(p, len(load_hand_labels(p))) for p in paths], "left_out": dropped,
             "rows": len(msgs), "repositories": len({m.repo for m in msgs})}
    return GeneralData(np.hstack([comp[b] for b in GENERAL_BLOCKS]), [m.intent for m in msgs],
                       [m.confidence for m in msgs], [m.repo for m in msgs], fixed,
                       np.hstack([ex[b] for b in GENERAL_BLOCKS]), list(clf.exemplars.intents), facts,
                       tuple((b, ex[b].shape[1]) for b in GENERAL_BLOCKS), seen)


def grouped_cv(data: GeneralData, settings: GeneralSettings) -> dict:
    """Exact agreement of the classifier (rules, issue head, general head fitted without the scored repositories)
    with the development labels, out of fold (:mod:`tools.grouped_cv`)."""
    return grouped_cv_predictions(data, settings)[0]


def grouped_cv_predictions(data: GeneralData, settings: GeneralSettings) -> tuple[dict, list[str]]:
    """:func:`grouped_cv` and the out-of-fold label of every development row."""
    from tools.grouped_cv import FOLDS, agreement, cross_validate

    def fit_predict(train: np.ndarray, test: np.ndarray) -> list[str]:
        x, y, w = data.rows(train, settings)
        head = _fit(x, y, settings.c, w)
        return [f or p for f, p in zip((data.fixed[i] for i in test), head.predict(data.x[test]))]

    pred = cross_validate(data.repos, fit_predict)
    return {"folds": FOLDS, "grouped_by": "repository", **agreement(data.y, pred, data.confidence)}, pred


def confusion_document(data: GeneralData, pred: list[str]) -> dict:
    """The readers' labels against the out-of-fold labels as a ``classify agreement --json`` document: the
    confusion matrix ``flow measure --confusion`` corrects by, measured only on repositories the scoring head
    was not fitted on."""
    from swe_taskflow.agreement import agreement_document, pairwise

    pairs = pairwise({"dev_labels_v5 (careful readers)": data.y, "embedded, grouped-CV out of fold": pred})
    return agreement_document(pairs, n_messages=len(pred))


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


def issue_cv(issue_x, issue_y, hand, bias) -> dict:
    """5-fold (fixed folds) accuracy of the issue head on the hand-labelled and the declared development issues."""
    lp, classes = _issue_cv_log_proba(issue_x, issue_y, np.where(hand, 1.0, DECLARED_WEIGHT))
    lp[:, classes.index("bug-fix")] -= bias
    pred, y = np.array(classes)[lp.argmax(1)], np.array(issue_y)
    return {"hand-labelled": round(float(np.mean(pred[hand] == y[hand])), 3),
            "declared": round(float(np.mean(pred[~hand] == y[~hand])), 3)}


def fit_issue_head(clf, pro_dir: Path):
    """The issue head and how it was fitted (its bug-fix bias calibrated out of fold)."""
    from builder.classify.embedded import LinearHead
    from builder.classify.issue import CUE_NAMES

    ix, iy, hand, ifacts = issue_data(clf, pro_dir)
    iw = np.where(hand, 1.0, DECLARED_WEIGHT)
    bias = calibrate_bug_fix(*_issue_cv_log_proba(ix, iy, iw), iy, hand)
    iss = _fit(ix, iy, C_ISSUE, iw)
    intercept = iss.intercept_.copy()
    intercept[list(iss.classes_).index("bug-fix")] -= bias
    dim = (ix.shape[1] - len(CUE_NAMES)) // 2
    head = LinearHead(tuple(iss.classes_), (("cues", len(CUE_NAMES)), ("title_emb", dim), ("body_emb", dim)),
                      iss.coef_, intercept)
    facts = {**ifacts, "C": C_ISSUE, "rows": len(iy), "declared_weight": DECLARED_WEIGHT, "bug_fix_bias": bias,
             "cv_seed": CV_SEED, "classes": dict(sorted((c, iy.count(c)) for c in set(iy))),
             "cv_5_fold": issue_cv(ix, iy, hand, bias)}
    return head, facts


def train(sessions: Path = DEFAULT_SESSIONS, pro_dir: Path = DEFAULT_PRO_DIR, out: Path | None = None,
          reserved: Path = DEFAULT_RESERVED, grid: bool = False, settings: GeneralSettings = GENERAL,
          confusion_out: Path | None = None) -> dict:
    """Fit both heads, write the heads file, and return what was measured (``grid``: every setting of
    :data:`GRID` by grouped cross-validation, best high+medium first). One thread throughout: a sum split across
    threads may round differently, and the file must come out byte-identical on any machine."""
    import torch
    from threadpoolctl import threadpool_limits

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(1):
            return _train(sessions, pro_dir, out, reserved, grid, settings, confusion_out)
    finally:
        torch.set_num_threads(threads)


def _train(sessions: Path, pro_dir: Path, out: Path | None, reserved: Path, grid: bool,
           settings: GeneralSettings, confusion_out: Path | None = None) -> dict:
    import sklearn

    from builder.classify.embedded import DEFAULT_HEADS, EmbeddedClassifier, LinearHead
    from tools.dev_labels import save_heads

    clf = EmbeddedClassifier(heads_path=None)
    issue, issue_facts = fit_issue_head(clf, pro_dir)
    data = general_data(clf, sessions, reserved, issue)
    x, y, w = data.rows(np.arange(len(data.y)), settings)
    gen = _fit(x, y, settings.c, w)
    general = LinearHead(tuple(gen.classes_), data.widths, gen.coef_, gen.intercept_)
    cv, pred = grouped_cv_predictions(data, settings)
    if confusion_out is not None:
        Path(confusion_out).write_text(json.dumps(confusion_document(data, pred), indent=1) + "\n", encoding="utf-8")
    training = {"general": {**data.facts, "exemplars": len(data.ex_y), "exemplars_sha256": clf.exemplars.sha256,
                            "settings": asdict(settings), "grouped_cv": cv},
                "issue": issue_facts,
                "fit": f"sklearn {sklearn.__version__} LogisticRegression(lbfgs, max_iter=5000)",
                "never_fitted_on": "tests/data/hand_labels_* (SpecStory v1-v3, Pro v1), the held-out repositories "
                                   "(tools/labeling.py HELD_OUT_REPOS), reserved messages, and the held-out half of "
                                   "the declared issue types"}
    save_heads(out or DEFAULT_HEADS, general, issue, training)
    report = {"general_rows": len(y), "issue_rows": issue_facts["rows"], "bug_fix_bias": issue_facts["bug_fix_bias"],
              "grouped_cv": cv, "issue_cv_5_fold": issue_facts["cv_5_fold"]}
    if grid:
        table = [{**asdict(s), **{k: grouped_cv(data, s)[k]["exact"] for k in ("all", "high+medium")}} for s in GRID]
        report["grid"] = sorted(table, key=lambda r: -r["high+medium"])
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=Path, default=DEFAULT_SESSIONS)
    ap.add_argument("--pro-dir", type=Path, default=DEFAULT_PRO_DIR)
    ap.add_argument("--reserved", type=Path, default=DEFAULT_RESERVED)
    ap.add_argument("--out", type=Path, default=None, help="default: builder/data/classifier/heads_v3.json")
    ap.add_argument("--grid", action="store_true",
                    help="also print the grouped cross-validation figure of every setting of GRID (C, weights)")
    ap.add_argument("--confusion-out", type=Path, default=None, metavar="C.json",
                    help="also write the out-of-fold confusion matrix (input of flow measure --confusion)")
    args = ap.parse_args(argv)
    check_default(args.sessions, DEFAULT_SESSIONS, "--sessions")
    check_default(args.pro_dir, DEFAULT_PRO_DIR, "--pro-dir")
    check_default(args.reserved, DEFAULT_RESERVED, "--reserved")
    print(json.dumps(train(args.sessions, args.pro_dir, args.out, args.reserved, args.grid,
                           confusion_out=args.confusion_out), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main, "train_heads"))
