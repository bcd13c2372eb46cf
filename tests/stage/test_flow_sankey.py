"""Sankey geometry (unfiltered, END nodes, conservation) and deterministic PNG / HTML output."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from builder.report.sankey import CONTINUES, END, plot_sankey, sankey_html, sankey_layout
from swe_taskflow.errors import InputError
from swe_taskflow.taxonomy import INTENTS


def _sessions(seed=0, n=120, max_len=8):
    rng = np.random.default_rng(seed)
    return [[str(x) for x in rng.choice(INTENTS, size=int(rng.integers(1, max_len + 1)))] for _ in range(n)]


def test_nodes_count_sessions_at_each_position_unfiltered():
    seqs = _sessions()
    lay = sankey_layout(seqs, positions=5)
    got = {(nd.column, nd.label): nd.count for nd in lay.nodes}
    want: Counter = Counter()
    for s in seqs:
        for c, label in enumerate(s[:5]):
            want[(c, label)] += 1              # all 16 labels, greeting/other included
        if len(s) <= 5:
            want[(len(s), END)] += 1
        else:
            want[(5, CONTINUES)] += 1
    assert got == dict(want)
    assert any(label in ("greeting", "other", "meta-question") for _, label in got)


def test_bands_conserve_flow_and_stay_inside_nodes():
    seqs = _sessions(1)
    lay = sankey_layout(seqs, positions=4)
    out_sum, in_sum = Counter(), Counter()
    for b in lay.bands:
        out_sum[(b.source.column, b.source.label)] += b.count
        in_sum[(b.target.column, b.target.label)] += b.count
        assert b.source.y0 - 1e-12 <= b.sy0 <= b.sy1 <= b.source.y1 + 1e-12
        assert b.target.y0 - 1e-12 <= b.ty0 <= b.ty1 <= b.target.y1 + 1e-12
        assert b.sy1 - b.sy0 == pytest.approx(b.ty1 - b.ty0)
    for nd in lay.nodes:
        if nd.column > 0:
            assert in_sum[(nd.column, nd.label)] == nd.count
        if nd.label not in (END, CONTINUES) and nd.column < 4:
            assert out_sum[(nd.column, nd.label)] == nd.count
    # heights are proportional to counts
    units = {round((nd.y1 - nd.y0) / nd.count, 12) for nd in lay.nodes}
    assert len(units) == 1


def test_png_and_html_are_deterministic(tmp_path):
    seqs = _sessions(2, 80)
    a = plot_sankey(seqs, tmp_path / "a.png", title="t").read_bytes()
    b = plot_sankey(seqs, tmp_path / "b.png", title="t").read_bytes()
    assert a == b and a[:4] == b"\x89PNG"
    h1 = sankey_html(seqs, tmp_path / "a.html").read_text()
    h2 = sankey_html(seqs, tmp_path / "b.html").read_text()
    assert h1 == h2 and h1.count("<path class=\"band\"") == len(sankey_layout(seqs).bands)


def test_bad_input():
    with pytest.raises(InputError):
        sankey_layout([])
    with pytest.raises(InputError) as exc:
        sankey_layout([["bug-fix"], ["bug-fix", "nope"]])
    assert exc.value.row == 2 and exc.value.field == "messages[1].intent"
