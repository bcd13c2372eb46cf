"""Measured facts of one run (wall-clock durations) moved out of proof reports before they are released.

Two builds of the same inputs differ only by them: they go to a stage's volatile outputs (kept out of
its content hash, shown in the build report) so release hashes are reproducible.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

VOLATILE_KEYS = ("duration_s",)


def strip_volatile(report: Mapping[str, Any] | None, qid: str) -> tuple[dict | None, dict]:
    """(the report with its durations set to null, the durations moved out keyed by question id)."""
    if report is None:
        return None, {}
    report = dict(report)
    timing: dict[str, Any] = {"question_id": qid}
    for key in VOLATILE_KEYS:
        if key in report:
            timing[key] = report[key]
            report[key] = None
    if report.get("status") == "timeout" and "after" in str(report.get("reason", "")):
        # "wall-clock limit reached after 30.2s": the measured time moves out, the verdict stays.
        timing["reason"] = report["reason"]
        limit = (report.get("limits") or {}).get("timeout_s")
        report["reason"] = "wall-clock limit reached" + (f" ({limit}s limit)" if limit is not None else "")
    runs = dict(report.get("runs") or {})
    for name in ("base", "patched"):
        run = runs.get(name)
        if isinstance(run, dict):
            run = dict(run)
            for key in VOLATILE_KEYS:
                if key in run:
                    timing[f"{name}.{key}"] = run[key]
                    run[key] = None
            runs[name] = run
    if runs:
        report["runs"] = runs
    return report, timing


def strip_items(items, *, every_timing: bool = False) -> tuple[list, list[dict]]:
    """(the items with their proof reports stripped, the timings moved out): only of items whose check ran,
    unless ``every_timing`` (the proofs stage lists one per question)."""
    kept, timings = [], []
    for item in items:
        report, timing = strip_volatile(item.proof_report, item.question_id)
        kept.append(dataclasses.replace(item, proof_report=report))
        if every_timing or timing.get("duration_s") is not None:
            timings.append(timing)
    return kept, timings
