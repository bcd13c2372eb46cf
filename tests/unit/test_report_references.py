"""target.compare: reference Task Flows (e.g. SWE-Bench Pro's source flow) scored beside the source benchmark."""

from __future__ import annotations

from pathlib import Path

import swe_taskflow as st
from builder.report.build_report import reference_rows, tfas_rows
from swe_taskflow.target import Target, load_target

ROOT = Path(__file__).resolve().parents[2]
PRO = ROOT / "builder" / "data" / "reference-flows" / "swe-bench-pro-public-731-source.json"


def test_committed_pro_reference_scores_as_measured():
    target = load_target(st.default_target_path())
    ref = load_target(PRO)
    [row] = reference_rows(target, [ref])
    assert row["name"] == "reference: swe-bench-pro-public-source" and row["sessions"] == 731
    assert row["mean_turns"] == 1.0 and row["S_L"] == 0.0 and row["tfas"] == 0.0
    assert round(row["S_T"], 3) == 0.800 and round(row["S_R"], 3) == 0.264   # against the default target (heads v3)
    # a reference scores exactly as the same sessions do as a benchmark row
    sessions = [["bug-fix"], ["new-feature"], ["bug-fix", "tests", "explain"]]
    same = tfas_rows(target, sessions, {})[0]
    [as_ref] = reference_rows(target, [Target.from_counts(st.count_sessions(sessions), name="x", population="p")])
    assert [as_ref[k] for k in ("tfas", "S_L", "S_T", "S_R", "sessions")] == \
        [same[k] for k in ("tfas", "S_L", "S_T", "S_R", "sessions")]
    assert as_ref["mean_turns"] == same["mean_turns"]
