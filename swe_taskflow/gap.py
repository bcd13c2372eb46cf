"""The gap table (paper, Appendix C step 5): where a benchmark's Task Flow misses the target's.

Per length bin, per retained intent (sorted by target frequency, marking intents that no
augmentation covers) and for the transitions that weigh most: the target share, the benchmark
share, their difference and that element's contribution to the component's JSD. The per-element
contributions ``0.5 * (p log2(p/m) + q log2(q/m))`` are non-negative and add up to the JSD, so the
table says exactly which cells cost TFAS. Data first (:class:`GapTable`), Markdown from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


from .flow import LENGTH_BINS, TRANSITION_SOURCES, TRANSITION_TARGETS, Flow, TFASScore, jsd_terms, score
from .markdown import table as md_table
from .taxonomy import AUGMENTATION, RETAINED

#: intent -> the augmentation kinds that can produce it (e.g. ``{"explain": ("qa",)}``).
COVERED_BY: dict[str, tuple[str, ...]] = {
    intent: tuple(kind for kind, intents in AUGMENTATION.items() if intent in intents) for intent in RETAINED
}


@dataclass(frozen=True)
class GapRow:
    """One cell of a distribution: target vs benchmark share and its part of the JSD."""

    key: str
    target: float
    benchmark: float
    difference: float          # benchmark - target
    jsd_contribution: float
    covered_by: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"key": self.key, "target": self.target, "benchmark": self.benchmark,
                "difference": self.difference, "jsd_contribution": self.jsd_contribution,
                "covered_by": list(self.covered_by)}


@dataclass(frozen=True)
class GapTable:
    """The three gap sections and the score they explain."""

    score: TFASScore
    lengths: tuple[GapRow, ...]
    intents: tuple[GapRow, ...]
    transitions: tuple[GapRow, ...]
    n_transitions_total: int

    def as_dict(self) -> dict[str, Any]:
        return {"score": self.score.as_dict(), "lengths": [r.as_dict() for r in self.lengths],
                "intents": [r.as_dict() for r in self.intents],
                "transitions": [r.as_dict() for r in self.transitions],
                "n_transitions_total": self.n_transitions_total}


def _rows(keys, p, q, covered=None) -> list[GapRow]:
    terms = jsd_terms(p, q)
    return [GapRow(k, float(p[i]), float(q[i]), float(q[i] - p[i]), float(terms[i]),
                   tuple(covered.get(k, ())) if covered else ()) for i, k in enumerate(keys)]


def gap_table(target: Flow, benchmark: Flow, *, top_transitions: int = 15) -> GapTable:
    """Build the gap table of ``benchmark`` against ``target``.

    Intents are sorted by target share (ties by taxonomy order); transitions with mass in either
    flow are sorted by their JSD contribution and the first ``top_transitions`` are kept.
    """
    lengths = _rows(LENGTH_BINS, target.length, benchmark.length)
    intents = sorted(_rows(RETAINED, target.intent, benchmark.intent, COVERED_BY),
                     key=lambda r: (-r.target, RETAINED.index(r.key)))
    keys = [f"{s} -> {t}" for s in TRANSITION_SOURCES for t in TRANSITION_TARGETS]
    trans = [r for r in _rows(keys, target.transition, benchmark.transition) if r.target > 0 or r.benchmark > 0]
    order = sorted(range(len(trans)), key=lambda i: (-trans[i].jsd_contribution, -trans[i].target, i))
    top = tuple(trans[i] for i in order[:max(0, top_transitions)])
    return GapTable(score(target, benchmark), tuple(lengths), tuple(intents), top, len(trans))


def _pp(difference: float) -> str:
    """A difference in percentage points, signed; one that rounds to zero is "0.0 pp", never "-0.0 pp"."""
    v = round(100.0 * difference, 1)
    return "0.0 pp" if v == 0 else f"{v:+.1f} pp"


def _cells(r: GapRow) -> tuple[str, ...]:
    return (r.key, f"{100.0 * r.target:.1f}%", f"{100.0 * r.benchmark:.1f}%", _pp(r.difference),
            f"{r.jsd_contribution:.4f}")


def render_markdown(table: GapTable, *, target_name: str = "target", benchmark_name: str = "benchmark") -> str:
    """The gap table as Markdown: the score, then lengths, intents (with coverage) and transitions."""
    s, head = table.score, ("target", "benchmark", "difference", "JSD part")
    out = [f"# Task-Flow gap: {benchmark_name} vs {target_name}", "",
           f"TFAS **{s.tfas:.1f}** (S_L {s.S_L:.3f}, S_T {s.S_T:.3f}, S_R {s.S_R:.3f})", ""]
    out += ["## Session length (P_L)", "", *md_table(("bin", *head), map(_cells, table.lengths))]
    out += ["", "## Intents (P_T), by target frequency", "",
            "Augmentation: which verifiable augmentation can produce the intent; "
            "**none** marks a gap no augmentation covers.", "",
            *md_table(("intent", *head, "augmentation"),
                      [(*_cells(r), ", ".join(r.covered_by) or "**none**") for r in table.intents], "lrrrrl")]
    out += ["", f"## Transitions (P_R): top {len(table.transitions)} of {table.n_transitions_total} by JSD part", "",
            *md_table(("transition", *head), map(_cells, table.transitions))]
    return "\n".join(out) + "\n"


__all__ = ["COVERED_BY", "GapRow", "GapTable", "gap_table", "render_markdown"]
