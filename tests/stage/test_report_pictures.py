"""Picture vs data: every number a build-report picture encodes equals the data it claims to show (issue 36).

The report's pictures are Sankey diagrams (source benchmark, target, each condition; the build report draws no
other plot). Each figure is read back as drawn, from the matplotlib artists saved to the PNG: node rectangles
(height per column = a share of the sessions), node labels ("bug-fix 12"), and bands (height at the source = the
sessions flowing from one node to the next). Those are compared with counts taken independently from the
sessions, and for the target (drawn from simulated sessions) with the target's own P_L and P_R.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.patches import PathPatch, Rectangle

from builder.report.build_report import TARGET_SAMPLE, ReportData, render
from swe_taskflow.flow import LENGTH_BINS, N_SIDE
from swe_taskflow.target import Target, default_target_path, load_target
from swe_taskflow.taxonomy import RETAINED

POSITIONS = 5
END, CONTINUES = "END", "continues"


def _drawn(fig: Figure) -> dict:
    """What one saved Sankey figure shows: per (column, label) the node's share of all sessions (its label
    read from the legend's colours) and its printed count; every band's height as a share of the sessions."""
    ax = fig.axes[0]
    legend = {tuple(h.get_facecolor()): t.get_text() for h, t in zip(fig.legends[0].legend_handles,
                                                                      fig.legends[0].get_texts())}
    nodes = [p for p in ax.patches if isinstance(p, Rectangle)]
    col_height: Counter = Counter()
    for r in nodes:
        col_height[round(r.get_x())] += r.get_height()
    texts = {round(t.get_position()[1], 6): t.get_text() for t in ax.texts if t.get_text().split()[-1].isdigit()}
    shares: dict[tuple[int, str], float] = {}
    printed: dict[tuple[int, str], int] = {}
    for r in nodes:
        col, name = round(r.get_x()), legend[tuple(r.get_facecolor())]
        assert (col, name) not in shares
        shares[(col, name)] = r.get_height() / col_height[0]     # column 1 holds every session
        label = texts.get(round(r.get_y() + r.get_height() / 2, 6))
        if label:
            assert label.rsplit(" ", 1)[0] == name
            printed[(col, name)] = int(label.rsplit(" ", 1)[1])
    unit = col_height[0]
    bands = [(p.get_path().vertices[0][1] - p.get_path().vertices[7][1]) / unit
             for p in ax.patches if isinstance(p, PathPatch)]
    return {"shares": shares, "printed": printed, "bands": bands}


def _node_counts(sessions) -> dict[tuple[int, str], int]:
    """Independent count: per column the intent at that message, END after the last message, ``continues`` past
    the fifth."""
    out: Counter = Counter()
    for s in sessions:
        for c in range(min(len(s), POSITIONS)):
            out[(c, s[c])] += 1
        out[(len(s), END) if len(s) <= POSITIONS else (POSITIONS, CONTINUES)] += 1
    return dict(out)


def _flows(sessions) -> Counter:
    out: Counter = Counter()
    for s in sessions:
        labels = list(s[:POSITIONS]) + ([END] if len(s) <= POSITIONS else [CONTINUES])
        for c in range(len(labels) - 1):
            out[(c, labels[c], labels[c + 1])] += 1
    return out


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """A report over the shipped default target, with sessions of several lengths and intents."""
    rng = np.random.default_rng(5)
    target = load_target(default_target_path())
    source = [[RETAINED[i]] for i in rng.integers(0, 6, size=17)]
    cond = [[RETAINED[i] for i in rng.integers(0, 6, size=n)] for n in rng.integers(1, 9, size=40)]
    data = ReportData(title="t", release={"name": "t", "version": "1"}, target=target, source_sessions=source,
                      conditions={"split_prompt": cond}, verify={"ok": True, "rows": 1, "splits": []})
    saved: dict[str, Figure] = {}
    original = Figure.savefig

    def savefig(self, fname, *args, **kwargs):
        saved[str(fname).rsplit("/", 1)[-1]] = self
        return original(self, fname, *args, **kwargs)

    mp = pytest.MonkeyPatch()
    mp.setattr(Figure, "savefig", savefig)
    try:
        render(data, tmp_path_factory.mktemp("report"))
    finally:
        mp.undo()
    return data, saved


def test_every_report_picture_is_read_back(report):
    _, saved = report
    assert sorted(saved) == ["sankey_source.png", "sankey_split_prompt.png", "sankey_target.png"]


@pytest.mark.parametrize("picture,which", [("sankey_source.png", "source"), ("sankey_split_prompt.png", "cond")])
def test_sessions_pictures_show_their_sessions(report, picture, which):
    data, saved = report
    sessions = data.source_sessions if which == "source" else data.conditions["split_prompt"]
    n = len(sessions)
    drawn = _drawn(saved[picture])
    want = _node_counts(sessions)
    assert set(drawn["shares"]) == set(want)                  # no node the data lacks, none missing
    for key, count in want.items():
        assert drawn["shares"][key] * n == pytest.approx(count), (picture, key)
        if count / n >= 0.025:                                 # big enough to carry its number
            assert drawn["printed"][key] == count, (picture, key)
    heights = sorted(round(h * n, 6) for h in drawn["bands"])
    assert heights == sorted(float(v) for v in _flows(sessions).values())   # every band, as a number of sessions


def test_the_target_picture_shows_the_targets_lengths(report):
    """Issue 36: drawn from P_R alone, 10.7% of the target's sessions ended after 3 messages where P_L says 19.6%."""
    data, saved = report
    target: Target = data.target
    n = TARGET_SAMPLE
    drawn = _drawn(saved["sankey_target.png"])
    p_l = np.asarray(target.flow.length) / np.sum(target.flow.length)
    for k in range(1, POSITIONS + 1):          # sessions of exactly k messages end in column k
        share = drawn["shares"].get((k, END), 0.0)
        assert share == pytest.approx(p_l[LENGTH_BINS.index(str(k))], abs=1.0 / n), f"END after {k} messages"
    assert drawn["shares"][(POSITIONS, CONTINUES)] == pytest.approx(p_l[5] + p_l[6], abs=1.0 / n)
    for (col, name), count in drawn["printed"].items():
        assert count == round(drawn["shares"][(col, name)] * n)      # printed numbers = drawn heights


def test_the_target_picture_starts_as_the_targets_transition_matrix(report):
    """Message 1 of the simulated sessions follows P_R's START row (a sample of 2,000: within 4 standard errors)."""
    data, saved = report
    mat = np.asarray(data.target.flow.transition, dtype=float).reshape(N_SIDE, N_SIDE)
    start = mat[N_SIDE - 1, :len(RETAINED)] / mat[N_SIDE - 1, :len(RETAINED)].sum()
    drawn = _drawn(saved["sankey_target.png"])
    for i, intent in enumerate(RETAINED):
        got = drawn["shares"].get((0, intent), 0.0)
        se = np.sqrt(start[i] * (1 - start[i]) / TARGET_SAMPLE)
        assert abs(got - start[i]) <= 4 * se + 1e-9, intent
