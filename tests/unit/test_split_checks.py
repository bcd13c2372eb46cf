"""Deterministic split checks on real SWE-Bench Pro issues (MIT, Scale AI; committed in tests/fixtures/).

The structural split must pass; each kind of corruption of it must fail with its own kind.
"""

from __future__ import annotations

import re

import pytest

from builder.split import get_splitter
from builder.sources import load_tasks
from swe_taskflow.split_checks import (KINDS, check_split, extract_artifacts, normalize, requirement_sentences,
                                       violation_kinds)

QUTE = "instance_qutebrowser__qutebrowser-5e0d6dc1483cb3336ea0e3dcbd4fe4aa00fc1742"
NODEBB = "instance_NodeBB__NodeBB-04998908ba6721d64eba79ae3b65a351dcfbc5b5"
AMAZON = "instance_internetarchive__openlibrary-2fe532a33635aab7a9bfea5d977f6a72b280a30c"


@pytest.fixture(scope="module")
def tasks(pro_sample):
    return load_tasks(pro_sample).tasks


def _task(tasks, prefix):
    hits = [t for t in tasks if t.instance_id.startswith(prefix)]
    assert len(hits) == 1, prefix
    return hits[0]


@pytest.fixture(scope="module")
def structural():
    return get_splitter("structural")


def _parts(structural, task):
    res = structural.split(task)
    assert res.status == "ok", (res.reason, res.violations)
    return list(res.parts)


def _structural_split_passes(sample, structural):
    statuses = {}
    for t in sample:
        r = structural.split(t)
        statuses[r.status] = statuses.get(r.status, 0) + 1
        assert r.violations == (), (t.instance_id, r.violations)
        assert r.status in ("ok", "ineligible"), t.instance_id
        if r.status == "ok":
            # independent cross-check: the parts are the original text, only re-spaced
            assert normalize(" ".join(r.parts)) == normalize(t.original_prompt), t.instance_id
        else:
            assert r.reason
    assert statuses["ok"] >= 0.95 * len(sample)


def test_structural_split_passes_on_real_tasks(tasks, structural):
    """Every committed task: no violation, never 'failed'."""
    assert len(tasks) == 14
    _structural_split_passes(tasks, structural)


@pytest.mark.data
def test_structural_split_passes_on_every_4th_of_the_731(shared_dir, structural):
    """Every 4th of the 731 tasks (all 731: benchmarks/split_stats.py)."""
    tasks = load_tasks(shared_dir / "data/swe-bench-pro/swe_bench_pro_public_731.jsonl").tasks
    assert len(tasks) == 731
    _structural_split_passes(tasks[::4], structural)


def test_changed_identifier_is_a_missing_artifact(tasks, structural):
    t = _task(tasks, QUTE)
    parts = _parts(structural, t)
    assert "Array.prototype.at" in parts[1]
    parts[1] = parts[1].replace("Array.prototype.at", "Array.prototype.atIndex")
    # the identifier also occurs in turns 1 and 3: change it everywhere so it is really gone
    parts = [p.replace("Array.prototype.at ", "Array.prototype.atIndex ") for p in parts]
    parts = [re.sub(r"Array\.prototype\.at\b", "Array.prototype.atIndex", p) for p in parts]
    kinds = violation_kinds(check_split(t.original_prompt, parts))
    assert "missing-artifact" in kinds
    assert "added-artifact" in kinds        # the renamed identifier is new to the issue


def test_changed_identifier_in_one_turn_only(tasks, structural):
    t = _task(tasks, NODEBB)
    parts = _parts(structural, t)
    assert "db.mget" in "".join(parts) and "getConfirmObjs" in parts[1]
    parts[1] = parts[1].replace("getConfirmObjs", "getConfirmObjects")
    vs = check_split(t.original_prompt, parts)
    details = " ".join(v.detail for v in vs if v.kind == "missing-artifact")
    assert "getConfirmObjs" in details
    assert any(v.kind == "added-artifact" and "getConfirmObjects" in v.detail for v in vs)


def test_dropped_code_block_is_a_missing_artifact(tasks, structural):
    t = _task(tasks, AMAZON)
    parts = _parts(structural, t)
    block = re.search(r"```.*?```", parts[0], re.S).group(0)
    assert "display_values" in block
    parts[0] = parts[0].replace(block, "")
    vs = check_split(t.original_prompt, parts)
    assert any(v.kind == "missing-artifact" and "display_values" in v.detail for v in vs)


def test_extracted_artifacts_of_a_real_issue():
    issue = ("Fix `db.mget` in src/database/redis/main.js: it raises KeyError: 'confirm:123' after 5000 ms; "
             "see https://example.org/docs/x and set \"email:pending\".")
    arts = extract_artifacts(issue)
    for a in ("db.mget", "src/database/redis/main.js", "KeyError: 'confirm:123' after 5000 ms; see "
              "https://example.org/docs/x and set \"email:pending\"", "https://example.org/docs/x",
              "email:pending", "5000"):
        assert a in arts, (a, arts)


@pytest.mark.parametrize("sentence", [
    "The polyfill should only be injected when the native Array.prototype.at method is not already available in "
    "the JavaScript environment.",
    "The polyfill should be active and functional on LinkedIn domain pages and qutebrowser test domains to ensure "
    "compatibility testing.",
])
def test_dropped_requirement_sentence(tasks, structural, sentence):
    t = _task(tasks, QUTE)
    assert sentence in requirement_sentences(t.original_prompt)
    parts = _parts(structural, t)
    hit = [i for i, p in enumerate(parts) if sentence in p]
    assert hit
    parts[hit[0]] = parts[hit[0]].replace(sentence, "")
    vs = check_split(t.original_prompt, parts)
    assert any(v.kind == "dropped-requirement" and sentence[:40] in v.detail for v in vs), vs


def test_dropped_requirement_bullet_on_another_repo(tasks, structural):
    t = _task(tasks, NODEBB)
    bullet = next(s for s in requirement_sentences(t.original_prompt) if "For Redis, this must be achieved" in s)
    parts = [normalize(p) for p in _parts(structural, t)]
    i = next(i for i, p in enumerate(parts) if bullet in p)
    parts[i] = parts[i].replace(bullet, "")
    assert "dropped-requirement" in violation_kinds(check_split(t.original_prompt, parts))


def test_added_requirement_is_an_added_artifact(tasks, structural):
    t = _task(tasks, QUTE)
    parts = _parts(structural, t)
    parts[2] += "\n\n- The polyfill must also call `console.warn` when the index is larger than 4096."
    vs = check_split(t.original_prompt, parts)
    added = [v.detail for v in vs if v.kind == "added-artifact"]
    assert any("console.warn" in d for d in added) and any("4096" in d for d in added), vs
    assert "missing-artifact" not in violation_kinds(vs)


@pytest.mark.parametrize("phrase", [
    "As split above, here is the rest.",
    "Part 2: continue with the requirements below.",
    "In the previous turn I split the work; now do this.",
    "Now handle the remaining parts of the task.",
])
def test_reference_to_the_split_process(tasks, structural, phrase):
    t = _task(tasks, QUTE)
    parts = _parts(structural, t)
    parts[1] = phrase + "\n\n" + parts[1]
    vs = check_split(t.original_prompt, parts)
    assert "process-reference" in violation_kinds(vs), vs
    assert all(v.detail.startswith("turn 2") for v in vs if v.kind == "process-reference")


def test_phrase_already_in_the_issue_is_not_a_process_reference():
    issue = "The migration has two phases; part 2 must drop the `old_table` column."
    turns = ["The migration has two phases.", "Start the migration.", "part 2 must drop the `old_table` column."]
    assert "process-reference" not in violation_kinds(check_split(issue, turns))


def test_empty_turn_and_wrong_count(tasks, structural):
    t = _task(tasks, QUTE)
    parts = _parts(structural, t)
    kinds = violation_kinds(check_split(t.original_prompt, [parts[0], "  ", parts[1] + parts[2]]))
    assert "empty-turn" in kinds and "wrong-turn-count" not in kinds
    kinds = violation_kinds(check_split(t.original_prompt, [parts[0], parts[1] + "\n" + parts[2]]))
    assert kinds == {"wrong-turn-count"}


def test_all_kinds_are_named():
    assert set(KINDS) == {"missing-artifact", "added-artifact", "dropped-requirement", "process-reference",
                          "empty-turn", "wrong-turn-count"}
