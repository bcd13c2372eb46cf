"""How well `flow measure --confusion` recovers a known Task Flow (prints the figures of docs/flow.md; not a test).

    .venv/bin/python benchmarks/flow_correction.py [--seeds 6] [--sessions 1500] [--labelled 250 600 2500]
                                                   [--accuracy 0.75] [--bootstrap 200] [--priors]

Synthetic corpora with KNOWN true labels (tests/support/noisy_flows.py): true sessions from a known chain of the
16 intents, each predicted label drawn from a known ``M[true]`` of a ~75% classifier that confuses bug-fix with
debug, planning with new-feature, ... ; the confusion file's counts come from a finite labelled sample of fresh
sessions (``--labelled`` messages). Per setting, averaged over ``--seeds`` corpora:

- L1 error of P_T and P_R against the corpus' true flow, raw vs corrected, and TFAS of each against the truth;
- coverage: the share of the 13 intents whose population share lies in the 95% interval (raw: sessions
  resampled; corrected: sessions and confusion rows resampled, ``--bootstrap`` resamples), and mean width;
- the same with the exact ``M`` (what is left is the labels' own noise), and on corpora that are NOT a Markov
  chain (each session repeats one topic intent 70% of the time), where only the skipping-transition part
  leans on the chain.

``--priors`` compares the confusion rows' prior (P_T L1 error only): the shipped pooled prior worth 4 messages,
a flat one (1/16 of a message per cell) and none (the empirical rows; a row without labels is the identity).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from swe_taskflow.bootstrap import bootstrap_shares, session_counts_from_codes, share_intervals  # noqa: E402
from swe_taskflow.confusion import Confusion  # noqa: E402
from swe_taskflow.correction import bootstrap_corrected_shares, correct  # noqa: E402
from swe_taskflow.errors import FlowError  # noqa: E402
from swe_taskflow.flow import counts_from_codes, score  # noqa: E402
from swe_taskflow.taxonomy import RETAINED  # noqa: E402
from tests.support.noisy_flows import K, NoisyCorpus, classifier_matrix, corrupt  # noqa: E402


def _errors(true_codes, predicted, lengths, corrected):
    truth = counts_from_codes(true_codes, lengths).normalized()
    raw = counts_from_codes(predicted, lengths).normalized()
    cor = corrected.normalized()
    l1 = lambda a, b: float(np.abs(a - b).sum())  # noqa: E731
    return [l1(raw.intent, truth.intent), l1(cor.intent, truth.intent), l1(raw.transition, truth.transition),
            l1(cor.transition, truth.transition), score(truth, raw).tfas, score(truth, cor).tfas]


def _covered(iv, truth):
    return sum(iv[k].lo <= truth[i] <= iv[k].hi for i, k in enumerate(RETAINED)), \
        float(np.mean([iv[k].hi - iv[k].lo for k in RETAINED]))


def run_setting(args, labelled: int) -> None:
    rows, cov, raw_cov, width, raw_width, exact, secs = [], 0, 0, [], [], [], []
    for seed in range(args.seeds):
        c = NoisyCorpus.draw(seed, sessions=args.sessions, labelled=labelled, accuracy=args.accuracy)
        conf = Confusion(c.confusion_counts())
        t0 = time.perf_counter()
        cor = correct(c.predicted, c.lengths, conf.matrix())
        samples = bootstrap_corrected_shares(c.predicted, c.lengths, conf.draw, n_resamples=args.bootstrap,
                                             rng=np.random.default_rng(seed))
        secs.append(time.perf_counter() - t0)
        iv = share_intervals(cor.counts.normalized().intent, samples, 0.95)
        raw_iv = bootstrap_shares(session_counts_from_codes(c.predicted, c.lengths), n_resamples=args.bootstrap,
                                  seed=seed)
        truth = c.chain.shares()
        (n, w), (rn, rw) = _covered(iv, truth), _covered(raw_iv, truth)
        cov, raw_cov = cov + n, raw_cov + rn
        width.append(w)
        raw_width.append(rw)
        rows.append(_errors(c.true_codes, c.predicted, c.lengths, cor.counts))
        exact.append(_errors(c.true_codes, c.predicted, c.lengths,
                             correct(c.predicted, c.lengths, classifier_matrix(args.accuracy)).counts))
    m, e, total = np.mean(rows, axis=0), np.mean(exact, axis=0), args.seeds * len(RETAINED)
    print(f"| {labelled:,} | {m[0]:.3f} / {m[1]:.3f} | {m[2]:.3f} / {m[3]:.3f} | {m[4]:.2f} / {m[5]:.2f} | "
          f"{raw_cov / total:.0%} / {cov / total:.0%} | {np.mean(raw_width):.3f} / {np.mean(width):.3f} | "
          f"{e[1]:.3f} / {e[3]:.3f} | {np.median(secs):.1f} s |")


def run_topics(args) -> None:
    """Sessions that are not a Markov chain: each repeats one topic intent 70% of the time; exact M."""
    m = classifier_matrix(args.accuracy)
    for n in (args.sessions, 10 * args.sessions):
        rng = np.random.default_rng(0)
        lengths = rng.integers(1, 15, size=n)
        topic = np.repeat(rng.integers(K, size=n), lengths)
        codes = np.where(rng.random(lengths.sum()) < 0.7, topic, rng.integers(K, size=lengths.sum()))
        pred = corrupt(rng, codes, m)
        e = _errors(codes, pred, lengths, correct(pred, lengths, m).counts)
        print(f"| topic sessions, {n:,} sessions ({codes.size:,} messages), exact M | {e[0]:.3f} / {e[1]:.3f} | "
              f"{e[2]:.3f} / {e[3]:.3f} | {e[4]:.2f} / {e[5]:.2f} |")


def run_priors(args) -> None:
    def flat(c):
        a = c + 1.0 / K
        return a / a.sum(axis=1, keepdims=True)

    def empirical(c):
        n = c.sum(axis=1, keepdims=True)
        return np.where(n > 0, c / np.where(n > 0, n, 1), np.eye(K))

    print("\n| labelled messages | pooled prior (shipped) | flat prior | none |\n|---|---|---|---|")
    for labelled in args.labelled:
        errs = []
        for seed in range(args.seeds):
            c = NoisyCorpus.draw(seed, sessions=args.sessions, labelled=labelled, accuracy=args.accuracy)
            counts = c.confusion_counts().astype(float)
            row = []
            for m in (Confusion(c.confusion_counts()).matrix(), flat(counts), empirical(counts)):
                try:
                    row.append(_errors(c.true_codes, c.predicted, c.lengths, correct(c.predicted, c.lengths, m).counts)[1])
                except FlowError:                  # an empirical row of zeros makes some predicted pair impossible
                    row.append(np.nan)
            errs.append(row)
        e = np.array(errs)
        fails = np.isnan(e).sum(axis=0)
        cell = lambda j: f"{np.nanmean(e[:, j]):.3f}" + (f" ({fails[j]} of {len(e)} corpora impossible)" if fails[j] else "")  # noqa: E731
        print(f"| {labelled:,} | {cell(0)} | {cell(1)} | {cell(2)} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=6)
    ap.add_argument("--sessions", type=int, default=1500)
    ap.add_argument("--labelled", type=int, nargs="+", default=[250, 600, 2500])
    ap.add_argument("--accuracy", type=float, default=0.75)
    ap.add_argument("--bootstrap", type=int, default=200)
    ap.add_argument("--priors", action="store_true", help="also compare the confusion rows' prior")
    args = ap.parse_args()
    print(f"{args.seeds} corpora of {args.sessions:,} true sessions, classifier accuracy {args.accuracy:.0%}; "
          f"each cell raw / corrected")
    print("| labelled messages | P_T L1 error | P_R L1 error | TFAS vs truth | 95% coverage | interval width | "
          "exact M: P_T / P_R error | time (correct + bootstrap) |")
    print("|---|---|---|---|---|---|---|---|")
    for n in args.labelled:
        run_setting(args, n)
    print("\n| not a Markov chain | P_T L1 error | P_R L1 error | TFAS vs truth |\n|---|---|---|---|")
    run_topics(args)
    if args.priors:
        run_priors(args)


if __name__ == "__main__":
    main()
