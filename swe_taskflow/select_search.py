"""The randomized local search of the TFAS-optimized selection (paper Appendix F).

``restarts`` random starting selections (fixed seed), each repaired to meet the constraint bounds;
each sweep visits the tasks in a fresh random order and moves each task to its best candidate given
all the others (strict improvement only, never breaking a bound); a restart stops after a sweep
without a move or after ``sweeps`` sweeps; the best restart wins (ties: the lowest restart index).

Why it is fast: the corpus is kept as running count vectors; a task's candidates are scored all at
once against ``corpus - current + candidate``. A candidate changes only a few count entries, and
block totals take few values per task, so JSD is split into a dense part computed once per distinct
total and a sparse correction per candidate. All restarts advance in lockstep as one numpy batch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .errors import ConfigError
from .flow import N_L, N_R, N_T
from .select_config import FEATURES, SelectConfig
from .select_families import D, DUMMY, SLICES, TaskFamily, corpus_score


def _ent(x: np.ndarray) -> np.ndarray:
    """x * log2(x), with 0 log 0 = 0."""
    return x * np.log2(x + (x == 0))


def _split_target(target_flow) -> tuple[np.ndarray, np.ndarray]:
    p = np.concatenate([target_flow.length, target_flow.intent, target_flow.transition, [0.0]])
    ep = np.array([_ent(p[s]).sum() for s in SLICES])
    return p, ep


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


def local_search(families: Sequence[TaskFamily], target_flow, config: SelectConfig,
                 lb: np.ndarray | None = None, *, progress: bool = False) -> tuple[list[int], SearchStats]:
    """Index of the chosen candidate in each family, maximizing corpus TFAS (see the module doc).

    ``progress`` shows a bar over sweeps on stderr (only when stderr is a terminal)."""
    nf = len(FEATURES)
    lb = np.zeros(nf, np.int64) if lb is None else np.asarray(lb, np.int64)
    rng = np.random.default_rng(config.seed)
    R = config.restarts
    active = [i for i, f in enumerate(families) if len(f.candidates) > 1]
    base = np.zeros(D + 1)
    base_feat = np.zeros(nf, np.int64)
    for f in families:
        if len(f.candidates) == 1:
            base[:D] += f.vectors[0]
            base_feat += f.features[0]
    stats = SearchStats(sweeps_per_restart=[0] * R)
    p, ep = _split_target(target_flow)
    A = len(active)
    if A == 0:
        stats.restart_tfas = [corpus_score(base[:D], target_flow).tfas] * R
        return [0] * len(families), stats

    # ---- the candidates of all active tasks, flattened: task a owns rows start[a] : start[a] + n_valid[a]
    fams = [families[i] for i in active]
    n_valid = np.array([len(f.candidates) for f in fams])
    start = np.concatenate([[0], np.cumsum(n_valid)[:-1]])
    vecs = np.concatenate([f.vectors for f in fams])                    # (M, D)
    feat = np.concatenate([f.features for f in fams])                   # (M, nf)
    M = vecs.shape[0]
    widths = np.array([max(1, int(np.count_nonzero(vecs[:, sl], axis=1).max())) for sl in SLICES])
    S = int(widths.sum())
    starts = np.concatenate([[0], np.cumsum(widths)])
    slot_ranges = [slice(int(starts[k]), int(starts[k + 1])) for k in range(3)]
    slot_block = np.repeat(np.arange(3), widths)
    cols = np.full((M, S), DUMMY, dtype=np.int64)
    vals = np.zeros((M, S))
    tot = np.stack([vecs[:, sl].sum(axis=1) for sl in SLICES], axis=1)  # (M, 3)
    for k, sl in enumerate(SLICES):
        block = vecs[:, sl]
        r_i, c_i = np.nonzero(block)                                      # row-major: grouped by candidate
        rank = np.arange(r_i.size) - np.searchsorted(r_i, r_i)            # position within its candidate
        cols[r_i, starts[k] + rank] = c_i + sl.start
        vals[r_i, starts[k] + rank] = block[r_i, c_i]
    # distinct block totals per task (few: they depend on the number of turns only)
    uniq = [[np.unique(tot[start[a]:start[a] + n_valid[a], k]) for k in range(3)] for a in range(A)]
    u_max = max(u.size for row in uniq for u in row)
    U = np.zeros((A, 3, u_max))
    uidx = np.zeros((M, 3), np.int64)
    for a in range(A):
        rows_a = slice(start[a], start[a] + n_valid[a])
        for k in range(3):
            u = uniq[a][k]
            U[a, k, :u.size] = u
            U[a, k, u.size:] = u[-1]
            uidx[rows_a, k] = np.searchsorted(u, tot[rows_a, k])
    uslot = uidx[:, slot_block] * (D + 1) + cols                          # where each slot's dense term sits

    # ---- random starting selections (local candidate index per task), repaired to meet the constraints
    choice = np.floor(rng.random((R, A)) * n_valid[None, :]).astype(np.int64)
    for r in range(R):
        repair(choice[r], feat, start, n_valid, base_feat, lb, rng)
    C = np.repeat(base[None, :], R, axis=0)
    for r in range(R):
        C[r, :D] += vecs[start + choice[r]].sum(axis=0)
    Ntot = np.stack([C[:, sl].sum(axis=1) for sl in SLICES], axis=1)
    Fsum = base_feat[None, :] + feat[start[None, :] + choice].sum(axis=1)
    col_block = np.repeat(np.arange(3), [N_L, N_T, N_R + 1])   # the dummy column sits in block R (always 0)
    block_starts = np.array([0, N_L, N_L + N_T])
    check_lb = bool(lb.any())

    bar = None
    if progress:
        import sys

        from tqdm import tqdm
        bar = tqdm(total=config.sweeps, desc="select sweeps", unit="sweep", file=sys.stderr,
                   disable=not sys.stderr.isatty())
    converged = np.zeros(R, bool)
    for sweep in range(config.sweeps):
        orders = np.argsort(rng.random((R, A)), axis=1, kind="stable")
        rows = np.flatnonzero(~converged)
        if rows.size == 0:
            break
        if bar is not None:
            bar.update(1)
            bar.set_postfix(searching=f"{rows.size}/{R} restarts")
        changed = np.zeros(R, bool)
        b = rows.size
        ar = np.arange(b)
        for step in range(A):
            t = orders[rows, step]
            cur = start[t] + choice[rows, t]                                # global index of current candidates
            B = C[rows]
            B[ar[:, None], cols[cur]] -= vals[cur]
            NB = Ntot[rows] - tot[cur]
            # dense part, once per distinct block total: H[b, u, j] = 0.5 ent(q_j) - ent((p_j + q_j) / 2)
            Nu = NB[:, :, None] + U[t]                                     # (b, 3, u)
            inv_u = np.divide(1.0, Nu, out=np.zeros_like(Nu), where=Nu > 0)
            q = B[:, None, :] * inv_u[:, col_block, :].transpose(0, 2, 1)  # (b, u, D+1)
            H = 0.5 * _ent(q) - _ent(0.5 * (p + q))
            G = np.add.reduceat(H, block_starts, axis=2).reshape(b, -1)    # (b, u*3) as [u, k]
            # every candidate of every row, flattened
            nv = n_valid[t]
            seg = np.concatenate([[0], np.cumsum(nv)[:-1]])
            rr = np.repeat(ar, nv)
            g = np.arange(rr.size) - seg[rr] + start[t][rr]                # global candidate index
            tc = cols[g]                                                    # (m, S)
            Na = NB[rr] + tot[g]                                            # (m, 3)
            Nj = Na[:, slot_block]
            inv = np.divide(1.0, Nj, out=np.zeros_like(Nj), where=Nj > 0)
            qn = (B[rr[:, None], tc] + vals[g]) * inv
            diff = 0.5 * _ent(qn) - _ent(0.5 * (p[tc] + qn)) - H.reshape(b, -1)[rr[:, None], uslot[g]]
            sc = np.ones(rr.size)
            for k in range(3):
                gk = G[rr, uidx[g, k] * 3 + k]
                sc *= np.clip(1.0 - (0.5 * ep[k] + gk + diff[:, slot_ranges[k]].sum(-1)), 0.0, 1.0)
            ok = (Na > 0).all(axis=1)
            if check_lb:
                ok &= ((Fsum[rows][rr] - feat[cur][rr] + feat[g]) >= lb).all(axis=1)
            sc = np.where(ok, sc, -1.0)
            stats.evaluations += int(rr.size)
            stats.steps += 1
            seg_max = np.maximum.reduceat(sc, seg)
            first = np.minimum.reduceat(np.where(sc >= seg_max[rr], np.arange(rr.size), rr.size), seg)
            move = seg_max > sc[seg + (cur - start[t])] + 1e-12
            if move.any():
                m = np.flatnonzero(move)
                rm, tm, gm = rows[m], t[m], g[first[m]]
                Bm = B[m]
                Bm[np.arange(m.size)[:, None], cols[gm]] += vals[gm]
                C[rm] = Bm
                Ntot[rm] = NB[m] + tot[gm]
                Fsum[rm] += feat[gm] - feat[cur[m]]
                choice[rm, tm] = gm - start[tm]
                changed[rm] = True
        for r in rows:
            stats.sweeps_per_restart[r] = sweep + 1
        converged[rows[~changed[rows]]] = True

    if bar is not None:
        bar.close()
    finals = [corpus_score(C[r, :D], target_flow).tfas for r in range(R)]
    best_r = int(np.argmax(finals))
    stats.best_restart = best_r
    stats.restart_tfas = finals
    out = [0] * len(families)
    for a, i in enumerate(active):
        out[i] = int(choice[best_r, a])
    return out, stats


__all__ = ["SearchStats", "local_search", "repair"]
