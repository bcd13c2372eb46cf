"""The candidate family with augmentation turns: bounded per task, valid placements only, and the
same family a brute force over all orderings finds."""

from __future__ import annotations

import itertools

import pytest

from swe_taskflow.turns.kinds import KINDS
from swe_taskflow.candidates import (BACKBONES, TaskMaterial, build_materials, build_session, enumerate_candidates,
                                     enumerate_distinct)
from swe_taskflow.conditions import FIXED_CONDITIONS, assemble
from swe_taskflow.schema import QAItem, SplitResult

PARTS = ("part zero", "part one", "part two")
INTENTS = {"original": "new-feature", **{p: "new-feature" for p in PARTS}}
for name, groups in BACKBONES.items():
    if name != "original":
        for g in groups:
            INTENTS["\n\n".join(PARTS[i] for i in g)] = "bug-fix"
INTENTS["original"] = "new-feature"


def _q(qid, kind="qa", part=-1):
    return QAItem(qid, "t1", f"text of {qid}", "ref", kind=kind, intent=KINDS[kind].intent, status="accepted",
                  requirement_part=part)


QA = [_q("q1"), _q("q2")]
AUG = [_q("x1", "execute"), _q("d1", "debug"), _q("p2", "planning", 2), _q("p1", "planning", 1), _q("r1", "review")]


def material(augments=AUG, questions=QA):
    return TaskMaterial("t1", "original", "ok", parts=PARTS, questions=tuple(questions), augments=tuple(augments))


def valid(layout: str, ids, items, groups) -> bool:
    """The placement rules of docs/augmentations.md, checked directly on a layout."""
    issue_at = [i for i, c in enumerate(layout) if c == "I"]
    it = iter(ids)
    for pos, c in enumerate(layout):
        if c == "I":
            continue
        item = items[next(it)]
        slot = sum(1 for i in issue_at if i < pos)
        rule = KINDS[item.kind].placement
        if rule == "before-first-issue" and slot != 0:
            return False
        if rule == "after-last-issue" and slot != len(issue_at):
            return False
        if rule == "before-requirement":
            t = next(i for i, g in enumerate(groups) if not g or item.requirement_part in g)
            if slot != t:
                return False
    return True


def brute_force(mat, max_questions, max_augments):
    """Every ordering of issue turns + a QA subset + an augmentation set (<= 1 per kind) that keeps
    issue and QA order and obeys the rules: an independent enumeration of the family's shapes."""
    items = {q.question_id: q for q in (*mat.questions, *mat.augments)}
    out = set()
    for name, turns in mat.backbones().items():
        groups = [g for _, g in turns]
        m = len(turns)
        for k in range(min(max_questions, len(mat.questions)) + 1):
            for qs in itertools.combinations(mat.questions, k):
                for a in range(max_augments + 1):
                    for aug in itertools.combinations(mat.augments, a):
                        if len({x.kind for x in aug}) < a:
                            continue
                        tokens = [("I", i) for i in range(m)] + [("Q", q.question_id) for q in qs] + \
                                 [("A", x.question_id) for x in aug]
                        for perm in itertools.permutations(tokens):
                            if [t for t in perm if t[0] == "I"] != [("I", i) for i in range(m)]:
                                continue
                            if [t[1] for t in perm if t[0] == "Q"] != [q.question_id for q in qs]:
                                continue
                            lay = "".join("I" if t[0] == "I" else KINDS[items[t[1]].kind].letter for t in perm)
                            ids = tuple(t[1] for t in perm if t[0] != "I")
                            if valid(lay, ids, items, groups):
                                out.add((name, lay, ids))
    return out


@pytest.mark.parametrize("max_augments", [0, 1, 2])
def test_family_equals_the_brute_force(max_augments):
    mat = material(questions=QA[:1])
    fam = enumerate_candidates(mat, INTENTS, max_questions=1, max_augments=max_augments)
    got = [(c.backbone, c.layout, c.question_ids) for c in fam]
    assert len(got) == len(set(got))                      # no duplicate candidate
    assert set(got) == brute_force(mat, 1, max_augments)
    assert all(c.n_augments <= max_augments and len(set(c.augment_kinds())) == c.n_augments for c in fam)


def test_bounds_and_placements_on_the_full_split():
    mat = material()
    fam = enumerate_candidates(mat, INTENTS, max_augments=2)
    split3 = [c for c in fam if c.backbone == "split_3"]
    for c in split3:
        if "X" in c.layout or "D" in c.layout:
            assert c.layout.index("X" if "X" in c.layout else "D") < c.layout.index("I")
        if "R" in c.layout:
            assert c.layout.index("R") > c.layout.rindex("I")
        for pid, turn in (("p2", 2), ("p1", 1)):
            if pid in c.question_ids:
                pos = [i for i, ch in enumerate(c.layout) if ch != "I"][c.question_ids.index(pid)]
                assert sum(ch == "I" for ch in c.layout[:pos]) == turn   # right before the turn it plans
    assert max(c.n_turns for c in fam) == 3 + 2 + 2
    assert not any("p1" in c.question_ids and "p2" in c.question_ids for c in fam)   # one per kind
    # without augmentations the family is the paper's, unchanged
    plain = enumerate_candidates(mat, INTENTS)
    assert [c for c in fam if not c.n_augments] == plain and all(c.n_augments == 0 for c in plain)


def test_sessions_carry_the_kinds_and_fixed_conditions_ignore_augmentations():
    mat = material()
    fam = enumerate_candidates(mat, INTENTS, max_augments=2)
    cand = next(c for c in fam if c.backbone == "split_3" and "X" in c.layout and "R" in c.layout and c.n_questions)
    sess = build_session(mat, cand, INTENTS, condition="tfas_optimized")
    assert [t.kind for t in sess.turns][0] == "execute" and sess.turns[-1].kind == "review"
    assert [t.intent for t in sess.turns] == list(cand.intents) and sess.question_pool is None
    assert cand.n_questions == cand.layout.count("Q") and cand.placement() != "none"
    rows = assemble([mat], INTENTS, conditions=FIXED_CONDITIONS)
    for cond, rs in rows.items():
        kinds = {t.kind for r in rs if r.session for t in r.session.turns}
        assert kinds <= {"issue", "qa"}, cond


def test_build_materials_routes_items_by_kind():
    split = SplitResult("t1", "ok", parts=PARTS, original_prompt="original")
    rejected = QAItem("x9", "t1", "?", "", kind="execute", intent="execute", status="rejected", reason="repeatable: x")
    mats, summary = build_materials([split], [*QA, *AUG, rejected])
    assert [q.question_id for q in mats[0].questions] == ["q1", "q2"]
    assert [a.question_id for a in mats[0].augments] == ["x1", "d1", "p2", "p1", "r1"]
    assert summary.excluded_ids == ("x9",) and summary.used == 7


@pytest.mark.parametrize("max_augments", [0, 2])
def test_distinct_enumeration_keeps_every_representative_and_counts_the_rest(max_augments):
    """What the selection builds: the same first candidate per (intents, question layout), in order,
    and the exact size of the full family, without building the repeats."""
    qs = [_q("q1"), _q("q2"), _q("q3"), QAItem("q4", "t1", "q4", "r", intent="debug", status="accepted")]
    aug = [*AUG, _q("r2", "review")]
    mat = material(augments=aug, questions=qs)
    full = enumerate_candidates(mat, INTENTS, max_augments=max_augments, min_turns=3)
    got, n = enumerate_distinct(mat, INTENTS, max_augments=max_augments, min_turns=3)
    assert n == len(full) and len(got) < len(full)

    def key(c):
        return (c.intents, c.backbone == "split_3", c.layout.replace("X", "A").replace("D", "A")
                .replace("P", "A").replace("R", "A"))
    firsts = {}
    for c in full:
        firsts.setdefault(key(c), c)
    reps = {}
    for c in got:
        reps.setdefault(key(c), c)
    assert reps == firsts
