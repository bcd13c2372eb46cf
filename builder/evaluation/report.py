"""Aggregate judged trials into results: per condition and model, resolve rate, checkpoint curves,
answer accuracy per answer turn, cost and tokens, min-max over runs; plus the plots.

A trial's checkpoints are: the clean repository (the first checkpoint's ``clean_*`` run), then one per
issue turn. Tasks with fewer issue turns keep their last value for the later positions (answer turns
never change the repository). A run is one attempt per task: the k-th trial of a task under a given
agent and model is run k; a rate "over runs" is computed per run, then its mean, min and max reported.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable

from .results import ISSUE, TrialRecord

SCORED = ("correct", "incorrect", "unanswered")


@dataclass
class TrialScore:
    trial: TrialRecord
    run: int
    checkpoints: list[dict[str, Any]]     # position 0 = clean, then one per issue turn
    answers: list[dict[str, Any]]         # one per answer turn: turn_index, kind, question_id, verdict...

    @property
    def resolved(self) -> float | None:
        return self.checkpoints[-1]["resolved"] if len(self.checkpoints) > 1 else None


def _rate(passed: float, failed: float) -> float | None:
    return passed / (passed + failed) if passed + failed else None


def trial_checkpoints(trial: TrialRecord) -> list[dict[str, Any]]:
    issue = [s for s in trial.steps if s.kind == ISSUE]
    out: list[dict[str, Any]] = []
    if issue:
        r = issue[0].rewards
        out.append({"position": 0, "turn_index": None, "resolved": r.get("clean_resolved", 0.0),
                    "f2p_pass_rate": r.get("clean_f2p_pass_rate"), "p2p_pass_rate": r.get("clean_p2p_pass_rate"),
                    "test_pass_rate": _rate(r.get("clean_tests_passed", 0.0), r.get("clean_tests_failed", 0.0)),
                    "patch_sha256": None, "tests_passed": r.get("clean_tests_passed"),
                    "tests_failed": r.get("clean_tests_failed"), "error": None})
    for n, s in enumerate(issue, start=1):
        r = s.rewards
        error = None if "resolved" in r else (s.exception or "the checkpoint wrote no reward")
        out.append({"position": n, "turn_index": s.turn_index, "resolved": r.get("resolved", 0.0),
                    "f2p_pass_rate": r.get("f2p_pass_rate"), "p2p_pass_rate": r.get("p2p_pass_rate"),
                    "test_pass_rate": _rate(r.get("tests_passed", 0.0), r.get("tests_failed", 0.0)),
                    "tests_passed": r.get("tests_passed"), "tests_failed": r.get("tests_failed"),
                    "patch_sha256": (s.checkpoint or {}).get("patch_sha256"), "error": error})
    return out


def assign_runs(trials: Iterable[TrialRecord]) -> dict[str, int]:
    """Trial name -> run index (k-th trial of its task under one agent and model, by start time)."""
    groups: dict[tuple, list[TrialRecord]] = defaultdict(list)
    for t in trials:
        groups[(t.condition, t.agent, t.model, t.instance_id)].append(t)
    return {t.trial: k for ts in groups.values()
            for k, t in enumerate(sorted(ts, key=lambda t: (t.started_at, t.trial)))}


def _mean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def _spread(per_run: list[float | None]) -> dict[str, Any]:
    xs = [x for x in per_run if x is not None]
    if not xs:
        return {"mean": None, "min": None, "max": None, "runs": 0}
    return {"mean": sum(xs) / len(xs), "min": min(xs), "max": max(xs), "runs": len(xs)}


def _curve(scores: list[TrialScore], key: str, width: int) -> list[float | None]:
    rows = []
    for s in scores:
        cps = s.checkpoints
        if not cps:
            continue
        rows.append([cps[min(p, len(cps) - 1)][key] for p in range(width)])   # carry the last value forward
    return [_mean([r[p] for r in rows]) for p in range(width)]


def summarize(scores: list[TrialScore]) -> list[dict[str, Any]]:
    """One summary per (condition, agent, model), in sorted order."""
    groups: dict[tuple, list[TrialScore]] = defaultdict(list)
    for s in scores:
        groups[(s.trial.condition, s.trial.agent, s.trial.model)].append(s)
    out = []
    for (cond, agent, model), ss in sorted(groups.items()):
        width = max((len(s.checkpoints) for s in ss), default=0)
        n_answer = max((len(s.answers) for s in ss), default=0)
        runs = sorted({s.run for s in ss})
        by_run = {r: [s for s in ss if s.run == r] for r in runs}

        def per_run(fn):
            return [fn(by_run[r]) for r in runs]

        def acc(items, position=None):
            vs = [a["verdict"] for s in items for j, a in enumerate(s.answers)
                  if (position is None or j == position) and a["verdict"] in SCORED]
            return sum(v == "correct" for v in vs) / len(vs) if vs else None

        curves = {key: {"mean": _curve(ss, key, width),
                        "min": [min((c[p] for c in cs if c[p] is not None), default=None) for p in range(width)],
                        "max": [max((c[p] for c in cs if c[p] is not None), default=None) for p in range(width)]}
                  for key in ("resolved", "test_pass_rate")
                  for cs in [per_run(lambda items: _curve(items, key, width))]}
        verdicts: dict[str, int] = defaultdict(int)
        for s in ss:
            for a in s.answers:
                verdicts[a["verdict"]] += 1
        out.append({
            "condition": cond, "agent": agent, "model": model, "trials": len(ss),
            "tasks": len({s.trial.instance_id for s in ss}), "runs": len(runs),
            "resolve_rate": _spread(per_run(lambda items: _mean([s.resolved for s in items]))),
            "checkpoint_labels": ["clean"] + [f"after issue turn {p}" for p in range(1, width)],
            "checkpoint_curves": curves,
            "answer_accuracy": _spread(per_run(acc)),
            "answer_accuracy_by_turn": [_spread(per_run(lambda items, j=j: acc(items, j))) for j in range(n_answer)],
            "answer_verdicts": dict(sorted(verdicts.items())),
            "cost_usd": sum(st.cost_usd for s in ss for st in s.trial.steps),
            "tokens_in": sum(st.tokens_in for s in ss for st in s.trial.steps),
            "tokens_out": sum(st.tokens_out for s in ss for st in s.trial.steps),
            "api_calls": sum(st.api_calls for s in ss for st in s.trial.steps),
            "errors": sum(1 for s in ss if s.trial.exception or any(c["error"] for c in s.checkpoints[1:])),
        })
        g = out[-1]
        g["cost_usd_per_trial"] = g["cost_usd"] / len(ss)
        g["tokens_per_trial"] = (g["tokens_in"] + g["tokens_out"]) / len(ss)
    return out


def plot(summary: list[dict[str, Any]], out_dir) -> list[str]:
    """checkpoints.png (resolve and test-pass rate per checkpoint) and accuracy.png (per answer turn)."""
    from pathlib import Path

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    out_dir = Path(out_dir)
    files = []
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    for ax, key, title in ((axes[0], "resolved", "resolve rate"), (axes[1], "test_pass_rate", "test-pass rate")):
        for g in summary:
            c = g["checkpoint_curves"][key]
            if not c["mean"]:
                continue
            xs = list(range(len(c["mean"])))
            label = f"{g['condition']} / {g['model']}"
            ax.plot(xs, [v if v is not None else float("nan") for v in c["mean"]], marker="o", label=label)
            if g["runs"] > 1:
                ax.fill_between(xs, [v if v is not None else float("nan") for v in c["min"]],
                                [v if v is not None else float("nan") for v in c["max"]], alpha=0.2)
        width = max((len(g["checkpoint_labels"]) for g in summary), default=1)
        ax.set_xticks(range(width), ["clean"] + [f"turn {p}" for p in range(1, width)])
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"Checkpoint {title}")
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=7, loc="lower right")
    fig.savefig(out_dir / "checkpoints.png", dpi=120)
    plt.close(fig)
    files.append("checkpoints.png")
    fig, ax = plt.subplots(figsize=(7, 4), constrained_layout=True)
    labels, width = [], 0.8 / max(1, len(summary))
    for k, g in enumerate(summary):
        vals = [a["mean"] for a in g["answer_accuracy_by_turn"]]
        xs = [j + k * width for j in range(len(vals))]
        ax.bar(xs, [v if v is not None else 0.0 for v in vals], width=width, label=f"{g['condition']} / {g['model']}")
        labels = max(labels, [f"answer turn {j + 1}" for j in range(len(vals))], key=len)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(labels))], labels)
    ax.set_ylim(0, 1.02)
    ax.set_title("Answer accuracy per answer turn (judged)")
    ax.legend(fontsize=7)
    fig.savefig(out_dir / "accuracy.png", dpi=120)
    plt.close(fig)
    files.append("accuracy.png")
    return files


__all__ = ["TrialScore", "trial_checkpoints", "assign_runs", "summarize", "plot"]
