"""TFAS-optimized selection (paper Appendix F): one candidate per task maximizing corpus TFAS.

Settings, constraints and presets live in :mod:`~swe_taskflow.select_config`; this module holds the
search problem, the search and the report.

The benchmark corpus is measured unfiltered (a 1-turn session counts in the length bin ``1``), as
the paper scores Single at S_L = 0; the target's ``min_messages`` filter restricts the candidate
family instead (a task none of whose candidates passes it keeps its full family, status
``below-filter``).

The search problem: each candidate becomes its unnormalized [L, T, R] count vector (computed once
per distinct intent sequence) and its feature row (:data:`~swe_taskflow.select_config.FEATURES`).
Candidates with the same intents and features are interchangeable for TFAS and for every
constraint, so the first in enumeration order stands for all of them.

The search: ``restarts`` random starting selections (fixed seed), each repaired to meet the
constraint bounds; each sweep visits the tasks in a fresh random order and moves each task to its
best candidate given all the others (strict improvement only, never breaking a bound); a restart
stops after a sweep without a move or after ``sweeps`` sweeps; the best restart wins (ties: the
lowest restart index).

Why it is fast: the corpus is kept as running count vectors; a task's candidates are scored all at
once against ``corpus - current + candidate``. A candidate changes only a few count entries, and
block totals take few values per task, so JSD is split into a dense part computed once per distinct
total and a sparse correction per candidate. All restarts advance in lockstep as one numpy batch.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from functools import partial
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from .turns.kinds import AUGMENT_KINDS
from .candidates import (MAX_QUESTIONS, Candidate, IntentSource, PoolSummary, TaskMaterial, build_session,
                         enumerate_distinct, resolve_intents)
from .conditions import FIXED_CONDITIONS, ConditionRow, assemble
from .errors import ConfigError, FlowError, TaskflowError
from .flow import N_L, N_R, N_T, Flow, TFASScore, count_sessions, counts_from_codes, score
from .progress import progress_bar
from .select_config import FEATURES, PLACEMENTS, PRESETS, SelectConfig, describe, describe_split
from .target import Target
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
    distinct = partial(enumerate_distinct, intents=intents, max_questions=config.max_questions_per_task,
                       include_original=config.include_original, max_augments=config.max_augments_per_session)
    for mat in materials:
        fam, n_family = distinct(mat, min_turns=min_turns)
        status = "selected"
        if not fam:
            fam, n_family = distinct(mat, min_turns=1)
            status = "below-filter"
        first: dict[tuple, Candidate] = {}       # (intents, features) -> its first candidate
        for cand in fam:
            first.setdefault((cand.intents, candidate_features(cand)), cand)
        reps, feats = list(first.values()), [f for _, f in first]
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


def _ent(x: np.ndarray) -> np.ndarray:
    """x * log2(x), with 0 log 0 = 0."""
    return x * np.log2(x + (x == 0))


def repair(choice: np.ndarray, feat: np.ndarray, start: np.ndarray, n_valid: np.ndarray, base_feat: np.ndarray,
           lb: np.ndarray, rng: np.random.Generator) -> None:
    """Move one restart's starting selection (in place) until every bound holds.

    Greedy: visit the tasks in random order and move each to the candidate that most reduces the
    total shortfall ``sum(max(0, lb - F))`` (first such candidate on ties); repeat while it shrinks.
    Consumes the generator only when the start falls short, so unconstrained runs draw the same numbers.
    """
    F = base_feat + feat[start + choice].sum(axis=0)
    short = np.maximum(lb - F, 0).sum()
    while short > 0:
        before = short
        for a in rng.permutation(choice.size):
            rows = slice(start[a], start[a] + n_valid[a])
            trial = F[None, :] - feat[start[a] + choice[a]] + feat[rows]
            s = np.maximum(lb[None, :] - trial, 0).sum(axis=1)
            best = int(np.argmin(s))
            if s[best] < short:
                F, short = trial[best], int(s[best])
                choice[a] = best
                if short == 0:
                    return
        if short >= before:
            names = [FEATURES[k] for k in np.flatnonzero(F < lb)]
            raise ConfigError("selection constraints cannot be met together", field="min " + ", ".join(names),
                              expected=[int(x) for x in lb], actual=[int(x) for x in F],
                              hint="lower min_placement_share or the other shares")


@dataclass
class SearchStats:
    """What the search did (deterministic; wall time is reported by callers, never stored here)."""

    evaluations: int = 0
    steps: int = 0
    sweeps_per_restart: list[int] = field(default_factory=list)
    best_restart: int = 0
    restart_tfas: list[float] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        sw = self.sweeps_per_restart
        return {"candidate_evaluations": self.evaluations, "steps": self.steps,
                "best_restart": self.best_restart,
                "sweeps": {"min": min(sw) if sw else 0, "max": max(sw) if sw else 0,
                           "mean": round(float(np.mean(sw)), 6) if sw else 0.0},
                "restart_tfas": {"min": round(min(self.restart_tfas), 10) if sw else 0.0,
                                 "max": round(max(self.restart_tfas), 10) if sw else 0.0}}


@dataclass
class _Candidates:
    """The candidates of the searched tasks, flattened: task ``a`` owns rows ``first[a] : first[a] + count[a]``.

    Each candidate's nonzero counts are kept as *slots*: block ``k`` (length, intent, transition) owns
    the slot range ``slot_ranges[k]``; ``slot_cols`` / ``slot_vals`` hold the flow column and count of
    each slot (unused slots point at the always-zero dummy column).
    """

    first: np.ndarray            # (tasks,) first row of each task
    count: np.ndarray            # (tasks,) candidates per task
    counts: np.ndarray           # (rows, D) count vector of each candidate
    features: np.ndarray         # (rows, features) constraint features of each candidate
    block_totals: np.ndarray     # (rows, 3) messages per block (L, T, R) of each candidate
    slot_cols: np.ndarray        # (rows, slots)
    slot_vals: np.ndarray        # (rows, slots)
    slot_block: np.ndarray       # (slots,) block of each slot
    slot_ranges: list[slice]     # the slots of each block
    distinct_totals: np.ndarray  # (tasks, 3, u) each task's distinct block totals (padded with the last)
    total_index: np.ndarray      # (rows, 3) index of each candidate's block total among its task's distinct ones
    dense_slot: np.ndarray       # (rows, slots) where each slot's dense term sits in a flattened (u, D + 1) row

def _fixed_corpus(families: Sequence[TaskFamily]) -> tuple[np.ndarray, np.ndarray]:
    """Counts (D + 1, dummy column last) and features of the tasks with one candidate: the same in every selection."""
    counts = np.zeros(D + 1)
    feats = np.zeros(len(FEATURES), np.int64)
    for f in families:
        if len(f.candidates) == 1:
            counts[:D] += f.vectors[0]
            feats += f.features[0]
    return counts, feats


def _candidates(fams: Sequence[TaskFamily]) -> _Candidates:
    count = np.array([len(f.candidates) for f in fams])
    first = np.concatenate([[0], np.cumsum(count)[:-1]])
    counts = np.concatenate([f.vectors for f in fams])                  # (rows, D)
    features = np.concatenate([f.features for f in fams])               # (rows, nf)
    n_rows = counts.shape[0]
    widths = np.array([max(1, int(np.count_nonzero(counts[:, sl], axis=1).max())) for sl in SLICES])
    n_slots = int(widths.sum())
    slot_starts = np.concatenate([[0], np.cumsum(widths)])
    slot_cols = np.full((n_rows, n_slots), DUMMY, dtype=np.int64)
    slot_vals = np.zeros((n_rows, n_slots))
    block_totals = np.stack([counts[:, sl].sum(axis=1) for sl in SLICES], axis=1)  # (rows, 3)
    for k, sl in enumerate(SLICES):
        block = counts[:, sl]
        r_i, c_i = np.nonzero(block)                                      # row-major: grouped by candidate
        rank = np.arange(r_i.size) - np.searchsorted(r_i, r_i)            # position within its candidate
        slot_cols[r_i, slot_starts[k] + rank] = c_i + sl.start
        slot_vals[r_i, slot_starts[k] + rank] = block[r_i, c_i]
    slot_block = np.repeat(np.arange(3), widths)
    distinct_totals, total_index = _distinct_totals(first, count, block_totals)
    return _Candidates(
        first=first, count=count, counts=counts, features=features, block_totals=block_totals,
        slot_cols=slot_cols, slot_vals=slot_vals, slot_block=slot_block,
        slot_ranges=[slice(int(slot_starts[k]), int(slot_starts[k + 1])) for k in range(3)],
        distinct_totals=distinct_totals, total_index=total_index,
        dense_slot=total_index[:, slot_block] * (D + 1) + slot_cols)


def _distinct_totals(first: np.ndarray, count: np.ndarray, block_totals: np.ndarray):
    """Each task's distinct block totals (few: they depend on the number of turns only) and each row's index among them."""
    n_tasks = first.size
    uniq = [[np.unique(block_totals[first[a]:first[a] + count[a], k]) for k in range(3)] for a in range(n_tasks)]
    u_max = max(u.size for row in uniq for u in row)
    distinct = np.zeros((n_tasks, 3, u_max))
    index = np.zeros((block_totals.shape[0], 3), np.int64)
    for a in range(n_tasks):
        rows_a = slice(first[a], first[a] + count[a])
        for k in range(3):
            u = uniq[a][k]
            distinct[a, k, :u.size] = u
            distinct[a, k, u.size:] = u[-1]
            index[rows_a, k] = np.searchsorted(u, block_totals[rows_a, k])
    return distinct, index


@dataclass
class _Restarts:
    """The selections of all restarts, kept as running sums so a move updates a few entries."""

    choice: np.ndarray        # (restarts, tasks) local candidate index per task
    corpus: np.ndarray        # (restarts, D + 1) corpus counts
    block_totals: np.ndarray  # (restarts, 3) corpus messages per block
    features: np.ndarray      # (restarts, features) corpus constraint features


def _starting_selections(cand: _Candidates, fixed_counts: np.ndarray, fixed_feats: np.ndarray, lb: np.ndarray,
                         n_restarts: int, rng: np.random.Generator) -> _Restarts:
    """Random starting selections, each repaired to meet the constraint bounds."""
    n_tasks = cand.first.size
    choice = np.floor(rng.random((n_restarts, n_tasks)) * cand.count[None, :]).astype(np.int64)
    corpus = np.repeat(fixed_counts[None, :], n_restarts, axis=0)
    for r in range(n_restarts):
        repair(choice[r], cand.features, cand.first, cand.count, fixed_feats, lb, rng)
        corpus[r, :D] += cand.counts[cand.first + choice[r]].sum(axis=0)
    totals = np.stack([corpus[:, sl].sum(axis=1) for sl in SLICES], axis=1)
    feats = fixed_feats[None, :] + cand.features[cand.first[None, :] + choice].sum(axis=1)
    return _Restarts(choice=choice, corpus=corpus, block_totals=totals, features=feats)


#: Block of each flow column; the dummy column sits in block R (always 0).
_COL_BLOCK = np.repeat(np.arange(3), [N_L, N_T, N_R + 1])
_BLOCK_STARTS = np.array([0, N_L, N_L + N_T])


def _step(cand: _Candidates, state: _Restarts, rows: np.ndarray, tasks: np.ndarray, p: np.ndarray,
          ep: np.ndarray, lb: np.ndarray | None) -> tuple[int, np.ndarray]:
    """Move task ``tasks[i]`` of restart ``rows[i]`` to its best candidate (strict improvement only).

    Returns the number of candidates scored and the mask of rows that moved.
    """
    n = rows.size
    ar = np.arange(n)
    cur = cand.first[tasks] + state.choice[rows, tasks]                 # global index of current candidates
    without = state.corpus[rows]                                         # corpus without the current candidate
    without[ar[:, None], cand.slot_cols[cur]] -= cand.slot_vals[cur]
    totals_without = state.block_totals[rows] - cand.block_totals[cur]
    # dense part, once per distinct block total: dense[b, u, j] = 0.5 ent(q_j) - ent((p_j + q_j) / 2)
    nu = totals_without[:, :, None] + cand.distinct_totals[tasks]      # (n, 3, u)
    inv_u = np.divide(1.0, nu, out=np.zeros_like(nu), where=nu > 0)
    q = without[:, None, :] * inv_u[:, _COL_BLOCK, :].transpose(0, 2, 1)  # (n, u, D+1)
    dense = 0.5 * _ent(q) - _ent(0.5 * (p + q))
    dense_blocks = np.add.reduceat(dense, _BLOCK_STARTS, axis=2).reshape(n, -1)  # (n, u*3) as [u, k]
    # every candidate of every row, flattened: row_of[i] is the restart row, g[i] the global candidate
    nv = cand.count[tasks]
    seg = np.concatenate([[0], np.cumsum(nv)[:-1]])
    row_of = np.repeat(ar, nv)
    g = np.arange(row_of.size) - seg[row_of] + cand.first[tasks][row_of]
    tc = cand.slot_cols[g]                                               # (m, slots)
    totals_with = totals_without[row_of] + cand.block_totals[g]          # (m, 3)
    nj = totals_with[:, cand.slot_block]
    inv = np.divide(1.0, nj, out=np.zeros_like(nj), where=nj > 0)
    qn = (without[row_of[:, None], tc] + cand.slot_vals[g]) * inv
    sparse_fix = (0.5 * _ent(qn) - _ent(0.5 * (p[tc] + qn))
                  - dense.reshape(n, -1)[row_of[:, None], cand.dense_slot[g]])
    scores = np.ones(row_of.size)
    for k in range(3):
        gk = dense_blocks[row_of, cand.total_index[g, k] * 3 + k]
        scores *= np.clip(1.0 - (0.5 * ep[k] + gk + sparse_fix[:, cand.slot_ranges[k]].sum(-1)), 0.0, 1.0)
    ok = (totals_with > 0).all(axis=1)
    if lb is not None:
        ok &= ((state.features[rows][row_of] - cand.features[cur][row_of] + cand.features[g]) >= lb).all(axis=1)
    scores = np.where(ok, scores, -1.0)
    best = np.maximum.reduceat(scores, seg)
    first_best = np.minimum.reduceat(np.where(scores >= best[row_of], np.arange(row_of.size), row_of.size), seg)
    move = best > scores[seg + (cur - cand.first[tasks])] + 1e-12
    if move.any():
        m = np.flatnonzero(move)
        rm, tm, gm = rows[m], tasks[m], g[first_best[m]]
        moved = without[m]
        moved[np.arange(m.size)[:, None], cand.slot_cols[gm]] += cand.slot_vals[gm]
        state.corpus[rm] = moved
        state.block_totals[rm] = totals_without[m] + cand.block_totals[gm]
        state.features[rm] += cand.features[gm] - cand.features[cur[m]]
        state.choice[rm, tm] = gm - cand.first[tm]
    return int(row_of.size), move


def local_search(families: Sequence[TaskFamily], target_flow, config: SelectConfig,
                 lb: np.ndarray | None = None, *, progress: bool = False) -> tuple[list[int], SearchStats]:
    """Index of the chosen candidate in each family, maximizing corpus TFAS (see the module doc).

    ``progress`` shows a bar over sweeps on stderr (only when stderr is a terminal)."""
    lb = np.zeros(len(FEATURES), np.int64) if lb is None else np.asarray(lb, np.int64)
    rng = np.random.default_rng(config.seed)
    n_restarts = config.restarts
    searched = [i for i, f in enumerate(families) if len(f.candidates) > 1]
    fixed_counts, fixed_feats = _fixed_corpus(families)
    stats = SearchStats(sweeps_per_restart=[0] * n_restarts)
    p = np.concatenate([target_flow.length, target_flow.intent, target_flow.transition, [0.0]])
    ep = np.array([_ent(p[s]).sum() for s in SLICES])
    n_tasks = len(searched)
    if n_tasks == 0:
        stats.restart_tfas = [corpus_score(fixed_counts[:D], target_flow).tfas] * n_restarts
        return [0] * len(families), stats

    cand = _candidates([families[i] for i in searched])
    state = _starting_selections(cand, fixed_counts, fixed_feats, lb, n_restarts, rng)
    bound = lb if lb.any() else None
    converged = np.zeros(n_restarts, bool)
    with progress_bar(config.sweeps, desc="select sweeps", unit="sweeps", enabled=progress) as advance:
        for sweep in range(config.sweeps):
            orders = np.argsort(rng.random((n_restarts, n_tasks)), axis=1, kind="stable")
            rows = np.flatnonzero(~converged)
            if rows.size == 0:
                break
            advance(f"{rows.size}/{n_restarts} restarts")
            changed = np.zeros(n_restarts, bool)
            for step in range(n_tasks):
                scored, moved = _step(cand, state, rows, orders[rows, step], p, ep, bound)
                stats.evaluations += scored
                stats.steps += 1
                changed[rows[moved]] = True
            for r in rows:
                stats.sweeps_per_restart[r] = sweep + 1
            converged[rows[~changed[rows]]] = True

    finals = [corpus_score(state.corpus[r, :D], target_flow).tfas for r in range(n_restarts)]
    best_r = int(np.argmax(finals))
    stats.best_restart = best_r
    stats.restart_tfas = finals
    out = [0] * len(families)
    for a, i in enumerate(searched):
        out[i] = int(state.choice[best_r, a])
    return out, stats


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
           "baseline_scores", "augmentation_table", "select_and_report", "D", "DUMMY", "SLICES", "candidate_features",
           "check_reachable", "repair"]
