"""TFAS-optimized selection (paper Appendix F): one candidate per task maximizing corpus TFAS.

The search is the paper's randomized local search: ``restarts`` random starting selections (fixed
seed); each sweep visits the tasks in a fresh random order and moves each task to its best
candidate given all the others (strict improvement only); a restart stops after a sweep without a
move or after ``sweeps`` sweeps; the best restart wins (ties: the lowest restart index).

Why it is fast: every candidate's unnormalized counts (L, T, R) are computed once; the corpus
is kept as running count vectors; a task's candidates are scored all at once against
``corpus - current + candidate``. A candidate changes only a few count entries, and block totals
take few values per task, so JSD is split into a dense part computed once per distinct total and
a sparse correction per candidate. All restarts advance in lockstep as one numpy batch.

The benchmark corpus is measured unfiltered (a 1-turn session counts in the length bin ``1``), as
the paper scores Single at S_L = 0; the target's ``min_messages`` filter restricts the candidate
family instead (a task none of whose candidates passes it keeps its full family, status
``below-filter``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from .candidates import (MAX_QUESTIONS, Candidate, IntentSource, TaskMaterial, build_session,
                         enumerate_distinct, resolve_intents)
from .conditions import FIXED_CONDITIONS, ConditionRow, assemble
from .errors import ConfigError, FlowError
from .flow import N_L, N_R, N_T, TFASScore, counts_from_codes, count_sessions, score
from .target import Target
from .taxonomy import encode

D = N_L + N_T + N_R           # length of a concatenated [L, T, R] count vector
DUMMY = D                     # an always-zero column that pads sparse candidate deltas
_SLICES = (slice(0, N_L), slice(N_L, N_L + N_T), slice(N_L + N_T, D))
FEATURES = ("full_split", "questions")   # per-candidate quantities the constraints bound from below


@dataclass(frozen=True)
class SelectConfig:
    """How the TFAS-optimized selection searches, and the constraints it must respect."""

    restarts: int = 64
    """Random starting selections (paper: 64)."""
    sweeps: int = 20
    """At most this many sweeps over all tasks per restart (paper: 20)."""
    seed: int = 0
    """Seed of the one numpy generator all randomness comes from."""
    max_questions_per_task: int = MAX_QUESTIONS
    """Most questions one session may carry (0..3)."""
    include_original: bool = True
    """Whether the original single prompt (and its QA placements) is in the family of ok-split tasks."""
    apply_target_filter: bool = True
    """Keep only candidates with at least ``target.min_messages`` turns (the long-slice filter)."""
    min_full_split_share: float = 0.0
    """Share (0..1) of ok-split tasks that must keep their three issue turns (1.0: the paper's run,
    where the optimizer only chose how many questions and where)."""
    min_question_share: float = 0.0
    """Share (0..1) of the usable questions (at most ``max_questions_per_task`` per task) to keep."""
    max_augments_per_task: int = 0
    """Augmentation turns (execute, debug, planning, review; at most one per kind) one session may add
    (0: the paper's family of issue and QA turns)."""

    def __post_init__(self) -> None:
        for name, lo in (("restarts", 1), ("sweeps", 1)):
            v = getattr(self, name)
            if not isinstance(v, int) or v < lo:
                raise ConfigError("must be an integer >= 1", field=name, actual=v)
        if not isinstance(self.seed, int) or self.seed < 0:
            raise ConfigError("seed must be a non-negative integer", field="seed", actual=self.seed)
        if not isinstance(self.max_questions_per_task, int) or not 0 <= self.max_questions_per_task <= MAX_QUESTIONS:
            raise ConfigError("out of range", field="max_questions_per_task", expected=f"0..{MAX_QUESTIONS}",
                              actual=self.max_questions_per_task)
        if not isinstance(self.max_augments_per_task, int) or not 0 <= self.max_augments_per_task <= 4:
            raise ConfigError("out of range", field="max_augments_per_task", expected="0..4",
                              actual=self.max_augments_per_task)
        for name in ("min_full_split_share", "min_question_share"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not 0.0 <= float(v) <= 1.0:
                raise ConfigError("a share must lie in [0, 1]", field=name, actual=v)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---------------------------------------------------------------------------------------------
# per-candidate counts


def session_vector(intents: Sequence[str]) -> np.ndarray:
    """Concatenated unnormalized [L, T, R] counts of one session (length D)."""
    c = counts_from_codes(encode(list(intents)), np.array([len(intents)]))
    return np.concatenate([c.length, c.intent, c.transition])


def _ent(x: np.ndarray) -> np.ndarray:
    """x * log2(x), with 0 log 0 = 0."""
    return x * np.log2(x + (x == 0))


def _split_target(target_flow) -> tuple[np.ndarray, np.ndarray]:
    p = np.concatenate([target_flow.length, target_flow.intent, target_flow.transition, [0.0]])
    ep = np.array([_ent(p[s]).sum() for s in _SLICES])
    return p, ep


def corpus_score(vec: np.ndarray, target_flow) -> TFASScore:
    """TFAS of a corpus given as a concatenated count vector (independent of the search arithmetic)."""
    from .flow import Flow
    parts = [np.asarray(vec[s], dtype=np.float64) for s in _SLICES]
    if any(p.sum() <= 0 for p in parts):
        raise FlowError("the selection has an empty Task-Flow distribution")
    return score(target_flow, Flow(*[p / p.sum() for p in parts]))


# ---------------------------------------------------------------------------------------------
# the search problem


@dataclass
class TaskFamily:
    """One task's candidates after the filter, deduplicated by (intents, features)."""

    material: TaskMaterial
    candidates: list[Candidate]          # unique representatives, in enumeration order
    vectors: np.ndarray                  # (n, D)
    features: np.ndarray                 # (n, len(FEATURES))
    status: str                          # selected | fixed | below-filter
    n_family: int                        # size of the family before deduplication


def build_families(materials: Sequence[TaskMaterial], intents: Mapping[str, str], *, min_turns: int,
                   config: SelectConfig) -> list[TaskFamily]:
    """Each task's filtered, deduplicated family with its count vectors (computed once per intent sequence)."""
    cache: dict[tuple[str, ...], np.ndarray] = {}
    out = []
    for mat in materials:
        kw = dict(max_questions=config.max_questions_per_task, include_original=config.include_original,
                  max_augments=config.max_augments_per_task)
        fam, n_family = enumerate_distinct(mat, intents, min_turns=min_turns, **kw)
        status = "selected"
        if not fam:
            fam, n_family = enumerate_distinct(mat, intents, min_turns=1, **kw)
            status = "below-filter"
        seen: dict[tuple, int] = {}
        reps: list[Candidate] = []
        for cand in fam:
            key = (cand.intents, cand.full_split, cand.n_questions)
            if key not in seen:
                seen[key] = len(reps)
                reps.append(cand)
        vecs = np.empty((len(reps), D))
        for i, cand in enumerate(reps):
            v = cache.get(cand.intents)
            if v is None:
                v = cache[cand.intents] = session_vector(cand.intents)
            vecs[i] = v
        feats = np.array([[int(c.full_split), c.n_questions] for c in reps], dtype=np.int64)
        if len(reps) == 1 and status == "selected":
            status = "fixed"
        out.append(TaskFamily(mat, reps, vecs, feats, status, n_family))
    return out


def constraint_bounds(families: Sequence[TaskFamily], config: SelectConfig) -> np.ndarray:
    """Lower bounds on the corpus sums of FEATURES that the config's shares imply."""
    n_ok = sum(1 for f in families if f.material.split_ok)
    n_q = sum(min(len(f.material.questions), config.max_questions_per_task) for f in families)
    lb = np.array([math.ceil(config.min_full_split_share * n_ok - 1e-9),
                   math.ceil(config.min_question_share * n_q - 1e-9)], dtype=np.int64)
    best = np.sum([f.features.max(axis=0) for f in families], axis=0) if families else np.zeros(2, np.int64)
    for i, name in enumerate(FEATURES):
        if best[i] < lb[i]:
            raise ConfigError("selection constraints cannot be met", field=f"min_{name}",
                              expected=f">= {lb[i]}", actual=int(best[i]),
                              hint="lower the share or add candidates that satisfy it")
    return lb


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
    widths = np.array([max(1, int(np.count_nonzero(vecs[:, sl], axis=1).max())) for sl in _SLICES])
    S = int(widths.sum())
    starts = np.concatenate([[0], np.cumsum(widths)])
    slot_ranges = [slice(int(starts[k]), int(starts[k + 1])) for k in range(3)]
    slot_block = np.repeat(np.arange(3), widths)
    cols = np.full((M, S), DUMMY, dtype=np.int64)
    vals = np.zeros((M, S))
    tot = np.stack([vecs[:, sl].sum(axis=1) for sl in _SLICES], axis=1)  # (M, 3)
    for k, sl in enumerate(_SLICES):
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
    top = [int(np.lexsort((-feat[start[a]:start[a] + n_valid[a], 1],
                           -feat[start[a]:start[a] + n_valid[a], 0]))[0]) for a in range(A)]
    for r in range(R):
        fs = base_feat + feat[start + choice[r]].sum(axis=0)
        if (fs < lb).any():
            for a in rng.permutation(A):
                fs += feat[start[a] + top[a]] - feat[start[a] + choice[r, a]]
                choice[r, a] = top[a]
                if (fs >= lb).all():
                    break
    C = np.repeat(base[None, :], R, axis=0)
    for r in range(R):
        C[r, :D] += vecs[start + choice[r]].sum(axis=0)
    Ntot = np.stack([C[:, sl].sum(axis=1) for sl in _SLICES], axis=1)
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


# ---------------------------------------------------------------------------------------------
# the selection and its report


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

    def candidate(self, i: int) -> Candidate:
        return self.families[i].candidates[self.chosen[i]]

    def rows(self) -> list[ConditionRow]:
        out = []
        for i, fam in enumerate(self.families):
            cand = self.candidate(i)
            sess = build_session(fam.material, cand, self.intents, condition="tfas_optimized")
            reason = {"fixed": "one candidate passes the filter",
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
        placements = {k: sum(1 for c in cands if c.placement() == k)
                      for k in ("only_before", "only_after", "interleaved")}
        slots = {k: sum(c.slots()[k] for c in cands) for k in ("before", "between", "after")}
        backbones: dict[str, int] = {}
        for c in cands:
            backbones[c.backbone] = backbones.get(c.backbone, 0) + 1
        statuses: dict[str, int] = {}
        for f in self.families:
            statuses[f.status] = statuses.get(f.status, 0) + 1
        lengths: dict[str, int] = {}
        for c in cands:
            lengths[str(c.n_turns)] = lengths.get(str(c.n_turns), 0) + 1
        aug_kinds: dict[str, int] = {}
        for c in cands:
            for k in c.augment_kinds():
                aug_kinds[k] = aug_kinds.get(k, 0) + 1
        return {
            "target": self.target_name, "min_turns": self.min_turns, "config": self.config.to_dict(),
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
    chosen, stats = local_search(families, target.flow, config, lb, progress=progress)
    vec = np.sum([f.vectors[c] for f, c in zip(families, chosen)], axis=0)
    sc = corpus_score(vec, target.flow)
    return Selection(families, chosen, sc, stats, config, target.name, min_turns, intents)


def baseline_scores(materials: Sequence[TaskMaterial], intents: IntentSource, target: Target, *,
                    seed: int = 0) -> dict[str, Any]:
    """TFAS (+ components) of each fixed condition against the target, measured unfiltered (Table 2)."""
    out: dict[str, Any] = {}
    for cond, rows in assemble(materials, intents, conditions=FIXED_CONDITIONS, seed=seed).items():
        seqs = [r.session.intents for r in rows if r.session is not None]
        try:
            s = score(target.flow, count_sessions(seqs).normalized())
            out[cond] = {k: round(v, 10) for k, v in s.as_dict().items()}
        except FlowError as exc:
            out[cond] = {"error": exc.message}
    return out


__all__ = ["SelectConfig", "TaskFamily", "SearchStats", "Selection", "FEATURES", "session_vector",
           "corpus_score", "build_families", "constraint_bounds", "local_search", "select", "baseline_scores"]
