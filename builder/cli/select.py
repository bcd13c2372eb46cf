"""CLI: ``swe-taskflow select`` — the TFAS-optimized selection (paper Appendix F).

Reads split results and a question pool, gives every issue text an intent (from ``--intents`` or
the classifier, each distinct text once), runs the seeded local search against a target and writes
``selection.jsonl``, ``sessions.jsonl``, ``report.json`` and ``intents.jsonl`` into ``--out``
(byte-identical for the same inputs and seed). ``--conditions`` also writes every fixed condition.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

from swe_taskflow.words import counted

from . import argtypes


def register(sub) -> None:
    p = sub.add_parser("select", help="choose one session per task maximizing TFAS against a target",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tasks", required=True, metavar="SPLITS.jsonl",
                   help="split results (rows of SplitResult.to_dict(): instance_id, status, parts, original_prompt)")
    p.add_argument("--pool", metavar="POOL.jsonl", help="question pool (rows of QAItem.to_dict()); omit for none")
    p.add_argument("--target", required=True, metavar="TARGET.json",
                   help="target Task-Flow file, 'default' (the shipped default target) or a shipped target's name")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder")
    p.add_argument("--preset", default="", metavar="NAME",
                   help="a named selection configuration ('paper': Appendix F's run); options below override it")
    p.add_argument("--seed", type=argtypes.seed, default=None, help="seed (default 0)")
    p.add_argument("--restarts", type=argtypes.int_range(1, 100_000), default=None, help="random restarts (default 64)")
    p.add_argument("--sweeps", type=argtypes.int_range(1, 100_000), default=None,
                   help="most sweeps per restart (default 20)")
    p.add_argument("--max-questions", type=argtypes.int_range(0, 3), default=None,
                   help="most questions per session, 0..3 (default 3)")
    p.add_argument("--min-full-split-share", type=argtypes.share, default=None,
                   help="share of ok-split tasks that must keep their 3 issue turns (default 0)")
    p.add_argument("--min-question-share", type=argtypes.share, default=None,
                   help="share of usable questions to keep (default 0)")
    p.add_argument("--min-qa-task-share", type=argtypes.share, default=None,
                   help="share of tasks with usable questions that must carry one (default 0)")
    p.add_argument("--min-placement-share", type=argtypes.share, default=None,
                   help="diversity: share of tasks with usable questions each placement pattern must hold (default 0)")
    p.add_argument("--no-original", action="store_true", default=None,
                   help="leave the original single prompt out of the family of ok-split tasks")
    p.add_argument("--no-filter", action="store_true", default=None,
                   help="do not restrict candidates to the target's min_messages")
    p.add_argument("--allow-candidates", action="store_true",
                   help="also use pool questions with status 'candidate' (default: 'accepted' only)")
    p.add_argument("--intents", metavar="INTENTS.jsonl",
                   help="known intents of issue texts: rows {text, intent} (e.g. a previous intents.jsonl)")
    p.add_argument("--classifier", default="embedded", help="classifier for texts without a known intent")
    p.add_argument("--conditions", action="store_true",
                   help="also write conditions/<name>.jsonl for every fixed condition")
    p.set_defaults(func=run, out_is_dir=True)


def _intents(texts: list[str], known_path: str | None, classifier: str) -> tuple[dict[str, str], list[dict]]:
    from swe_taskflow.errors import InputError
    from swe_taskflow.jsonl import read_jsonl
    from swe_taskflow.taxonomy import check_intent

    known: dict[str, str] = {}
    if known_path:
        for line, obj in read_jsonl(known_path):
            if not isinstance(obj.get("text"), str):
                raise InputError("missing text", path=known_path, row=line, field="text")
            known[obj["text"]] = check_intent(obj.get("intent"), path=known_path, row=line)
    rows = {t: {"text": t, "intent": known[t], "origin": "given"} for t in texts if t in known}
    missing = [t for t in dict.fromkeys(texts) if t not in known]
    if missing:
        from builder.classify import label_texts, load_classifier
        clf = load_classifier(classifier)
        preds = label_texts(missing, clf, progress=True)   # through the label cache, as the build's stages
        info = dict(clf.info)
        for t, pr in zip(missing, preds):
            rows[t] = {"text": t, "intent": pr.intent, "confidence": round(float(pr.confidence), 6),
                       "origin": "classifier", "classifier": info}
    out = [{"text_sha256": hashlib.sha256(t.encode("utf-8")).hexdigest(), **rows[t]} for t in dict.fromkeys(texts)]
    return {t: rows[t]["intent"] for t in rows}, out


def _config(args: argparse.Namespace):
    """The selection config: the preset (if any) with the options given on the command line on top."""
    from swe_taskflow.select import SelectConfig

    given = {"restarts": args.restarts, "sweeps": args.sweeps, "seed": args.seed,
             "max_questions_per_task": args.max_questions, "min_full_split_share": args.min_full_split_share,
             "min_question_share": args.min_question_share, "min_qa_task_share": args.min_qa_task_share,
             "min_placement_share": args.min_placement_share,
             "include_original": None if args.no_original is None else False,
             "apply_target_filter": None if args.no_filter is None else False}
    if args.preset:
        return SelectConfig.from_preset(args.preset, **given)
    return SelectConfig(**{k: v for k, v in given.items() if v is not None})


def run(args: argparse.Namespace) -> int:
    from swe_taskflow.candidates import build_materials
    from swe_taskflow.conditions import assemble
    from swe_taskflow.jsonl import check_output_dir, read_records, write_json, write_jsonl
    from swe_taskflow.schema import QAItem, SplitResult
    from swe_taskflow.select import describe, select_and_report
    from swe_taskflow.flow_inputs import resolve_target
    from swe_taskflow.target import load_target

    config = _config(args)
    check_output_dir(args.out)
    target_file = resolve_target(args.target)
    target = load_target(target_file)
    splits = read_records(args.tasks, SplitResult, unique="instance_id")
    pool = read_records(args.pool, QAItem, unique="question_id") if args.pool else []
    statuses = ("accepted", "candidate") if args.allow_candidates else ("accepted",)
    materials, pool_summary = build_materials(splits, pool, statuses=statuses)
    texts = [t for m in materials for t in m.issue_texts()]
    intents, intent_rows = _intents(texts, args.intents, args.classifier)

    t0 = time.perf_counter()
    sel, report = select_and_report(materials, intents, target, config, where=args.pool or args.tasks,
                                    baselines=True, pool_summary=pool_summary, progress=True)
    wall = time.perf_counter() - t0
    # what this command read, beside the selection's own report
    report["inputs"] = {
        name: {"path": str(p), "sha256": hashlib.sha256(Path(p).read_bytes()).hexdigest()}
        for name, p in (("tasks", args.tasks), ("pool", args.pool), ("target", target_file),
                        ("intents", args.intents)) if p}
    report["pool"]["statuses_used"] = list(statuses)
    report["intents"] = {"texts": len(intent_rows),
                         "classified": sum(1 for r in intent_rows if r["origin"] == "classifier"),
                         "classifier": args.classifier}
    out = Path(args.out)
    write_jsonl(out / "intents.jsonl", intent_rows)
    write_jsonl(out / "selection.jsonl", sel.selection_rows())
    write_jsonl(out / "sessions.jsonl", [r.session.to_dict() for r in sel.rows()])
    write_json(out / "report.json", report)
    if args.conditions:
        for cond, rows in assemble(materials, intents, seed=config.seed).items():
            write_jsonl(out / "conditions" / f"{cond}.jsonl", [r.to_dict() for r in rows])
    s = sel.score
    print(f"TFAS {s.tfas:.2f} (S_L {s.S_L:.4f}, S_T {s.S_T:.4f}, S_R {s.S_R:.4f}) "
          f"over {counted(len(materials), 'task')}; "
          f"{sel.stats.evaluations:,} candidate evaluations in {wall:.2f} s; wrote {out}", file=sys.stderr)
    print(f"selection: {describe(config)}", file=sys.stderr)
    return 0
