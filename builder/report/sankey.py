"""Sankey diagrams of the first message positions, as the paper draws them.

Unfiltered: all 16 intent labels, flows from the intent at message position 1 to position 2, 3, ...
up to ``positions`` (5 by default), an END node in the column after a session's last message, and a
``continues`` node for sessions longer than ``positions``. The geometry is computed once
(:func:`sankey_layout`, pure) and drawn twice: a static PNG with matplotlib (Agg canvas, no global
backend switch, fixed metadata: byte-identical for identical input) and an interactive HTML page
(inline SVG with tooltips and hover highlighting, no JavaScript library, no network).
"""

from __future__ import annotations

import html
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from swe_taskflow.errors import ConfigError, InputError
from swe_taskflow.taxonomy import INTENTS, check_intent
from swe_taskflow.words import counted

END = "END"
CONTINUES = "continues"
#: Fixed colours, one per intent (tab20 order), so every diagram reads the same.
_TAB20 = ("#1f77b4", "#aec7e8", "#ff7f0e", "#ffbb78", "#2ca02c", "#98df8a", "#d62728", "#ff9896", "#9467bd",
          "#c5b0d5", "#8c564b", "#c49c94", "#e377c2", "#f7b6d2", "#7f7f7f", "#c7c7c7")
COLORS: dict[str, str] = {**dict(zip(INTENTS, _TAB20)), END: "#404040", CONTINUES: "#a0a0a0"}
NODE_ORDER: tuple[str, ...] = INTENTS + (END, CONTINUES)


@dataclass(frozen=True)
class Node:
    column: int          # 0-based column (message position - 1)
    label: str
    count: int
    x: float
    y0: float            # bottom (data units, y grows upward)
    y1: float            # top


@dataclass(frozen=True)
class Band:
    source: Node
    target: Node
    count: int
    sy0: float           # bottom/top of the band at the source
    sy1: float
    ty0: float           # bottom/top at the target
    ty1: float


@dataclass(frozen=True)
class SankeyLayout:
    nodes: tuple[Node, ...]
    bands: tuple[Band, ...]
    n_sessions: int
    positions: int
    node_width: float
    width: float         # x extent
    height: float        # y extent (0..height)


def sankey_layout(sessions_intents: Sequence[Sequence[str]], *, positions: int = 5,
                  column_gap: float = 1.0, node_width: float = 0.06, pad: float = 0.012) -> SankeyLayout:
    """Node and band geometry for the first ``positions`` messages of every session (unfiltered)."""
    if not isinstance(positions, int) or positions < 1:
        raise ConfigError("positions must be a positive integer", field="positions", actual=positions)
    seqs = [list(s) for s in sessions_intents]
    _check_sessions(seqs)
    n = len(seqs)
    ncol = positions + 1
    col_labels = [_column_labels(s, positions) for s in seqs]
    node_counts = [Counter(r[c] for r in col_labels if r[c] is not None) for c in range(ncol)]
    flows = [Counter((r[c], r[c + 1]) for r in col_labels if r[c] is not None and r[c + 1] is not None)
             for c in range(ncol - 1)]
    max_nodes = max(len(nc) for nc in node_counts)
    height = 1.0
    unit = (height - pad * max(0, max_nodes - 1)) / n
    nodes = _stack_nodes(node_counts, unit, height, column_gap, pad)
    bands = [band for c, fl in enumerate(flows) for band in _column_bands(c, fl, nodes, unit)]
    ordered_nodes = tuple(sorted(nodes.values(), key=lambda nd: (nd.column, NODE_ORDER.index(nd.label))))
    return SankeyLayout(ordered_nodes, tuple(bands), n, positions, node_width,
                        (ncol - 1) * column_gap + node_width, height)


def _check_sessions(seqs: list[list[str]]) -> None:
    if not seqs:
        raise InputError("no session to draw", field="sessions")
    for i, s in enumerate(seqs):
        if not s:
            raise InputError("empty session", row=i + 1, field="messages", actual=0, expected=">= 1")
        for j, label in enumerate(s):
            check_intent(label, row=i + 1, field=f"messages[{j}].intent")


def _column_labels(s: list[str], positions: int) -> list[str | None]:
    """A session's label at each column: its intents, then END or CONTINUES, then None once it has ended."""
    row: list[str | None] = []
    for c in range(positions + 1):
        if c < len(s) and c < positions:
            row.append(s[c])
        elif c == len(s) and c <= positions:
            row.append(END)
        elif c == positions and len(s) > positions:
            row.append(CONTINUES)
        else:
            row.append(None)
    return row


def _stack_nodes(node_counts: list[Counter], unit: float, height: float, column_gap: float,
                 pad: float) -> dict[tuple[int, str], Node]:
    """Each column's nodes stacked from the top in NODE_ORDER, ``pad`` apart, ``unit`` high per session."""
    nodes: dict[tuple[int, str], Node] = {}
    for c, nc in enumerate(node_counts):
        y = height
        for label in NODE_ORDER:
            k = nc.get(label, 0)
            if not k:
                continue
            h = k * unit
            nodes[(c, label)] = Node(c, label, k, c * column_gap, y - h, y)
            y -= h + pad
    return nodes


def _column_bands(c: int, fl: Counter, nodes: dict[tuple[int, str], Node], unit: float) -> list[Band]:
    """The bands from column ``c`` to ``c + 1``: outgoing stacked by target, incoming by source, so no two
    bands cross inside a node."""
    rank = {label: i for i, label in enumerate(NODE_ORDER)}
    by_source = sorted(fl, key=lambda ab: (rank[ab[0]], rank[ab[1]]))
    src_top = {key: nd.y1 for key, nd in nodes.items() if key[0] == c}
    src_pos: dict[tuple[str, str], float] = {}
    for a, b in by_source:
        src_pos[(a, b)] = src_top[(c, a)]
        src_top[(c, a)] -= fl[(a, b)] * unit
    tgt_top = {key: nd.y1 for key, nd in nodes.items() if key[0] == c + 1}
    tgt_pos: dict[tuple[str, str], float] = {}
    for a, b in sorted(fl, key=lambda ab: (rank[ab[1]], rank[ab[0]])):
        tgt_pos[(a, b)] = tgt_top[(c + 1, b)]
        tgt_top[(c + 1, b)] -= fl[(a, b)] * unit
    return [Band(nodes[(c, a)], nodes[(c + 1, b)], fl[(a, b)], src_pos[(a, b)] - fl[(a, b)] * unit, src_pos[(a, b)],
                 tgt_pos[(a, b)] - fl[(a, b)] * unit, tgt_pos[(a, b)]) for a, b in by_source]


def _band_outline(b: Band, w: float) -> list[tuple[float, float]]:
    """A band's outline: top cubic Bézier, right edge, bottom Bézier back, close (9 vertices)."""
    x0 = b.source.x + w
    x1 = b.target.x
    xm = 0.5 * (x0 + x1)
    return [(x0, b.sy1), (xm, b.sy1), (xm, b.ty1), (x1, b.ty1), (x1, b.ty0), (xm, b.ty0), (xm, b.sy0), (x0, b.sy0),
            (x0, b.sy1)]


def plot_sankey(sessions_intents: list[list[str]], out_png: str | Path, *, title: str = "",
                positions: int = 5, dpi: int = 150) -> Path:
    """Draw the unfiltered Sankey of the first ``positions`` messages to a PNG and return its path."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import PathPatch, Patch, Rectangle
    from matplotlib.path import Path as MPath

    lay = sankey_layout(sessions_intents, positions=positions)
    fig = Figure(figsize=(3.0 + 2.2 * (positions + 1), 7.5))
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.02, 0.04, 0.80, 0.88))
    codes = [MPath.MOVETO, MPath.CURVE4, MPath.CURVE4, MPath.CURVE4, MPath.LINETO, MPath.CURVE4, MPath.CURVE4,
             MPath.CURVE4, MPath.CLOSEPOLY]
    for b in lay.bands:
        ax.add_patch(PathPatch(MPath(_band_outline(b, lay.node_width), codes), facecolor=COLORS[b.source.label],
                               edgecolor="none", alpha=0.45))
    for nd in lay.nodes:
        ax.add_patch(Rectangle((nd.x, nd.y0), lay.node_width, nd.y1 - nd.y0, facecolor=COLORS[nd.label],
                               edgecolor="black", linewidth=0.4))
        if nd.count / lay.n_sessions >= 0.025:
            ax.text(nd.x + lay.node_width + 0.02, 0.5 * (nd.y0 + nd.y1), f"{nd.label} {nd.count}",
                    va="center", ha="left", fontsize=10)
    for c in range(positions + 1):
        head = f"message {c + 1}" if c < positions else "after"
        ax.text(c * 1.0 + lay.node_width / 2, lay.height + 0.02, head, ha="center", va="bottom", fontsize=12,
                fontweight="bold")
    ax.set_xlim(-0.05, lay.width + 0.45)
    ax.set_ylim(-0.01, lay.height + 0.06)
    ax.axis("off")
    handles = [Patch(facecolor=COLORS[k], edgecolor="black", linewidth=0.4, label=k) for k in NODE_ORDER]
    fig.legend(handles=handles, loc="center left", bbox_to_anchor=(0.83, 0.5), fontsize=10, frameon=False,
               title="intent (all 16, unfiltered)", title_fontsize=10)
    fig.suptitle(title or f"First {positions} user messages ({counted(lay.n_sessions, 'session')})", fontsize=14)
    out = Path(out_png)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=dpi, metadata={"Software": None})
    return out


def sankey_html(sessions_intents: list[list[str]], out_html: str | Path, *, title: str = "",
                positions: int = 5) -> Path:
    """The same diagram as a self-contained interactive HTML page (SVG, tooltips, hover highlight)."""
    lay = sankey_layout(sessions_intents, positions=positions)
    W, H, M = 1100.0, 640.0, 40.0
    sx = (W - 2 * M - 130) / lay.width
    sy = (H - 2 * M) / lay.height

    def X(x: float) -> float:
        return round(M + x * sx, 2)

    def Y(y: float) -> float:
        return round(H - M - y * sy, 2)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W:.0f} {H:.0f}" width="{W:.0f}" height="{H:.0f}">']
    for b in lay.bands:
        d = "M{} C{} {} {} L{} C{} {} {} Z".format(*(f"{X(x)},{Y(y)}" for x, y in _band_outline(b, lay.node_width)[:8]))
        tip = (f"{b.source.label} (message {b.source.column + 1}) \u2192 {b.target.label}: {b.count} sessions "
               f"({100.0 * b.count / lay.n_sessions:.1f}%)")
        parts.append(f'<path class="band" d="{d}" fill="{COLORS[b.source.label]}"><title>{html.escape(tip)}</title></path>')
    for nd in lay.nodes:
        tip = f"{nd.label} at column {nd.column + 1}: {nd.count} sessions ({100.0 * nd.count / lay.n_sessions:.1f}%)"
        parts.append(f'<rect class="node" x="{X(nd.x)}" y="{Y(nd.y1)}" width="{round(lay.node_width * sx, 2)}" '
                     f'height="{round((nd.y1 - nd.y0) * sy, 2)}" fill="{COLORS[nd.label]}">'
                     f'<title>{html.escape(tip)}</title></rect>')
        if nd.count / lay.n_sessions >= 0.025:
            parts.append(f'<text x="{X(nd.x + lay.node_width) + 4}" y="{round(0.5 * (Y(nd.y0) + Y(nd.y1)) + 4, 2)}">'
                         f'{html.escape(nd.label)} {nd.count}</text>')
    for c in range(positions + 1):
        head = f"message {c + 1}" if c < positions else "after"
        parts.append(f'<text class="head" x="{X(c + lay.node_width / 2)}" y="{M - 12}">{head}</text>')
    for i, k in enumerate(NODE_ORDER):
        parts.append(f'<rect x="{W - 150}" y="{M + i * 18}" width="12" height="12" fill="{COLORS[k]}"/>'
                     f'<text x="{W - 132}" y="{M + i * 18 + 10}">{html.escape(k)}</text>')
    parts.append("</svg>")
    ttl = html.escape(title or f"First {positions} user messages ({counted(lay.n_sessions, 'session')})")
    page = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + ttl + "</title>\n<style>"
            "body{font-family:sans-serif} svg text{font-size:11px} svg text.head{font-weight:bold;text-anchor:middle}"
            " .band{opacity:.45} .band:hover{opacity:.9} .node{stroke:#000;stroke-width:.5}"
            "</style></head><body>\n<h3>" + ttl + "</h3>\n<p>Unfiltered: all 16 intent labels; END marks sessions that "
            "stop; hover a band or node for counts.</p>\n" + "\n".join(parts) + "\n</body></html>\n")
    out = Path(out_html)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    return out


__all__ = ["END", "CONTINUES", "COLORS", "NODE_ORDER", "Node", "Band", "SankeyLayout", "sankey_layout",
           "plot_sankey", "sankey_html"]
