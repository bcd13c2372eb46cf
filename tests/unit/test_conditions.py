"""Condition assembly and the candidate family (pure)."""

from __future__ import annotations

import math

import pytest

from swe_taskflow.candidates import (PART_JOINER, build_materials, build_session, enumerate_candidates, layouts,
                                     resolve_intents)
from swe_taskflow.conditions import FIXED_CONDITIONS, assemble
from swe_taskflow.errors import ConfigError, InputError
from swe_taskflow.schema import SPLIT_NAME_RE, QAItem, SplitResult


def _fixture(n_questions=(3, 0, 1)):
    splits = [SplitResult("a", "ok", ("A1 text", "A2 text", "A3 text"), original_prompt="A original"),
              SplitResult("b", "ineligible", (), reason="atomic issue", original_prompt="B original"),
              SplitResult("c", "failed", (), reason="model refused", original_prompt="C original")]
    pool = []
    for task, n in zip("abc", n_questions):
        pool += [QAItem(f"{task}-q{i}", task, f"{task} question {i}", "ref", status="accepted", pool="sol")
                 for i in range(n)]
    pool += [QAItem("a-cand", "a", "candidate q", "ref", status="candidate"),
             QAItem("z-q", "zzz", "unknown task q", "ref", status="accepted")]
    mats, summary = build_materials(splits, pool)
    texts = [t for m in mats for t in m.issue_texts()]
    intents = {t: ("tests" if "A3" in t and len(t) < 10 else "bug-fix") for t in texts}
    return mats, summary, intents


def test_family_size_matches_the_formula():
    mats, _, intents = _fixture()
    a = mats[0]
    fam = enumerate_candidates(a, intents)
    # backbones with 3, 2, 2, 1 (concat) and 1 (original) issue turns; k of 3 questions; C(m+k, k) layouts
    expected = sum(math.comb(3, k) * math.comb(m + k, k) for m in (3, 2, 2, 1, 1) for k in range(4))
    assert len(fam) == expected
    assert len({(c.backbone, c.layout, c.question_ids) for c in fam}) == expected
    long = enumerate_candidates(a, intents, min_turns=3)
    assert len(long) == sum(1 for c in fam if c.n_turns >= 3)
    assert len(enumerate_candidates(a, intents, max_questions=1)) == sum(
        math.comb(3, k) * math.comb(m + k, k) for m in (3, 2, 2, 1, 1) for k in range(2))
    # a task without an ok split has only the original prompt (plus its questions' placements)
    assert {c.backbone for c in enumerate_candidates(mats[2], intents)} == {"original"}
    assert len(enumerate_candidates(mats[1], intents)) == 1


def test_layouts_keep_both_orders():
    out = layouts(3, 2)
    assert len(out) == math.comb(5, 2) == len(set(out))
    assert all(s.count("I") == 3 and s.count("Q") == 2 for s in out)


def test_pool_filtering_is_reported():
    mats, summary, _ = _fixture()
    assert [len(m.questions) for m in mats] == [3, 0, 1]
    d = summary.to_dict()
    assert d["excluded_question_ids"] == ["a-cand"] and d["unknown_task_question_ids"] == ["z-q"]
    assert d["by_status"] == {"accepted": 5, "candidate": 1}
    splits = [SplitResult("a", "ok", ("x", "y", "z"), original_prompt="o")]
    mats2, _ = build_materials(splits, [QAItem("q", "a", "?", "r", status="candidate")],
                               statuses=("accepted", "candidate"))
    assert len(mats2[0].questions) == 1
    with pytest.raises(InputError, match="duplicate"):
        build_materials(splits + splits)


def test_every_condition_covers_every_task():
    mats, _, intents = _fixture()
    out = assemble(mats, intents, seed=7)
    assert list(out) == list(FIXED_CONDITIONS)
    for cond, rows in out.items():
        assert SPLIT_NAME_RE.match(cond)
        assert [r.instance_id for r in rows] == ["a", "b", "c"]
        assert all(r.status and (r.status == "ok" or r.reason) for r in rows)
    a, b, c = (out["split_prompt"][i] for i in range(3))
    assert [t.text for t in a.session.turns] == ["A1 text", "A2 text", "A3 text"]
    assert [t.split_parts for t in a.session.turns] == [(0,), (1,), (2,)]
    assert b.status == "split-not-ok" and b.split_status == "ineligible" and "atomic issue" in b.reason
    assert [t.text for t in b.session.turns] == ["B original"]
    concat = out["split_prompt_concat"][0].session.turns
    assert len(concat) == 1 and concat[0].text == PART_JOINER.join(["A1 text", "A2 text", "A3 text"])
    assert concat[0].split_parts == (0, 1, 2)
    single = out["single_prompt"][0].session.turns
    assert [t.text for t in single] == ["A original"] and single[0].split_parts == ()


def test_qa_conditions():
    mats, _, intents = _fixture()
    out = assemble(mats, intents, seed=7)
    first = [t.kind for t in out["qa_first"][0].session.turns]
    last = [t.kind for t in out["qa_last"][0].session.turns]
    assert first == ["qa"] * 3 + ["issue"] * 3 and last == ["issue"] * 3 + ["qa"] * 3
    qids = [t.question_id for t in out["qa_last"][0].session.turns if t.kind == "qa"]
    assert qids == ["a-q0", "a-q1", "a-q2"]
    assert all(t.intent == "explain" for t in out["qa_first"][0].session.turns if t.kind == "qa")
    assert out["qa_first"][0].session.question_pool == "sol"
    # no questions: issue turns only (qa_first) / no session (qa_only), each with a status
    assert out["qa_first"][1].status == "no-questions" and out["qa_first"][1].session is not None
    assert out["qa_only"][1].status == "no-questions" and out["qa_only"][1].session is None
    assert [t.kind for t in out["qa_only"][0].session.turns] == ["qa"] * 3
    # a failed split with a question: the question goes around the original prompt
    c = out["qa_last"][2]
    assert c.status == "split-not-ok" and [t.kind for t in c.session.turns] == ["issue", "qa"]


def test_qa_random_is_seeded_and_independent_of_task_order():
    mats, _, intents = _fixture()
    lay = lambda rows: [r.candidate.layout for r in rows]  # noqa: E731
    a = assemble(mats, intents, conditions=["qa_random"], seed=1)["qa_random"]
    b = assemble(mats[::-1], intents, conditions=["qa_random"], seed=1)["qa_random"]
    assert lay(a) == lay(b)[::-1]
    seen = {assemble(mats, intents, conditions=["qa_random"], seed=s)["qa_random"][0].candidate.layout
            for s in range(12)}
    assert len(seen) > 3 and all(x.count("Q") == 3 for x in seen)


def test_intents_resolution_and_errors():
    mats, _, intents = _fixture()
    calls = []

    def classify(texts):
        calls.append(list(texts))
        return ["debug"] * len(texts)

    texts = [t for m in mats for t in m.issue_texts()] * 2
    got = resolve_intents(texts, classify)
    assert len(calls) == 1 and len(calls[0]) == len(set(texts)) and set(got.values()) == {"debug"}
    with pytest.raises(InputError, match="no intent"):
        resolve_intents(["unseen text"], intents)
    with pytest.raises(InputError, match="unknown intent"):
        resolve_intents(["x"], {"x": "bugfix"})
    with pytest.raises(ConfigError, match="unknown condition"):
        assemble(mats, intents, conditions=["qa_sideways"])
    with pytest.raises(ConfigError, match="selection"):
        assemble(mats, intents, conditions=["tfas_optimized"])


def test_build_session_links_back_to_sources():
    mats, _, intents = _fixture()
    cand = next(c for c in enumerate_candidates(mats[0], intents)
                if c.backbone == "merge_01_2" and c.layout == "QIQI")
    s = build_session(mats[0], cand, intents, condition="tfas_optimized")
    assert [t.turn_index for t in s.turns] == [0, 1, 2, 3]
    assert [t.split_parts for t in s.turns] == [(), (0, 1), (), (2,)]
    assert s.turns[1].text == "A1 text" + PART_JOINER + "A2 text"
    assert [t.question_id for t in s.turns] == ["a-q0", None, "a-q1", None]
    assert cand.slots() == {"before": 1, "between": 1, "after": 0} and cand.placement() == "interleaved"


def test_assemble_accepts_a_classifier_callable():
    mats, _, intents = _fixture()
    seen = []

    def classify(texts):
        seen.append(len(texts))
        return [intents[t] for t in texts]

    a = assemble(mats, classify, seed=1)
    b = assemble(mats, intents, seed=1)
    assert seen == [len({t for m in mats for t in m.issue_texts()})]
    assert [[r.to_dict() for r in v] for v in a.values()] == [[r.to_dict() for r in v] for v in b.values()]
