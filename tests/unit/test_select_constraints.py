"""Selection constraints (task count, diversity) and the ``paper`` preset, checked against brute force."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from swe_taskflow.candidates import build_materials, enumerate_candidates
from swe_taskflow.errors import ConfigError
from swe_taskflow.flow import Flow, count_sessions, score
from swe_taskflow.schema import QAItem, SplitResult
from swe_taskflow.select import PRESETS, SelectConfig, describe, select

from test_select import ISSUE, make_target


def qa_instance(seed: int, n_tasks: int = 4, qa_tasks: int = 3, *, ok=None):
    """``n_tasks`` tasks, the first ``qa_tasks`` with 1-2 questions each; ``ok`` lists ok-split flags."""
    rng = np.random.default_rng(seed)
    ok = ok or [True] * n_tasks
    splits = [SplitResult(f"t{i}", "ok" if ok[i] else "ineligible",
                          tuple(f"t{i} part {j}" for j in range(3)) if ok[i] else (), original_prompt=f"t{i} original")
              for i in range(n_tasks)]
    pool = [QAItem(f"q{i}-{k}", f"t{i}", f"question {i}-{k}", "ref", status="accepted", pool="sol",
                   intent="explain" if k == 0 else "question")
            for i in range(qa_tasks) for k in range(int(rng.integers(1, 3)))]
    materials, _ = build_materials(splits, pool)
    intents = {t: ISSUE[int(rng.integers(len(ISSUE)))] for m in materials for t in m.issue_texts()}
    return materials, intents


def placement(layout: str) -> str:
    """Independent of Candidate.placement: where the Q letters sit relative to the I letters."""
    issue = [i for i, c in enumerate(layout) if c == "I"]
    qs = [i for i, c in enumerate(layout) if c == "Q"]
    if not qs:
        return "none"
    if all(i < issue[0] for i in qs):
        return "only_before"
    if all(i > issue[-1] for i in qs):
        return "only_after"
    return "interleaved"


def brute_force(materials, intents, target, cfg: SelectConfig) -> float:
    """Every combination of the full families; every constraint counted from the layouts directly."""
    fams = []
    for m in materials:
        kw = dict(max_questions=cfg.max_questions_per_task, include_original=cfg.include_original)
        fams.append(enumerate_candidates(m, intents, min_turns=target.min_messages, **kw)
                    or enumerate_candidates(m, intents, min_turns=1, **kw))
    n_ok = sum(m.split_ok for m in materials)
    n_qa = sum(1 for m in materials if m.questions and cfg.max_questions_per_task)
    need_split = math.ceil(cfg.min_full_split_share * n_ok - 1e-9)
    need_qa = math.ceil(cfg.min_qa_task_share * n_qa - 1e-9)
    need_place = math.ceil(cfg.min_placement_share * n_qa - 1e-9)
    # corpus counts are sums of per-session counts: count each candidate once, then add
    counts = {c.intents: count_sessions([c.intents]) for fam in fams for c in fam}
    vec = {k: np.concatenate([v.length, v.intent, v.transition]) for k, v in counts.items()}
    one = next(iter(counts.values()))
    cuts = np.cumsum([len(one.length), len(one.intent)])
    best = -1.0
    for combo in itertools.product(*fams):
        if sum(c.backbone == "split_3" for c in combo) < need_split:
            continue
        if sum("Q" in c.layout for c in combo) < need_qa:
            continue
        places = [placement(c.layout) for c in combo]
        if any(places.count(p) < need_place for p in ("only_before", "only_after", "interleaved")):
            continue
        total = np.sum([vec[c.intents] for c in combo], axis=0)
        flow = Flow(*(p / p.sum() for p in np.split(total, cuts)))
        best = max(best, score(target.flow, flow).tfas)
    return best


@pytest.mark.parametrize("seed", (2, 3, 8, 11))
def test_diversity_and_task_count_reach_the_exhaustive_optimum(seed):
    materials, intents = qa_instance(seed)
    target = make_target(seed)
    for cfg in (SelectConfig(seed=seed, include_original=False, min_placement_share=1 / 3),
                SelectConfig(seed=seed, include_original=False, min_qa_task_share=1.0, min_placement_share=0.2),
                SelectConfig(seed=seed, include_original=False, min_qa_task_share=2 / 3)):
        sel = select(materials, intents, target, cfg)
        assert sel.score.tfas == pytest.approx(brute_force(materials, intents, target, cfg), abs=1e-9)
        rep = sel.report()
        for name, c in rep["constraints"].items():
            assert c["achieved"] >= c["bound"], name
        if cfg.min_placement_share == 1 / 3:   # three tasks with questions, one per pattern
            assert rep["placement"] == {"only_before": 1, "only_after": 1, "interleaved": 1}


def test_a_binding_diversity_constraint_costs_tfas_and_is_met():
    """Without the constraint the optimum puts every question in one pattern on this instance; with
    it, each pattern gets its share and the score cannot be higher."""
    materials, intents = qa_instance(7, n_tasks=5, qa_tasks=3)
    target = make_target(7)
    free = select(materials, intents, target, SelectConfig(seed=0, include_original=False))
    tied = select(materials, intents, target, SelectConfig(seed=0, include_original=False, min_placement_share=1 / 3))
    assert min(free.report()["placement"].values()) == 0       # the constraint binds here
    assert tied.score.tfas <= free.score.tfas + 1e-12
    assert min(tied.report()["placement"].values()) >= 1


def test_paper_preset_keeps_issue_turns_and_puts_questions_on_every_task_with_them():
    materials, intents = qa_instance(3, n_tasks=12, qa_tasks=9)
    target = make_target(3)
    cfg = SelectConfig.from_preset("paper", restarts=4)
    assert cfg.preset == "paper" and cfg.overrides() == {"restarts": 4}
    sel = select(materials, intents, target, cfg)
    rows = sel.selection_rows()
    assert all(r["candidate"]["backbone"] == "split_3" for r in rows)
    assert sum(r["candidate"]["n_questions"] > 0 for r in rows) == 9
    rep = sel.report()
    assert rep["preset"] == "paper" and rep["config_overrides"] == {"restarts": 4}
    assert min(rep["placement"].values()) >= math.ceil(0.2 * 9)
    assert "preset paper (overridden: restarts=4)" in rep["config_text"]


def test_preset_values_and_description():
    paper = SelectConfig.from_preset("paper")
    assert paper.to_dict() == {**SelectConfig().to_dict(), **PRESETS["paper"], "preset": "paper"}
    assert paper.overrides() == {}
    text = describe(paper)
    assert text.startswith("preset paper: 64 restarts x <= 20 sweeps, seed 0")
    assert "keep 3 issue turns >= 100%" in text and "each placement pattern >= 20%" in text
    assert describe(SelectConfig()).startswith("no preset: ")
    assert describe(paper.to_dict()) == text
    with pytest.raises(ConfigError, match="unknown selection preset"):
        SelectConfig.from_preset("nope")
    with pytest.raises(ConfigError, match="unknown selection setting"):
        SelectConfig.from_preset("paper", bogus=1)
    with pytest.raises(ConfigError, match="a third"):
        SelectConfig(min_placement_share=0.4)


def test_unmeetable_constraints_fail_clearly():
    # no task has an ok split: a single issue turn cannot have questions between issue turns
    materials, intents = qa_instance(1, ok=[False, False, False, False])
    with pytest.raises(ConfigError, match="cannot be met") as exc:
        select(materials, intents, make_target(1), SelectConfig(min_placement_share=0.3))
    assert "interleaved" in str(exc.value)


def test_unmeetable_constraints_name_the_file_they_came_from():
    """The select stage passes its recipe, the select command its pool (or tasks) file: the error names it."""
    from swe_taskflow.select import select_and_report

    materials, intents = qa_instance(1, ok=[False, False, False, False])
    with pytest.raises(ConfigError, match="cannot be met") as exc:
        select_and_report(materials, intents, make_target(1), SelectConfig(min_placement_share=0.3),
                          where="recipes/r.toml")
    assert exc.value.path == "recipes/r.toml" and exc.value.field == "min interleaved"
    assert str(exc.value).startswith("recipes/r.toml: field 'min interleaved': ")
