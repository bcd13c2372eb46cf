"""The result figures of `evaluate import`, drawn from the summary alone (any set of runs).

- ``resolve.png``: resolve rate by condition and runner, bars with the min-max over runs (the paper's
  Figure 2);
- ``checkpoints.png``: resolve and test-pass rate on the clean repository and after each issue turn
  (Appendix H); runners are drawn side by side (small x offsets, their own marker and line style) so
  two identical curves stay visible;
- ``accuracy_by_kind.png``: answer accuracy by turn kind (execute, debug, planning, review, qa, then
  any other kind present), every bar labelled with its value, and "no data" written where a runner has
  no scored answer of that kind, so 0 and "nothing to score" are told apart;
- ``accuracy_vs_resolve.png``: answer accuracy against resolve rate on the tasks that carry questions
  (Figure 10), one point per condition and runner;
- ``cost.png``: tokens and cost per trial relative to single_prompt under the same runner;
- ``stress.png`` (only when stress-test slices ran): each slice's own rate per runner (safe rate for
  destructive-request, correct rate for security-review), in its own figure: stress slices never enter
  the figures above, which show the calibrated conditions only.

Titles say what is counted, nothing more: accuracy is ``correct / (correct + incorrect + unanswered)``,
and unjudged answers (no ``--judge``) are not counted, which the accuracy figure says.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: Answer-turn kinds in the order the accuracy figure shows them (docs/augmentations.md, then QA).
KIND_ORDER = ("execute", "debug", "planning", "review", "qa")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINESTYLES = ("-", "--", "-.", ":")


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _save(fig, out_dir: Path, name: str, plt) -> str:
    fig.savefig(out_dir / name, dpi=120)
    plt.close(fig)
    return name


def _nan(xs):
    return [float("nan") if v is None else v for v in xs]


def _names(summary: list[dict[str, Any]]) -> dict[str, str]:
    """Runner label -> a short legend name (agent/model; the settings hash only where two runners of one
    condition would otherwise share a name)."""
    short = {}
    base = lambda x: x["agent"] if x["model"] == x["agent"] else f"{x['agent']}/{x['model']}"   # noqa: E731
    for g in summary:
        clash = {x["settings_sha256"] for x in summary if base(x) == base(g) and x["condition"] == g["condition"]}
        short[g["label"]] = base(g) if len(clash) == 1 else f"{base(g)} #{g['settings_sha256'][:8]}"
    return short


def plot_checkpoints(summary, out_dir: Path, plt) -> str:
    names = _names(summary)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), constrained_layout=True)
    drawn = [g for g in summary if g["checkpoint_curves"]["resolved"]["mean"]]
    n = max(1, len(drawn))
    for ax, key, title in ((axes[0], "resolved", "resolve rate"), (axes[1], "test_pass_rate", "test-pass rate")):
        for k, g in enumerate(drawn):
            c = g["checkpoint_curves"][key]
            dx = (k - (n - 1) / 2) * min(0.08, 0.4 / n)          # side by side: coinciding curves stay visible
            xs = [p + dx for p in range(len(c["mean"]))]
            ax.plot(xs, _nan(c["mean"]), marker=MARKERS[k % len(MARKERS)], linestyle=LINESTYLES[k % len(LINESTYLES)],
                    markersize=7, linewidth=1.6, alpha=0.9, label=f"{g['condition']} / {names[g['label']]}")
            if g["runs"] > 1:
                ax.fill_between(xs, _nan(c["min"]), _nan(c["max"]), alpha=0.15)
        # at least the clean checkpoint: runs whose every trial errored have no checkpoint (an empty axis, no crash)
        width = max([1] + [len(g["checkpoint_labels"]) for g in summary])
        ax.set_xticks(range(width), ["clean"] + [f"after\nissue turn {p}" for p in range(1, width)], fontsize=8)
        ax.set_ylim(-0.05, 1.05)
        ax.set_ylabel(title)
        ax.set_title(f"Checkpoint {title} (mean over runs; band: min-max)", fontsize=10)
        ax.grid(alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside lower center", ncol=min(3, len(labels)), fontsize=8)
    return _save(fig, out_dir, "checkpoints.png", plt)


def plot_accuracy_by_kind(summary, out_dir: Path, plt) -> str:
    names = _names(summary)
    present = {k for g in summary for k in g["answer_accuracy_by_kind"]}
    kinds = list(KIND_ORDER) + sorted(present - set(KIND_ORDER))
    groups = [g for g in summary if g["trials"] and g["answer_accuracy_by_kind"]]   # runs with answer turns
    n = max(1, len(groups))
    width = 0.8 / n
    fig, ax = plt.subplots(figsize=(max(8.0, 1.6 * len(kinds) + 0.6 * n), 5), constrained_layout=True)
    for k, g in enumerate(groups):
        xs = [j - 0.4 + width * (k + 0.5) for j in range(len(kinds))]
        vals = [(g["answer_accuracy_by_kind"].get(kind) or {}).get("mean") for kind in kinds]
        bars = ax.bar(xs, [0.0 if v is None else v for v in vals], width=width * 0.92,
                      label=f"{g['condition']} / {names[g['label']]}")
        color = bars.patches[0].get_facecolor() if bars.patches else None
        for x, v in zip(xs, vals):
            if v is None:
                ax.text(x, 0.02, "no data", ha="center", va="bottom", rotation=90, fontsize=7, color="0.45")
            else:
                ax.text(x, v + 0.015, f"{v:.2f}", ha="center", va="bottom", fontsize=7, color=color)
    ax.set_xticks(range(len(kinds)), kinds)
    ax.set_xlim(-0.6, len(kinds) - 0.4)
    ax.set_ylim(0, 1.12)
    ax.set_ylabel("accuracy")
    ax.set_title("Answer accuracy by turn kind\ncorrect / (correct + incorrect + unanswered); "
                 "unjudged answers not counted", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    if groups:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    else:
        ax.text((len(kinds) - 1) / 2, 0.5, "no data: no run has an answer turn", ha="center", color="0.45")
    return _save(fig, out_dir, "accuracy_by_kind.png", plt)


def plot_resolve(summary, out_dir: Path, plt) -> str:
    names = _names(summary)
    conds = sorted({g["condition"] for g in summary})
    series = sorted({names[g["label"]] for g in summary})     # unique within a condition (see _names)
    width = 0.8 / max(1, len(series))
    fig, ax = plt.subplots(figsize=(max(7.0, 1.4 * len(conds) + 2), 4.6), constrained_layout=True)
    for k, lab in enumerate(series):
        by = {g["condition"]: g["resolve_rate"] for g in summary if names[g["label"]] == lab}
        xs, ys, lo, hi = [], [], [], []
        for j, c in enumerate(conds):
            r = by.get(c)
            if r is None or r["mean"] is None:
                continue
            xs.append(j - 0.4 + width * (k + 0.5))
            ys.append(r["mean"])
            lo.append(r["mean"] - r["min"])
            hi.append(r["max"] - r["mean"])
        ax.bar(xs, ys, width=width * 0.92, yerr=[lo, hi], capsize=3, label=lab)
        for x, y in zip(xs, ys):
            ax.text(x, y + 0.02, f"{y:.2f}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(conds)), conds, rotation=20 if len(conds) > 4 else 0, ha="right" if len(conds) > 4 else "center")
    ax.set_ylim(0, 1.12)
    ax.set_ylabel("resolve rate")
    ax.set_title("Resolve rate by condition (mean over runs; whiskers: min-max)", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _save(fig, out_dir, "resolve.png", plt)


def plot_accuracy_vs_resolve(summary, out_dir: Path, plt) -> str | None:
    names = _names(summary)
    pts = [g for g in summary if g["question_tasks"]["tasks"] and g["question_tasks"]["answer_accuracy"]["mean"]
           is not None and g["question_tasks"]["resolve_rate"]["mean"] is not None]
    fig, ax = plt.subplots(figsize=(7, 5), constrained_layout=True)
    for k, g in enumerate(pts):
        q = g["question_tasks"]
        ax.scatter([q["resolve_rate"]["mean"]], [q["answer_accuracy"]["mean"]], marker=MARKERS[k % len(MARKERS)], s=60,
                   label=f"{g['condition']} / {names[g['label']]} ({q['tasks']} tasks)")
    if not pts:
        ax.text(0.5, 0.5, "no data: no scored answer on a task with questions", ha="center", va="center",
                color="0.45")
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel("resolve rate (tasks that carry questions)")
    ax.set_ylabel("answer accuracy")
    ax.set_title("Answer accuracy vs resolve rate on the tasks with questions", fontsize=10)
    ax.grid(alpha=0.3)
    if pts:
        ax.legend(fontsize=7, loc="lower right")
    return _save(fig, out_dir, "accuracy_vs_resolve.png", plt)


def plot_cost(relative: list[dict[str, Any]], summary, out_dir: Path, plt) -> str | None:
    rows = [r for r in relative if r["tokens_ratio"] is not None or r["cost_ratio"] is not None]
    if not rows:
        return None
    names = _names(summary)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), constrained_layout=True)
    for ax, key, title in ((axes[0], "tokens_ratio", "tokens per trial"), (axes[1], "cost_ratio", "cost per trial")):
        labels = [f"{r['condition']}\n{names[r['label']]}" for r in rows]
        vals = [r[key] for r in rows]
        ax.bar(range(len(rows)), [0.0 if v is None else v for v in vals])
        for x, v in enumerate(vals):
            ax.text(x, (v or 0.0) + 0.02, "no data" if v is None else f"{v:.2f}x", ha="center", va="bottom",
                    fontsize=7)
        ax.axhline(1.0, color="0.5", linewidth=0.8)
        ax.set_xticks(range(len(rows)), labels, fontsize=7, rotation=30, ha="right")
        ax.set_title(f"{title} relative to single_prompt (same runner)", fontsize=10)
    return _save(fig, out_dir, "cost.png", plt)


def plot_stress(stress: list[dict[str, Any]], out_dir: Path, plt) -> str | None:
    """The stress-test slices' own figure: one bar per (slice, kind, runner), its rate over runs."""
    bars = [(g, kind, k) for g in stress for kind, k in g["stress"].items()]
    if not bars:
        return None
    names = _names(stress)
    fig, ax = plt.subplots(figsize=(max(7.0, 1.2 * len(bars) + 2), 4.6), constrained_layout=True)
    for x, (g, kind, k) in enumerate(bars):
        r = k["rate"]
        if r["mean"] is None:
            ax.text(x, 0.02, "no data", ha="center", va="bottom", rotation=90, fontsize=7, color="0.45")
            continue
        ax.bar([x], [r["mean"]], yerr=[[r["mean"] - r["min"]], [r["max"] - r["mean"]]], capsize=3)
        ax.text(x, r["mean"] + 0.02, f"{r['mean']:.2f} ({k['passed']}/{k['answers']})", ha="center", va="bottom",
                fontsize=7)
    ax.set_xticks(range(len(bars)), [f"{g['condition']}\n{k['rate_name'].replace('_', ' ')}\n{names[g['label']]}"
                                     for g, _, k in bars], fontsize=7)
    ax.set_ylim(0, 1.12)
    ax.set_ylabel("rate")
    ax.set_title("Stress-test slices, apart from the calibrated conditions\nsafe rate: destructive-request; "
                 "correct rate: security-review (mean over runs; whiskers: min-max)", fontsize=9)
    ax.grid(axis="y", alpha=0.3)
    return _save(fig, out_dir, "stress.png", plt)


def plot_all(summary: list[dict[str, Any]], relative: list[dict[str, Any]], out_dir: Path, *,
             stress: list[dict[str, Any]] | None = None) -> list[str]:
    """Every figure (in the order listed in the module docstring); returns the file names written.

    ``summary``: the calibrated conditions only; ``stress``: the stress-test slices (their own figure)."""
    plt = _pyplot()
    out_dir = Path(out_dir)
    files = [plot_resolve(summary, out_dir, plt), plot_checkpoints(summary, out_dir, plt),
             plot_accuracy_by_kind(summary, out_dir, plt), plot_accuracy_vs_resolve(summary, out_dir, plt),
             plot_cost(relative, summary, out_dir, plt)] if summary else []
    files.append(plot_stress(stress or [], out_dir, plt))
    return [f for f in files if f]


__all__ = ["plot_all", "KIND_ORDER"]
