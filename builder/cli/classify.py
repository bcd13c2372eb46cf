"""CLI: ``swe-taskflow classify`` (label every message of a sessions file) and
``swe-taskflow classify agreement`` (pairwise agreement between labelled copies of the same sessions).

One parser serves both forms: the positional list is read as ``IN.jsonl`` or as ``agreement A B [C ...]``.
"""

from __future__ import annotations

import argparse
import sys

from swe_taskflow.words import counted

from . import argtypes

USAGE = ("swe-taskflow classify IN.jsonl --out OUT.jsonl [--classifier NAME_OR_PATH] [--batch-size N] "
         "[--device auto|cpu|cuda] [--no-cache] [--keep-existing] [--quiet] [--ray [ADDRESS] [--actors N]]\n"
         "       swe-taskflow classify agreement A.jsonl B.jsonl [C.jsonl ...] [--json OUT.json] [--no-confusion]")

DESCRIPTION = """Label every user message with one of the 16 intents (paper Appendix A), or compare labelled files.

classify: IN is a sessions JSONL file (ours: {"session_id", "messages": [{"text"}]}, or the shared corpus'
{"session_id", "user_messages": [{"text"}]}); OUT holds the same sessions with "intent" and "confidence" on
every message. Labels are cached on disk ($SWE_TASKFLOW_CACHE/labels or ~/.cache/swe-taskflow/labels); a model
is loaded only when a label is missing. OUT is written as batches finish (atomically: it appears when complete).
--ray scores the missing labels on a Ray cluster (ADDRESS, or a local one on loopback; `pip install '.[scale]'`).
Classifiers: embedded (default, CPU, no download), zero-shot (naive baseline), a local causal-LM folder
or llm:<folder or cached HF id> (label scoring).

agreement: two or more labelled sessions files over the same messages; prints pairwise exact agreement,
Cohen's kappa and confusion tables (rows: first file, columns: second). --json writes them with each pair's
confusion counts; READER.jsonl CLASSIFIER.jsonl --json C.json is the input of `flow measure --confusion`."""


def register(sub) -> None:
    p = sub.add_parser("classify", help="label messages with intents; `classify agreement` compares label sets",
                       usage=USAGE, description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="+", metavar="IN.jsonl | agreement A.jsonl B.jsonl ...",
                   help="a sessions file to label, or `agreement` followed by two or more labelled files")
    p.add_argument("--out", help="classify: output sessions file (required)")
    p.add_argument("--classifier", default="embedded", help="classify: name or model folder (default: embedded)")
    p.add_argument("--batch-size", type=argtypes.batch, default=64, help="classify: messages per model batch (default 64)")
    p.add_argument("--device", default="auto", help="classify: auto|cpu|cuda (default auto)")
    p.add_argument("--no-cache", action="store_true", help="classify: do not read or write the label cache")
    p.add_argument("--keep-existing", action="store_true",
                   help="classify: keep intents already present in IN (default: relabel every message)")
    p.add_argument("--quiet", action="store_true", help="classify: no progress bar (none either when stderr is no TTY)")
    p.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                   help="classify: score on Ray (a cluster's address, or none: a local cluster on loopback)")
    p.add_argument("--actors", type=argtypes.batch, help="classify --ray: scorers (default: one per GPU, else per CPU)")
    p.add_argument("--json", dest="json_out", help="agreement: also write the figures as JSON here")
    p.add_argument("--no-confusion", action="store_true", help="agreement: do not print confusion tables")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from swe_taskflow.errors import InputError

    if args.inputs[0] == "agreement":
        return run_agreement(args.inputs[1:], args)
    if len(args.inputs) != 1:
        raise InputError("classify takes one input file (or `agreement A.jsonl B.jsonl ...`)",
                         actual=" ".join(args.inputs))
    if not args.out:
        raise InputError("--out is required", field="--out", hint="swe-taskflow classify IN.jsonl --out OUT.jsonl")
    return run_classify(args.inputs[0], args)


def run_classify(path: str, args: argparse.Namespace) -> int:
    from .. import api

    done = api.classify(path, args.out, classifier=args.classifier, batch_size=args.batch_size, device=args.device,
                        cache=not args.no_cache, keep_existing=args.keep_existing, progress=not args.quiet,
                        ray=args.ray, actors=args.actors,
                        on_skip=lambda s: print(f"skipped {s.path}:{s.line} session {s.session_id}: {s.reason}",
                                                file=sys.stderr))
    if not args.quiet:
        print(f"labelled {counted(done.labelled, 'message')} in {counted(done.sessions, 'session')} with "
              f"{done.classifier} (version {done.version}); {counted(len(done.skipped), 'empty session')} skipped "
              f"-> {args.out}", file=sys.stderr)
    return 0


def run_agreement(paths: list[str], args: argparse.Namespace) -> int:
    from .. import api
    from swe_taskflow.agreement import format_confusion

    done = api.agreement(paths, args.json_out)
    print(f"{done.messages} messages, {done.sessions} sessions")
    print(f"{'A':<40} {'B':<40} {'exact':>7} {'kappa':>7}")
    for pa in done.pairs:
        print(f"{pa.a[-40:]:<40} {pa.b[-40:]:<40} {pa.exact:7.3f} {pa.kappa:7.3f}")
    print(f"mean pairwise exact agreement {done.mean_exact:.3f}")
    if not args.no_confusion:
        for pa in done.pairs:
            print(f"\nconfusion: rows {pa.a}, columns {pa.b}\n{format_confusion(pa.confusion)}")
    return 0
