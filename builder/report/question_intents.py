"""The same released sessions under both ways of labelling QA turns: the pool's declared intent and the
classifier's label (``classifier.question_intents`` picks the one the release carries).

Issue turns keep their labels; only QA turns change. The sessions are the ones the build chose under the
labelling in use (``tfas_optimized`` is not re-optimized under the other one), so the table shows how much
the choice of labelling moves each score and the intent mix.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Mapping, Sequence

from swe_taskflow.errors import FlowError
from swe_taskflow.flow import count_sessions, score
from swe_taskflow.markdown import table as md_table
from swe_taskflow.target import Target

#: (kind, question_id, intent) of one turn, in delivery order.
TurnRef = tuple[str, "str | None", str]
MODES = ("declared", "classify")


def _relabel(sessions: Sequence[Sequence[TurnRef]], labels: Mapping[str, Mapping[str, str]], mode: str):
    key = "declared_intent" if mode == "declared" else "classified_intent"
    out, mix = [], Counter()
    for turns in sessions:
        seq = []
        for kind, qid, intent in turns:
            if kind == "qa" and qid in labels:
                intent = labels[qid].get(key) or intent
                mix[intent] += 1
            seq.append(intent)
        out.append(seq)
    return out, mix


def _score(target: Target, sessions) -> dict[str, Any]:
    try:
        s = score(target.flow, count_sessions(sessions).normalized())
    except FlowError as exc:
        return {"error": exc.message}
    return {k: round(v, 10) for k, v in s.as_dict().items()}


def compare(target: Target, splits: Mapping[str, Sequence[Sequence[TurnRef]]],
            labels: Mapping[str, Mapping[str, str]], used: str) -> dict[str, Any]:
    """Per split with QA turns: TFAS and components, and the QA turns' intent mix, under both labellings.

    ``labels``: question id -> ``{"declared_intent", "classified_intent"}`` (the classify stage's output)."""
    out: dict[str, Any] = {"used": used, "splits": {}}
    for name, sessions in splits.items():
        n_qa = sum(1 for turns in sessions for kind, _, _ in turns if kind == "qa")
        if not n_qa:
            continue
        row: dict[str, Any] = {"qa_turns": n_qa}
        for mode in MODES:
            seqs, mix = _relabel(sessions, labels, mode)
            row[mode] = {"score": _score(target, seqs), "qa_intents": dict(sorted(mix.items(), key=lambda kv: (-kv[1], kv[0])))}
        row["qa_turns_relabelled"] = sum(1 for turns in sessions for kind, qid, _ in turns if kind == "qa"
                                         and qid in labels and labels[qid].get("declared_intent")
                                         != labels[qid].get("classified_intent"))
        out["splits"][name] = row
    return out


def render_markdown(view: Mapping[str, Any]) -> list[str]:
    """The report section (empty when no split has QA turns)."""
    if not view.get("splits"):
        return []
    md = ["## QA turn intents: declared vs classified", "",
          f"The release labels QA turns with the **{view['used']}** intent (`classifier.question_intents`). "
          "The same sessions scored with the other labelling (issue turns unchanged; `tfas_optimized` is not "
          "re-optimized):", ""]

    def fmt(sc: Mapping[str, Any]) -> str:
        if "tfas" not in sc:
            return sc.get("error", "-")
        return f"{sc['tfas']:.1f} ({sc['S_L']:.3f} / {sc['S_T']:.3f} / {sc['S_R']:.3f})"

    def mix(m: Mapping[str, int]) -> str:
        return ", ".join(f"{k} {v}" for k, v in m.items()) or "-"

    md += md_table(["split", "QA turns", "relabelled by the classifier", "TFAS declared (S_L / S_T / S_R)",
                    "TFAS classified (S_L / S_T / S_R)", "QA intents declared", "QA intents classified"],
                   [(name, r["qa_turns"], r["qa_turns_relabelled"], fmt(r["declared"]["score"]),
                     fmt(r["classify"]["score"]), mix(r["declared"]["qa_intents"]), mix(r["classify"]["qa_intents"]))
                    for name, r in view["splits"].items()], "lrrrrll")
    md.append("")
    return md


__all__ = ["MODES", "compare", "render_markdown"]
