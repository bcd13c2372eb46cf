"""The selection's search problem: each task's candidate family as count vectors and features, and
the constraint bounds (see :mod:`swe_taskflow.select_config`).

Each candidate becomes its unnormalized [L, T, R] count vector (computed once per distinct intent
sequence) and its feature row (:data:`~swe_taskflow.select_config.FEATURES`). Candidates with the
same intents and features are interchangeable for TFAS and for every constraint, so the first in
enumeration order stands for all of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from .candidates import Candidate, TaskMaterial, enumerate_distinct
from .errors import ConfigError, FlowError
from .flow import N_L, N_R, N_T, TFASScore, counts_from_codes, score
from .select_config import FEATURES, PLACEMENTS, SelectConfig
from .taxonomy import encode

D = N_L + N_T + N_R           # length of a concatenated [L, T, R] count vector
DUMMY = D                     # an always-zero column that pads sparse candidate deltas
SLICES = (slice(0, N_L), slice(N_L, N_L + N_T), slice(N_L + N_T, D))


def session_vector(intents: Sequence[str]) -> np.ndarray:
    """Concatenated unnormalized [L, T, R] counts of one session (length D)."""
    c = counts_from_codes(encode(list(intents)), np.array([len(intents)]))
    return np.concatenate([c.length, c.intent, c.transition])


def corpus_score(vec: np.ndarray, target_flow) -> TFASScore:
    """TFAS of a corpus given as a concatenated count vector (independent of the search arithmetic)."""
    from .flow import Flow
    parts = [np.asarray(vec[s], dtype=np.float64) for s in SLICES]
    if any(p.sum() <= 0 for p in parts):
        raise FlowError("the selection has an empty Task-Flow distribution")
    return score(target_flow, Flow(*[p / p.sum() for p in parts]))


def candidate_features(cand: Candidate) -> tuple[int, ...]:
    """The candidate's row of :data:`FEATURES`."""
    place = cand.placement()
    return (int(cand.full_split), cand.n_questions, int(cand.n_questions > 0), *(int(place == p) for p in PLACEMENTS))


@dataclass
class TaskFamily:
    """One task's candidates after the filter, deduplicated by (intents, features)."""

    material: TaskMaterial
    candidates: list[Candidate]          # unique representatives, in enumeration order
    vectors: np.ndarray                  # (n, D)
    features: np.ndarray                 # (n, len(FEATURES))
    status: str                          # selected | fixed | below-filter
    n_family: int                        # size of the family before deduplication

    def keep(self, mask: np.ndarray) -> "TaskFamily":
        """The family restricted to the candidates where ``mask`` holds."""
        idx = np.flatnonzero(mask)
        status = "fixed" if idx.size == 1 and self.status == "selected" else self.status
        return TaskFamily(self.material, [self.candidates[i] for i in idx], self.vectors[idx], self.features[idx],
                          status, self.n_family)


def build_families(materials: Sequence[TaskMaterial], intents: Mapping[str, str], *, min_turns: int,
                   config: SelectConfig) -> list[TaskFamily]:
    """Each task's filtered, deduplicated family with its count vectors (computed once per intent sequence)."""
    cache: dict[tuple[str, ...], np.ndarray] = {}
    out = []
    for mat in materials:
        kw = dict(max_questions=config.max_questions_per_task, include_original=config.include_original,
                  max_augments=config.max_augments_per_session)
        fam, n_family = enumerate_distinct(mat, intents, min_turns=min_turns, **kw)
        status = "selected"
        if not fam:
            fam, n_family = enumerate_distinct(mat, intents, min_turns=1, **kw)
            status = "below-filter"
        seen: dict[tuple, int] = {}
        reps: list[Candidate] = []
        feats: list[tuple[int, ...]] = []
        for cand in fam:
            f = candidate_features(cand)
            key = (cand.intents, f)
            if key not in seen:
                seen[key] = len(reps)
                reps.append(cand)
                feats.append(f)
        vecs = np.empty((len(reps), D))
        for i, cand in enumerate(reps):
            v = cache.get(cand.intents)
            if v is None:
                v = cache[cand.intents] = session_vector(cand.intents)
            vecs[i] = v
        if len(reps) == 1 and status == "selected":
            status = "fixed"
        out.append(TaskFamily(mat, reps, vecs, np.array(feats, dtype=np.int64).reshape(len(reps), len(FEATURES)),
                              status, n_family))
    return out


def constraint_bounds(families: Sequence[TaskFamily], config: SelectConfig) -> np.ndarray:
    """Lower bounds on the corpus sums of FEATURES that the config's shares imply.

    Denominators: ok-split tasks; usable questions (at most ``max_questions_per_task`` per task);
    tasks that can carry a question (some candidate of theirs has one)."""
    n_ok = sum(1 for f in families if f.material.split_ok)
    n_q = sum(min(len(f.material.questions), config.max_questions_per_task) for f in families)
    n_qa = sum(int(f.features[:, FEATURES.index("qa_task")].max()) for f in families)
    shares = {"full_split": (config.min_full_split_share, n_ok), "questions": (config.min_question_share, n_q),
              "qa_task": (config.min_qa_task_share, n_qa),
              **{p: (config.min_placement_share, n_qa) for p in PLACEMENTS}}
    lb = np.array([math.ceil(shares[k][0] * shares[k][1] - 1e-9) for k in FEATURES], dtype=np.int64)
    check_reachable(families, lb)
    return lb


def check_reachable(families: Sequence[TaskFamily], lb: np.ndarray) -> None:
    """Fail when some bound exceeds what every task at its best could give (a necessary condition)."""
    best = np.sum([f.features.max(axis=0) for f in families], axis=0) if families else np.zeros(len(FEATURES))
    for i, name in enumerate(FEATURES):
        if best[i] < lb[i]:
            raise ConfigError("selection constraints cannot be met", field=f"min {name}",
                              expected=f">= {lb[i]}", actual=int(best[i]),
                              hint="lower the share or add candidates that satisfy it")


def prune_forced(families: Sequence[TaskFamily], lb: np.ndarray) -> list[TaskFamily]:
    """Drop candidates no feasible selection can use: where a bound equals the sum of the tasks'
    maxima (a share of 1.0), every task must take its maximum of that feature. Exact, and it keeps
    the search from spending restarts on moves the constraint would reject."""
    fams = list(families)
    changed = True
    while changed:
        changed = False
        best = np.sum([f.features.max(axis=0) for f in fams], axis=0)
        for k in np.flatnonzero((lb > 0) & (lb == best)):
            for i, f in enumerate(fams):
                mask = f.features[:, k] == f.features[:, k].max()
                if not mask.all():
                    fams[i] = f.keep(mask)
                    changed = True
    check_reachable(fams, lb)
    return fams


__all__ = ["D", "DUMMY", "SLICES", "session_vector", "corpus_score", "candidate_features", "TaskFamily",
           "build_families", "constraint_bounds", "check_reachable", "prune_forced"]
