"""The build report's pieces: the simulated target sessions, the TFAS table, the HTML and the PNGs."""

from __future__ import annotations

import numpy as np
import pytest

from builder.report.build_report import ReportData, markdown_to_html, render, simulate_target_sessions, tfas_rows
from swe_taskflow.flow import N_SIDE, count_sessions
from swe_taskflow.target import Target
from swe_taskflow.taxonomy import RETAINED


@pytest.fixture(scope="module")
def target() -> Target:
    rng = np.random.default_rng(3)
    sessions = [[RETAINED[i] for i in rng.integers(0, 5, size=rng.integers(3, 7))] for _ in range(400)]
    return Target.from_counts(count_sessions(sessions, min_messages=3), name="t", population="test", min_messages=3)


def test_simulated_sessions_follow_the_target_transitions(target):
    sims = simulate_target_sessions(target, n=3000, seed=1)
    assert len(sims) == 3000 and min(len(s) for s in sims) >= 3
    assert sims == simulate_target_sessions(target, n=3000, seed=1)  # seeded
    # Conditional next-intent probabilities from the simulation vs the target's P_R rows (independent count).
    want = np.asarray(target.flow.transition).reshape(N_SIDE, N_SIDE)
    idx = {name: i for i, name in enumerate(RETAINED)}
    got = np.zeros((N_SIDE, N_SIDE))
    for s in sims:
        for a, b in zip(s, s[1:]):
            got[idx[a], idx[b]] += 1
    for i in range(5):
        row_want = want[i, :len(RETAINED)] / want[i, :len(RETAINED)].sum()
        row_got = got[i, :len(RETAINED)] / got[i, :len(RETAINED)].sum()
        assert np.abs(row_want - row_got).max() < 0.05


def test_tfas_rows_match_a_direct_score(target):
    from swe_taskflow.flow import score

    single = [["bug-fix"]] * 4
    three = [["bug-fix", "explain", "tests"]] * 4
    rows = tfas_rows(target, single, {"split": three})
    assert rows[0]["S_L"] == 0.0 and rows[0]["tfas"] == 0.0
    direct = score(target.flow, count_sessions(three).normalized())
    assert rows[1]["tfas"] == pytest.approx(direct.tfas) and rows[1]["S_T"] == pytest.approx(direct.S_T)


def test_markdown_to_html_tables_lists_images():
    text = "# T\n\n| a | b |\n|---|---:|\n| `x` | **2** |\n\n- one\n- two\n\n![pic](p.png)\n\nwhy: <script>\n"
    out = markdown_to_html(text, title="t <1>")
    assert "<h1>T</h1>" in out and '<td><code>x</code></td>\n<td style="text-align:right"><strong>2</strong></td>' in out
    assert "<li>one</li>\n<li>two</li>" in out and '<img src="p.png"' in out and "t &lt;1&gt;" in out
    assert "why: &lt;script&gt;" in out and "<script>" not in out   # text from data is never markup


def test_render_writes_pages_and_pngs(target, tmp_path):
    data = ReportData(title="x", release={"name": "x", "version": "1"}, target=target,
                      source_sessions=[["bug-fix"], ["tests"]],
                      conditions={"split_prompt": [["bug-fix", "explain", "tests"]], "qa_only": []},
                      counts={"Tasks": {"ok": 2}}, verify={"ok": True, "rows": 2, "splits": []})
    paths = render(data, tmp_path)
    md = paths["markdown"].read_text()
    assert "| split_prompt | 1 | 3.0 |" in md and "No LLM calls" in md and "Simulated: 2000 sessions" in md
    assert sorted(p.name for p in tmp_path.glob("*.png")) == ["sankey_source.png", "sankey_split_prompt.png",
                                                               "sankey_target.png"]
    first = (tmp_path / "sankey_target.png").read_bytes()
    render(data, tmp_path)
    assert (tmp_path / "sankey_target.png").read_bytes() == first  # same input, same bytes


def test_the_page_reads_as_tables_and_links_not_json(target, tmp_path):
    """Issue 36: raw JSON (``{"0": 16, "1": 1}``), condition names headed "status", "-0.0 pp", pictures shrunk to
    45% with no link to the full image."""
    data = ReportData(title="x", release={"name": "x", "version": "1"}, target=target,
                      source_sessions=[["bug-fix"], ["tests"]], conditions={"split_prompt": [["bug-fix", "explain"]]},
                      counts={"Rows per condition (released)": {"single_prompt": 17, "qa_only": 1},
                              "Condition row status": {"qa_only": {"ok": 1, "no-question": 16}},
                              "Trajectories (questions.mode = generate)": {"skipped": 2}},
                      selection={"sessions_by_questions": {"0": 16, "1": 1}, "placement": {"first": 1},
                                 "questions_by_slot": {"0": 1}, "config": {"seed": 0, "iters": 20},
                                 "constraints": {}},
                      verify={"ok": True, "rows": 2, "splits": []})
    paths = render(data, tmp_path)
    md, page = paths["markdown"].read_text(), paths["html"].read_text()
    assert '{"' not in md and "{'" not in md
    assert "| condition | rows |" in md and "| single_prompt | 17 |" in md
    assert "| condition | ok | no-question |" in md and "| qa_only | 1 | 16 |" in md
    assert "| questions | sessions |" in md and "| 0 | 16 |" in md and "seed: 0" in md
    assert '<a href="sankey_target.png"><img src="sankey_target.png"' in page
    assert "-0.0 pp" not in md


def test_a_difference_that_rounds_to_zero_has_no_sign():
    from swe_taskflow.gap import _pp

    assert _pp(-0.0004) == "0.0 pp" and _pp(0.0004) == "0.0 pp" and _pp(-0.012) == "-1.2 pp" and _pp(0.1) == "+10.0 pp"
