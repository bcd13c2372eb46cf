"""TFAS-optimized selection (paper Appendix F): one candidate per task maximizing corpus TFAS.

The pieces: :mod:`~swe_taskflow.select_config` (settings, constraints, presets),
:mod:`~swe_taskflow.select_families` (each task's candidates as count vectors and features, the
bounds), :mod:`~swe_taskflow.select_search` (the randomized local search). This module ties them
together and reports the result.

The benchmark corpus is measured unfiltered (a 1-turn session counts in the length bin ``1``), as
the paper scores Single at S_L = 0; the target's ``min_messages`` filter restricts the candidate
family instead (a task none of whose candidates passes it keeps its full family, status
``below-filter``).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from .augment.kinds import AUGMENT_KINDS
from .candidates import (MAX_QUESTIONS, Candidate, IntentSource, PoolSummary, TaskMaterial, build_session,
                         resolve_intents)
from .conditions import FIXED_CONDITIONS, ConditionRow, assemble
from .errors import ConfigError, FlowError, TaskflowError
from .flow import TFASScore, count_sessions, score
from .select_config import FEATURES, PLACEMENTS, PRESETS, SelectConfig, describe, describe_split
from .select_families import (TaskFamily, build_families, constraint_bounds, corpus_score, prune_forced,
                              session_vector)
from .select_search import SearchStats, local_search
from .target import Target


@dataclass
class Selection:
    """The chosen candidate of every task, its sessions, the corpus score and the report."""

    families: list[TaskFamily]
    chosen: list[int]
    score: TFASScore
    stats: SearchStats
    config: SelectConfig
    target_name: str
    min_turns: int
    intents: Mapping[str, str]
    bounds: Sequence[int] = ()

    def candidate(self, i: int) -> Candidate:
        return self.families[i].candidates[self.chosen[i]]

    def rows(self) -> list[ConditionRow]:
        out = []
        for i, fam in enumerate(self.families):
            cand = self.candidate(i)
            sess = build_session(fam.material, cand, self.intents, condition="tfas_optimized")
            reason = {"fixed": "one candidate meets the filter and the constraints",
                      "below-filter": f"no candidate has >= {self.min_turns} turns: chosen among shorter ones"
                      }.get(fam.status, "")
            out.append(ConditionRow(fam.material.instance_id, "tfas_optimized",
                                    "ok" if fam.status != "below-filter" else "below-filter", reason,
                                    fam.material.split_status, sess, cand))
        return out

    def selection_rows(self) -> list[dict[str, Any]]:
        """Per task: the chosen candidate and how it was chosen (selection.jsonl)."""
        return [{"instance_id": f.material.instance_id, "status": f.status, "split_status": f.material.split_status,
                 "family_size": f.n_family, "distinct_candidates": len(f.candidates),
                 "available_questions": len(f.material.questions), "candidate": self.candidate(i).to_dict()}
                for i, f in enumerate(self.families)]

    def report(self, baselines: Mapping[str, Any] | None = None) -> dict[str, Any]:
        cands = [self.candidate(i) for i in range(len(self.families))]
        by_q = {str(k): sum(1 for c in cands if c.n_questions == k) for k in range(MAX_QUESTIONS + 1)}
        placements = {k: sum(1 for c in cands if c.placement() == k) for k in PLACEMENTS}
        slots = {k: sum(c.slots()[k] for c in cands) for k in ("before", "between", "after")}
        backbones = Counter(c.backbone for c in cands)
        statuses = Counter(f.status for f in self.families)
        lengths = Counter(str(c.n_turns) for c in cands)
        aug_kinds = Counter(k for c in cands for k in c.augment_kinds())
        feats = np.sum([f.features[c] for f, c in zip(self.families, self.chosen)], axis=0)
        bounds = list(self.bounds) or [0] * len(FEATURES)
        return {
            "target": self.target_name, "min_turns": self.min_turns, "config": self.config.to_dict(),
            "preset": self.config.preset or None, "config_overrides": self.config.overrides(),
            "config_text": describe(self.config),
            "constraints": {name: {"bound": int(bounds[k]), "achieved": int(feats[k])}
                            for k, name in enumerate(FEATURES)},
            "score": {k: round(v, 10) for k, v in self.score.as_dict().items()},
            "tasks": len(self.families), "task_status": dict(sorted(statuses.items())),
            "questions": {"available": sum(len(f.material.questions) for f in self.families),
                          "retained": sum(c.n_questions for c in cands)},
            "sessions_by_questions": by_q, "placement": placements, "questions_by_slot": slots,
            "backbones": dict(sorted(backbones.items())), "sessions_by_turns": dict(sorted(lengths.items())),
            "augmentations": {"available": sum(len(f.material.augments) for f in self.families),
                              "retained": sum(c.n_augments for c in cands), "by_kind": dict(sorted(aug_kinds.items()))},
            "search": self.stats.to_dict(),
            "baselines": dict(baselines or {}),
        }


def select(materials: Sequence[TaskMaterial], intents: IntentSource, target: Target,
           config: SelectConfig = SelectConfig(), *, progress: bool = False) -> Selection:
    """Choose one candidate per task maximizing corpus TFAS against ``target`` (Appendix F).

    ``intents``: a mapping issue text -> intent, or a callable classifying a list of texts."""
    if not materials:
        raise ConfigError("no task to select from", field="tasks")
    intents = resolve_intents([t for m in materials for t in m.issue_texts()], intents)
    min_turns = target.min_messages if config.apply_target_filter else 1
    families = build_families(materials, intents, min_turns=min_turns, config=config)
    lb = constraint_bounds(families, config)
    families = prune_forced(families, lb)
    chosen, stats = local_search(families, target.flow, config, lb, progress=progress)
    vec = np.sum([f.vectors[c] for f, c in zip(families, chosen)], axis=0)
    sc = corpus_score(vec, target.flow)
    return Selection(families, chosen, sc, stats, config, target.name, min_turns, intents, tuple(int(x) for x in lb))


def baseline_scores(materials: Sequence[TaskMaterial], intents: IntentSource, target: Target, *,
                    seed: int = 0) -> dict[str, Any]:
    """TFAS (+ components) of each fixed condition against the target, measured unfiltered (Table 2),
    each with its candidate-selection rule (``selection``)."""
    out: dict[str, Any] = {}
    for cond, rows in assemble(materials, intents, conditions=FIXED_CONDITIONS, seed=seed).items():
        seqs = [r.session.intents for r in rows if r.session is not None]
        try:
            s = score(target.flow, count_sessions(seqs).normalized())
            out[cond] = {k: round(v, 10) for k, v in s.as_dict().items()}
        except FlowError as exc:
            out[cond] = {"error": exc.message}
        out[cond]["selection"] = describe_split(cond, seed=seed)
    return out


def augmentation_table(materials: Sequence[TaskMaterial], intents: IntentSource, target: Target,
                       config: SelectConfig, selection: Selection) -> list[dict[str, Any]]:
    """TFAS (with S_L, S_T, S_R) of the optimized selection without the augmentations, with each kind
    alone, and with all of them: the same search, seed and constraints, only the family differs."""

    def row(name: str, sel: Selection) -> dict[str, Any]:
        rep = sel.report()
        return {"family": name, **rep["score"], "turns": sum(int(k) * v for k, v in rep["sessions_by_turns"].items()),
                "augmentation_turns": rep["augmentations"]["retained"],
                "by_kind": rep["augmentations"]["by_kind"]}

    out = [row("without augmentations (the paper's family)",
               select(materials, intents, target, dataclasses.replace(config, max_augments_per_session=0)))]
    for kind in AUGMENT_KINDS:
        only = [dataclasses.replace(m, augments=tuple(a for a in m.augments if a.kind == kind)) for m in materials]
        if any(m.augments for m in only):
            out.append(row(f"only {kind}", select(only, intents, target, config)))
    out.append(row("with every augmentation kind (published)", selection))
    return out


def select_and_report(materials: Sequence[TaskMaterial], intents: IntentSource, target: Target,
                      config: SelectConfig = SelectConfig(), *, where: str | None = None, baselines: bool = False,
                      pool_summary: PoolSummary | None = None,
                      progress: bool = False) -> tuple[Selection, dict[str, Any]]:
    """The selection and its report: the one way the ``select`` stage and the ``swe-taskflow select`` command
    run and render it. The report adds, to :meth:`Selection.report`, the table with and without augmentations
    when ``config`` admits them, the fixed conditions' scores with ``baselines``, and how the pool was used and
    the tasks' split statuses with ``pool_summary``.

    ``where``: the file the settings or the materials came from (the recipe; the command's pool or tasks
    file), named by an error that names no file of its own, such as constraints the materials cannot meet."""
    try:
        selection = select(materials, intents, target, config, progress=progress)
    except TaskflowError as exc:
        if where is not None and exc.path is None:
            exc.path = str(where)
            exc.args = (str(exc),)
        raise
    report = selection.report(baselines=baseline_scores(materials, intents, target, seed=config.seed)
                              if baselines else None)
    if config.max_augments_per_session:
        report["with_and_without_augmentations"] = augmentation_table(materials, intents, target, config, selection)
    if pool_summary is not None:
        report["pool"] = pool_summary.to_dict()
        report["split_status"] = {s: sum(1 for m in materials if m.split_status == s)
                                  for s in sorted({m.split_status for m in materials})}
    return selection, report


__all__ = ["SelectConfig", "PRESETS", "describe", "TaskFamily", "SearchStats", "Selection", "FEATURES", "session_vector",
           "corpus_score", "build_families", "constraint_bounds", "prune_forced", "local_search", "select",
           "baseline_scores", "augmentation_table", "select_and_report"]
