"""The full SWE-bench Verified build (issue 24): builder/releases/swe-bench-verified.toml over all 500 tasks.

The recipe reads ``../shared`` beside the checkout. This script writes a copy of it whose shared paths point at
``--shared`` (default ``$SWE_TASKFLOW_SHARED`` or ``../shared``) and whose project paths are absolute, builds it
(cached per stage in ``--out``), and prints the wall time, the status of every source row, the verification
result, the source benchmark's and the calibrated Task Flows beside SWE-Bench Pro's, and what was not run offline.

    PYTHONPATH=. .venv/bin/python benchmarks/verified_build.py --shared /work/shared --out build/verified
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "builder" / "releases" / "swe-bench-verified.toml"


def local_recipe(shared: Path, folder: Path) -> Path:
    """The Verified recipe with ``../../../shared`` replaced by ``shared`` and ``../data`` made absolute."""
    text = RECIPE.read_text(encoding="utf-8")
    text, n = re.subn(r'"\.\./\.\./\.\./shared/', lambda _: json.dumps(str(shared.resolve()) + "/")[:-1], text)
    assert n >= 3, "the Verified recipe's shared paths changed"
    text = text.replace('"../data/', json.dumps(str((RECIPE.parent.parent / "data").resolve()) + "/")[:-1])
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "swe-bench-verified.toml"
    path.write_text(text, encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default=os.environ.get("SWE_TASKFLOW_SHARED", str(ROOT.parent / "shared")))
    ap.add_argument("--out", default=str(ROOT / "build" / "verified"))
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--pro", default=None, help="SWE-Bench Pro tasks whose source Task Flow is shown beside Verified's "
                                                 "(default: the 731-task file under --shared, when there)")
    ap.add_argument("--write-reference", metavar="PATH", help="also write SWE-Bench Pro's source Task Flow as a target-format "
                                                               "file (builder/data/reference-flows/)")
    args = ap.parse_args(argv)
    shared = Path(args.shared)
    if not (shared / "data" / "swe-bench-verified" / "swebench_verified_500.jsonl").is_file():
        print(f"verified: the shared data is not at {shared}/data (pass --shared)", file=sys.stderr)
        return 2
    from builder.pipeline.build import build
    out = Path(args.out)
    recipe = local_recipe(shared, out.parent / (out.name + "-recipe"))
    t0 = time.perf_counter()
    outcome = build(recipe, out, quiet=args.quiet)
    wall = time.perf_counter() - t0
    print(summarize(outcome, wall))
    pro = Path(args.pro) if args.pro else shared / "data" / "swe-bench-pro" / "swe_bench_pro_public_731.jsonl"
    if pro.is_file():
        print(source_flows(outcome, pro, args.write_reference))
    return 0


def pro_reference(labels: list[str], classifier_info: dict, path: str) -> None:
    """SWE-Bench Pro's source flow as the committed reference file (aggregate vectors only)."""
    from swe_taskflow.flow import count_sessions
    from swe_taskflow.target import Target
    Target.from_counts(
        count_sessions([[x] for x in labels]), name="swe-bench-pro-public-source",
        population="SWE-Bench Pro public set (731 tasks, ScaleAI/SWE-bench_Pro; MIT): each task's original prompt as "
                   "one user message, labelled by the embedded classifier (swe-taskflow, 2026-12-01). Aggregate "
                   "vectors only.",
        min_messages=1, session_filter={"source": "benchmark prompts"},
        classifier={k: v for k, v in sorted(classifier_info.items()) if isinstance(v, (str, int, float))},
        measured_on="2026-12-01", provisional=False,
        description="Reference: the source Task Flow of SWE-Bench Pro's public set, shown beside another source "
                    "benchmark's in a build report (target.compare).").save(path)


def source_flows(outcome, pro: Path, write_reference: str | None = None) -> str:
    """Verified's source Task Flow (the build's own labels) beside SWE-Bench Pro's (its original prompts labelled by
    the same classifier): one polished issue per task, measured unfiltered against the default target."""
    import swe_taskflow as st
    from builder.classify import label_texts, load_classifier
    from builder.sources import load_tasks

    stage = {r.name: r.path for r in outcome.results}
    rows = [json.loads(line) for line in (stage["classify_prompts"] / "source_sessions.jsonl").read_text().splitlines()
            if line]
    verified = [r["messages"][0]["intent"] for r in rows]
    tasks = [t for t in load_tasks(str(pro)).tasks if t.status == "ok"]
    clf = load_classifier("embedded")
    pro_labels = [p.intent for p in label_texts([t.original_prompt for t in tasks], clf)]
    if write_reference:
        pro_reference(pro_labels, dict(getattr(clf, "info", {}) or {}), write_reference)
    target = st.load_target(st.default_target_path()).flow
    lines = ["", "Source benchmarks' Task Flow (one message per task; embedded classifier; default target, unfiltered)",
             f"{'benchmark':34s} {'tasks':>6s} {'S_L':>6s} {'S_T':>6s} {'S_R':>6s} {'TFAS':>6s}  top intents"]
    for name, labels in (("SWE-bench Verified", verified), (f"SWE-Bench Pro ({pro.name})", pro_labels)):
        sc = st.score(target, st.measure([[x] for x in labels]))
        top = ", ".join(f"{k} {100 * v / len(labels):.1f}%" for k, v in Counter(labels).most_common(4))
        lines.append(f"{name[:34]:34s} {len(labels):6d} {sc.S_L:6.3f} {sc.S_T:6.3f} {sc.S_R:6.3f} {sc.tfas:6.1f}  {top}")
    return "\n".join(lines)


def summarize(outcome, wall: float) -> str:
    """The figures issue 24 asks for, read back from the build's own files."""
    stage = {r.name: r.path for r in outcome.results}
    ran = sum(r.status == "ran" for r in outcome.results)
    tasks = [json.loads(line) for line in (stage["ingest"] / "tasks.jsonl").read_text().splitlines() if line]
    splits = json.loads((stage["split"] / "summary.json").read_text())
    report = json.loads((outcome.out / "report" / "report.json").read_text())
    verify = json.loads((stage["verify"] / "verify.json").read_text())
    traj = [json.loads(line) for line in (stage["questions"] / "trajectories.jsonl").read_text().splitlines() if line]
    lines = [f"built {outcome.release} in {wall:.0f} s ({ran} of {len(outcome.results)} stages ran)",
             f"source rows: {len(tasks)}, by status {dict(Counter(t['status'] for t in tasks))}",
             f"splits by status: {splits.get('by_status')}; context checks failed: {splits.get('context_failed')}",
             f"trajectories: {dict(Counter(r['status'] + ('' if r['status'] == 'mined' else ':' + r['reason'].split(':')[0]) for r in traj))}",
             f"verify: {'ok' if verify.get('ok') else 'FAILED'}",
             f"{'benchmark':44s} {'sessions':>8s} {'S_L':>6s} {'S_T':>6s} {'S_R':>6s} {'TFAS':>6s}"]
    num = lambda v: f"{v:6.3f}" if isinstance(v, (int, float)) else f"{'-':>6s}"  # noqa: E731
    for row in report["tfas"]:
        lines.append(f"{row['name'][:44]:44s} {row.get('sessions', ''):>8} {num(row.get('S_L'))} "
                     f"{num(row.get('S_T'))} {num(row.get('S_R'))} {num(row.get('tfas'))}")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
