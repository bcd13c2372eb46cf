"""CLI: ``swe-taskflow flow`` -- measure, score, gap and plot Task Flows (docs/flow.md).

Only parses arguments and calls :mod:`swe_taskflow.flow`, :mod:`swe_taskflow.sessions`,
:mod:`swe_taskflow.bootstrap`, :mod:`swe_taskflow.gap` and :mod:`builder.report.sankey`.
Messages without an intent are labelled with ``builder.classify`` (loaded only when needed).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from swe_taskflow.flow_inputs import BENCHMARK_MIN_MESSAGES, TARGET_MIN_MESSAGES
from swe_taskflow.words import counted

from . import argtypes
from .groups import command_group


def register(sub) -> None:
    fs = command_group(sub, "flow", dest="flow_command", required=True,
                       help="measure, score, compare and plot Task Flows",
                       description="Task Flows (P_L, P_T, P_R) and TFAS, exactly as the paper's Appendix F.")

    m = fs.add_parser("measure", help="measure the Task Flow of a sessions file into a target file",
                      description="Measure P_L, P_T, P_R of SESSIONS.jsonl and write them as a target Task-Flow "
                                  "file (usable as --target or --benchmark). Unlabelled messages are classified.")
    m.add_argument("sessions", metavar="SESSIONS.jsonl")
    m.add_argument("--out", required=True, metavar="FLOW.json", help="target Task-Flow file to write")
    m.add_argument("--min-messages", type=argtypes.positive, default=1, metavar="N",
                   help="session filter: keep sessions with at least N user messages (default 1 = all; "
                        "the paper's target uses 3)")
    _add_input_options(m)
    m.add_argument("--cap-per-repo", type=argtypes.positive, default=None, metavar="K",
                   help="keep at most K sessions per repo (seeded sample, after the length filter)")
    m.add_argument("--seed", type=argtypes.seed, default=0,
                   help="seed of --cap-per-repo sampling and of --bootstrap (default 0)")
    m.add_argument("--name", default=None, help="target name (default: the sessions file's stem)")
    m.add_argument("--population", default="", help="who the sessions come from (goes into the file)")
    m.add_argument("--description", default="", help="free text stored in the file")
    m.add_argument("--measured-on", default=None, metavar="DATE",
                   help="measurement date stored in the file (default: today, UTC)")
    m.add_argument("--provisional", action="store_true", help="mark the target as a provisional stand-in")
    m.add_argument("--labels-out", default=None, metavar="LABELLED.jsonl",
                   help="also write the measured sessions with their intents (our sessions format)")
    m.add_argument("--confusion", default=None, metavar="C.json",
                   help="correct the flow for the classifier's errors by its confusion matrix on held-out labels "
                        "(`classify agreement READER.jsonl CLASSIFIER.jsonl --json C.json`); default name NAME-corrected")
    m.add_argument("--bootstrap", type=argtypes.resamples, default=0, metavar="N",
                   help="store intervals of the intent shares from N resamples of whole sessions (and, with "
                        "--confusion, of the confusion matrix); seeded by --seed")
    m.add_argument("--confidence", type=argtypes.confidence, default=0.95, help="interval level (default 0.95)")
    m.set_defaults(func=cmd_measure)

    s = fs.add_parser("score", help="TFAS of a benchmark against a target, with its three components",
                      description="TFAS = 100 * (S_L * S_T * S_R)^(1/3), S_k = 1 - JSD_base2(P_k, Q_k).")
    _add_pair_options(s)
    s.add_argument("--json", action="store_true", help='print {"tfas", "S_L", "S_T", "S_R"} (+ "bootstrap")')
    s.add_argument("--bootstrap", type=argtypes.resamples, default=0, metavar="N",
                   help="N bootstrap resamples of whole sessions for confidence intervals (needs sessions)")
    s.add_argument("--seed", type=argtypes.seed, default=0, help="bootstrap seed (default 0)")
    s.add_argument("--confidence", type=argtypes.confidence, default=0.95, help="interval level (default 0.95)")
    s.set_defaults(func=cmd_score)

    g = fs.add_parser("gap", help="gap table: target vs benchmark per length bin, intent and transition",
                      description="Per length bin, intent (by target frequency, marking intents no augmentation "
                                  "covers) and top transitions: target share, benchmark share, difference and "
                                  "contribution to the JSD.")
    _add_pair_options(g)
    g.add_argument("--top", type=argtypes.int_range(1, 10_000), default=15, metavar="K", help="transitions to list (default 15)")
    g.add_argument("--json", action="store_true", help="print the table as JSON instead of Markdown")
    g.add_argument("--out", default=None, metavar="GAP.md", help="also write the Markdown (or JSON) to a file")
    g.set_defaults(func=cmd_gap)

    pl = fs.add_parser("plot", help="Sankey diagram (PNG + interactive HTML) of the first message positions",
                       description="Unfiltered Sankey (all 16 labels, END for sessions that stop) of the first "
                                   "--positions user messages: DIR/sankey.png and DIR/sankey.html.")
    pl.add_argument("sessions", metavar="SESSIONS.jsonl")
    pl.add_argument("--out", required=True, metavar="DIR", help="folder to write sankey.png and sankey.html")
    pl.add_argument("--positions", type=argtypes.int_range(1, 50), default=5, help="message positions to draw (default 5)")
    pl.add_argument("--min-messages", type=argtypes.positive, default=1, metavar="N",
                    help="draw only sessions with at least N user messages (default 1 = all)")
    pl.add_argument("--title", default="", help="diagram title")
    _add_input_options(pl)
    pl.set_defaults(func=cmd_plot, out_is_dir=True)


def _add_input_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--classifier", default="embedded", metavar="NAME",
                   help="classifier for messages without an intent (default: embedded)")
    p.add_argument("--device", default="auto", help="classifier device: auto, cpu, cuda (default auto)")
    p.add_argument("--no-label-cache", action="store_true", help="do not reuse or store cached labels")
    p.add_argument("--skip-empty", action="store_true",
                   help="leave out sessions with no user message (each is reported) instead of failing")


def _add_pair_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", required=True, metavar="TARGET.json",
                   help="target Task-Flow file, 'default' (the shipped default target) or a shipped target's name, "
                        "or a sessions JSONL file (then filtered by --target-min-messages)")
    p.add_argument("--benchmark", required=True, metavar="FLOW_OR_SESSIONS",
                   help="a Task-Flow file (from `flow measure`) or a sessions JSONL file")
    p.add_argument("--target-min-messages", type=argtypes.positive, default=None, metavar="N",
                   help=f"session filter when --target is a sessions file (default {TARGET_MIN_MESSAGES}, as the paper)")
    p.add_argument("--benchmark-min-messages", type=argtypes.positive, default=BENCHMARK_MIN_MESSAGES, metavar="N",
                   help=f"session filter on benchmark sessions (default {BENCHMARK_MIN_MESSAGES} = score every session)")
    _add_input_options(p)


# --------------------------------------------------------------------------------------------- helpers

def _say(msg: str) -> None:
    print(msg, file=sys.stderr)


def _labelling(args: argparse.Namespace):
    from ..flow_measure import Labelling

    return Labelling(args.classifier, args.device, not args.no_label_cache)


def _read_labelled(path: str, args: argparse.Namespace, select=None):
    """``builder.flow_measure.read_labelled`` with this command's options."""
    from ..flow_measure import read_labelled

    return read_labelled(path, labelling=_labelling(args), skip_empty=args.skip_empty,
                         keep_messages=bool(getattr(args, "labels_out", None)), select=select, note=_say)


def _load_pair(args: argparse.Namespace):
    """((flow, session counts, description) of the target, the same of the benchmark)."""
    from swe_taskflow.flow_inputs import load_pair

    t, b = load_pair(args.target, args.benchmark, target_min_messages=args.target_min_messages,
                     benchmark_min_messages=args.benchmark_min_messages, note=_say,
                     read_labelled=lambda path, select: _read_labelled(path, args, select))
    args.target = t.description["file"]
    return (t.flow, t.counts, t.description), (b.flow, b.counts, b.description)


# --------------------------------------------------------------------------------------------- commands

def cmd_measure(args: argparse.Namespace) -> int:
    import datetime as _dt

    from ..flow_measure import measure_file, target_counts
    from swe_taskflow.errors import InputError
    from swe_taskflow.sessions import write_sessions
    from swe_taskflow.target import Target

    confusion = None
    if args.confusion:                                     # checked before anything is classified
        from swe_taskflow.confusion import load_confusion

        confusion = load_confusion(args.confusion)
    m = measure_file(args.sessions, min_messages=args.min_messages, cap_per_repo=args.cap_per_repo, seed=args.seed,
                     labelling=_labelling(args), skip_empty=args.skip_empty, keep_messages=bool(args.labels_out),
                     note=_say)
    filt: dict[str, Any] = {}
    if args.cap_per_repo is not None:
        filt.update({"cap_per_repo": args.cap_per_repo, "cap_seed": args.seed})
    if m.n_skipped:
        filt["empty_sessions_skipped"] = m.n_skipped
    if not m.table.n_sessions:
        raise InputError(f"no session has at least {args.min_messages} message(s)", path=args.sessions,
                         field="min_messages", actual=args.min_messages)
    _say(f"{args.sessions}: {m.n_read} session(s) read, {len(m.table)} measured "
         f"(min {args.min_messages} message(s)), {m.counts.n_messages} messages, {m.counts.n_retained} retained")
    counts, extra = target_counts(m, confusion=confusion, bootstrap=args.bootstrap, seed=args.seed,
                                  confidence=args.confidence, note=_say)
    name = args.name or Path(args.sessions).stem + ("-corrected" if args.confusion else "")
    target = Target.from_counts(
        counts, name=name, population=args.population,
        min_messages=args.min_messages, session_filter=filt, classifier=m.classifier,
        measured_on=args.measured_on or _dt.datetime.now(_dt.timezone.utc).date().isoformat(),
        provisional=args.provisional, description=args.description, **extra)
    target.save(args.out)
    if args.labels_out:
        write_sessions(args.labels_out, m.table.records())
    print(args.out)
    return 0


def cmd_score(args: argparse.Namespace) -> int:
    from swe_taskflow.bootstrap import bootstrap_score
    from swe_taskflow.errors import ConfigError
    from swe_taskflow.flow import score

    (target, t_sc, t_desc), (bench, b_sc, b_desc) = _load_pair(args)
    result = score(target, bench)
    out: dict[str, Any] = result.as_dict()
    boot = None
    if args.bootstrap:
        if b_sc is None:
            raise ConfigError("bootstrap intervals resample sessions, but the benchmark is a Task-Flow file",
                              field="--benchmark", actual=args.benchmark, hint="pass the benchmark's sessions JSONL")
        boot = bootstrap_score(t_sc if t_sc is not None else target, b_sc, n_resamples=args.bootstrap,
                               seed=args.seed, confidence=args.confidence)
        out["bootstrap"] = boot.as_dict()
    if args.json:
        print(json.dumps(out, sort_keys=False))
        return 0
    print(f"TFAS {result.tfas:.2f}  (S_L {result.S_L:.4f}, S_T {result.S_T:.4f}, S_R {result.S_R:.4f})")
    if boot is not None:
        pct = round(100 * boot.confidence)
        print(f"{pct}% bootstrap intervals ({boot.n_resamples} resamples of whole sessions, seed {boot.seed}"
              f"{', target resampled too' if boot.target_resampled else ''}):")
        for k in ("tfas", "S_L", "S_T", "S_R"):
            iv = getattr(boot, k)
            print(f"  {k:5s} {iv.value:.4f}  [{iv.lo:.4f}, {iv.hi:.4f}]")
        if boot.n_undefined:
            print(f"  {boot.n_undefined} resample(s) had an empty distribution and were left out")
    print(f"target: {t_desc['file']} ({t_desc['kind']}); benchmark: {b_desc['file']} ({b_desc['kind']})")
    return 0


def cmd_gap(args: argparse.Namespace) -> int:
    from swe_taskflow.gap import gap_table, render_markdown

    (target, _, t_desc), (bench, _, b_desc) = _load_pair(args)
    table = gap_table(target, bench, top_transitions=args.top)
    if args.json:
        text = json.dumps(table.as_dict(), indent=2) + "\n"
    else:
        text = render_markdown(table, target_name=Path(args.target).name, benchmark_name=Path(args.benchmark).name)
    sys.stdout.write(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    from ..report.sankey import plot_sankey, sankey_html
    from swe_taskflow.errors import InputError
    from swe_taskflow.jsonl import check_output_dir

    check_output_dir(args.out)
    kept, _, _ = _read_labelled(args.sessions, args, lambda table: table.filter_min_messages(args.min_messages))
    if not kept.n_sessions:
        raise InputError(f"no session has at least {args.min_messages} message(s)", path=args.sessions,
                         field="min_messages", actual=args.min_messages)
    seqs = kept.intent_lists()
    out = Path(args.out)
    title = args.title or (f"{Path(args.sessions).name}: first {args.positions} user messages "
                           f"({counted(len(seqs), 'session')})")
    png = plot_sankey(seqs, out / "sankey.png", title=title, positions=args.positions)
    page = sankey_html(seqs, out / "sankey.html", title=title, positions=args.positions)
    print(png)
    print(page)
    return 0
