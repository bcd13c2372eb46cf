"""Gap table: contributions add up to each JSD (checked with scipy), ordering, coverage marks, Markdown."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon

from swe_taskflow import flow
from swe_taskflow.gap import gap_table, render_markdown
from swe_taskflow.taxonomy import INTENTS

# Appendix C step 5: issue turns carry implementation intents, repository QA carries explain.
AUGMENTED = {"execute", "debug", "planning", "code-review"}
PAPER_COVERED = {"tests", "bug-fix", "new-feature", "generate-docs", "refactor", "transformation", "explain"}


def _flows(seed):
    rng = np.random.default_rng(seed)
    w = rng.random(16) ** 2
    t = [list(rng.choice(INTENTS, size=int(rng.integers(3, 12)), p=w / w.sum())) for _ in range(300)]
    b = [list(rng.choice(["bug-fix", "new-feature", "explain"], size=int(rng.integers(1, 4)))) for _ in range(120)]
    return flow.measure(t, min_messages=3), flow.measure(b)


@pytest.mark.parametrize("seed", range(3))
def test_contributions_sum_to_each_jsd(seed):
    t, b = _flows(seed)
    g = gap_table(t, b, top_transitions=1000)
    for rows, p, q, s in ((g.lengths, t.length, b.length, g.score.S_L), (g.intents, t.intent, b.intent, g.score.S_T),
                          (g.transitions, t.transition, b.transition, g.score.S_R)):
        ref = jensenshannon(p, q, base=2) ** 2
        assert sum(r.jsd_contribution for r in rows) == pytest.approx(ref, abs=1e-12)
        assert 1.0 - ref == pytest.approx(s, abs=1e-12)
        assert sum(r.target for r in rows) == pytest.approx(1.0) and sum(r.benchmark for r in rows) == pytest.approx(1.0)
        for r in rows:
            assert r.difference == pytest.approx(r.benchmark - r.target)
    assert g.n_transitions_total == len(g.transitions)


def test_intents_sorted_by_target_share_and_coverage_marked():
    t, b = _flows(5)
    g = gap_table(t, b)
    shares = [r.target for r in g.intents]
    assert shares == sorted(shares, reverse=True)
    assert {r.key for r in g.intents} == set(flow.RETAINED)
    assert {r.key for r in g.intents if r.covered_by} == PAPER_COVERED | AUGMENTED
    covered = dict((r.key, r.covered_by) for r in g.intents)
    assert covered["explain"] == ("qa",)
    # the augmentations of docs/augmentations.md fill the paper's open gaps, one kind per intent
    assert {k: covered[k] for k in AUGMENTED} == {"execute": ("execute",), "debug": ("debug",),
                                                  "planning": ("planning",), "code-review": ("review",)}
    assert {r.key for r in g.intents if not r.covered_by} == {"question", "data-analysis"}


def test_top_transitions_are_the_largest_contributions():
    t, b = _flows(6)
    full = gap_table(t, b, top_transitions=10_000).transitions
    top = gap_table(t, b, top_transitions=5).transitions
    assert [r.key for r in top] == [r.key for r in full[:5]]
    assert all(top[i].jsd_contribution >= top[i + 1].jsd_contribution for i in range(4))
    assert min(r.jsd_contribution for r in top) >= max(r.jsd_contribution for r in full[5:])


def test_markdown_lists_every_row():
    t, b = _flows(7)
    g = gap_table(t, b, top_transitions=4)
    md = render_markdown(g, target_name="T", benchmark_name="B")
    assert f"TFAS **{g.score.tfas:.1f}**" in md
    for r in g.lengths + g.intents + g.transitions:
        assert f"| {r.key} |" in md
    assert md.count("**none**") == 13 - len(PAPER_COVERED | AUGMENTED) + 1   # +1: the legend line
