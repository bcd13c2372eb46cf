"""The [augmentations] recipe section, the reference re-checks of `verify --reprove`, and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builder.cli import main
from builder.pipeline.recipe import load_recipe
from swe_taskflow.turns import mutate
from swe_taskflow.turns.registry import recheck
from swe_taskflow.errors import ConfigError

from tests.support.augment_cart import FIX, cart_task

ROOT = Path(__file__).resolve().parents[2]
NONE = '[questions]\nmode = "none"\n[conditions]\nnames = ["single_prompt"]\n'


def _write(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "r.toml"
    p.write_text('[release]\nname = "x"\nversion = "1"\n[source]\nspec = "tasks.jsonl"\n' + NONE + body)
    return p


def test_example_recipe_turns_augmentations_on():
    r = load_recipe(ROOT / "builder" / "releases" / "example.toml")
    assert set(r.augmentations.kinds) == {"execute", "debug", "planning", "review"}
    assert r.augmentations.max_per_session > 0 and all(r.resolve(f).is_file() for f in r.augmentations.specs)


def test_defaults_keep_augmentations_off(tmp_path):
    r = load_recipe(_write(tmp_path, ""))
    assert r.augmentations.kinds == () and r.augmentations.writer == "template"


@pytest.mark.parametrize("body, field, words", [
    ('[augmentations]\nkinds = ["refactor"]\n', "augmentations.kinds[0]", "unknown augmentation kind"),
    ('[augmentations]\nwriter = "gpt"\n', "augmentations.writer", "unknown augmentation writer"),
    ('[augmentations]\nwriter = "llm"\n', "augmentations.llm", "needs augmentations.llm"),
    ('[augmentations]\nmax_per_session = 9\n', "augmentations.max_per_session", "out of range"),
    ('[augmentations]\nintents = "guess"\n', "augmentations.intents", "unknown augmentation intents"),
    ('[augmentations]\nspecs = ["nope.jsonl"]\n', "augmentations.specs[0]", "not found"),
    ('[augmentations]\nper_kind = "two"\n', "augmentations.per_kind", "wrong type"),
    ('[augmentations]\ncolour = 1\n', "augmentations.colour", "unknown key"),
])
def test_bad_augmentations_section(tmp_path, body, field, words):
    with pytest.raises(ConfigError) as exc:
        load_recipe(_write(tmp_path, body))
    assert exc.value.field == field and words in str(exc.value) and "r.toml" in str(exc.value)


# ---------------------------------------------------------------- verify --reprove re-checks
def _record(**kw):
    return {"kind": "planning", "facts": [], "locations": [], "mutation": None, "generator": "{}", **kw}


def test_recheck_against_the_source_task():
    task = cart_task()
    repo = FIX / "repo"
    req = "- A `discount` outside [0, 1] should raise `ValueError`."
    good = _record(facts=[{"name": "requirement", "value": req}],
                   locations=[{"path": "shop/cart.py", "symbol": "Cart.total", "line_start": 18, "line_end": 19}])
    assert recheck(good, "", task=task, repo=repo) == []
    moved = _record(facts=good["facts"], locations=[{"path": "shop/cart.py", "symbol": "Cart.add", "line_start": 10,
                                                      "line_end": 13}])
    msgs = [m for m, _ in recheck(moved, "", task=task, repo=repo)]
    assert any("not code the gold patch changes" in m for m in msgs) and any("other gold-patch code" in m for m in msgs)
    # review: the turn must show the gold patch with exactly the recorded defect
    site = mutate.sites(task.patch)[0]
    rev = {"kind": "review", "facts": [], "mutation": site.to_dict(), "generator": "{}",
           "locations": [{"path": site.path, "symbol": "Cart.total", "line_start": site.line, "line_end": site.line}]}
    shown = "Please review:\n```diff\n" + mutate.review_diff(task.patch, site) + "\n```"
    assert recheck(rev, shown, task=task, repo=repo) == []
    other = mutate.review_diff(task.patch, mutate.sites(task.patch)[1])
    assert [f for _, f in recheck(rev, other, task=task, repo=repo)] == ["mutation"]
    # debug: the test must be FAIL_TO_PASS
    dbg = {"kind": "debug", "facts": [{"name": "test", "value": "tests/test_cart.py::TestCart::test_add"}],
           "locations": [], "mutation": None, "generator": "{}"}
    assert [f for _, f in recheck(dbg, "", task=task, repo=repo)] == ["facts"]
    # without the source task only the sandbox output is re-derived
    assert recheck(moved, "", task=None, repo=repo) == []


def test_augment_cli_planning_and_score(tmp_path, capsys):
    tasks = tmp_path / "tasks.jsonl"
    d = json.loads((FIX / "task.json").read_text())
    d.update(patch=(FIX / "gold.patch").read_text(), test_patch=(FIX / "test.patch").read_text())
    tasks.write_text(json.dumps(d) + "\n")
    out = tmp_path / "items.jsonl"
    assert main(["augment", "run", "--tasks", str(tasks), "--out", str(out), "--kinds", "planning"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["by_kind_status"] == {"planning": {"accepted": 2}}
    item = json.loads(out.read_text().splitlines()[-1])
    (tmp_path / "item.json").write_text(json.dumps(item))
    (tmp_path / "good.txt").write_text("I would change `Cart.total` in shop/cart.py to validate the discount.")
    (tmp_path / "bad.txt").write_text("I would add a new module.")
    assert main(["augment", "score", str(tmp_path / "item.json"), str(tmp_path / "good.txt")]) == 0
    assert json.loads(capsys.readouterr().out)["correct"] is True
    assert main(["augment", "score", str(tmp_path / "item.json"), str(tmp_path / "bad.txt")]) == 1
    assert main(["augment", "run", "--tasks", str(tasks), "--out", str(out), "--kinds", "refactor"]) == 2


def test_augment_score_reads_a_tests_turns_verdict(tmp_path, capsys):
    """[hand-written item and verdicts] a tests turn is scored on its verifier's verdict (``--verdict``)."""
    item = {"kind": "tests", "question_id": "t", "facts": [{"name": "failing_test", "value": "tests/test_d.py::T::t"}]}
    (tmp_path / "item.json").write_text(json.dumps(item))
    (tmp_path / "a.txt").write_text("I added tests/test_new.py")
    good = {"only_tests": True, "gold_applies": True, "fails_before": True, "passes_after": True}
    for name, verdict in (("good", good), ("code", {**good, "only_tests": False}), ("list", [good])):
        (tmp_path / f"{name}.json").write_text(json.dumps(verdict))
    argv = ["augment", "score", str(tmp_path / "item.json"), str(tmp_path / "a.txt")]
    assert main([*argv, "--verdict", str(tmp_path / "good.json")]) == 0
    assert json.loads(capsys.readouterr().out)["details"]["why"] == "fails before the change and passes after it"
    assert main([*argv, "--verdict", str(tmp_path / "code.json")]) == 1
    assert main(argv) == 1                                        # no verdict: the test was never run
    assert "not run" in json.loads(capsys.readouterr().out.splitlines()[-1])["details"]["why"]
    assert main([*argv, "--verdict", str(tmp_path / "list.json")]) == 2
    assert "a verdict is a JSON object" in capsys.readouterr().err


def test_augmentation_references_are_hidden_from_the_agent():
    """Built through build_row and split with swe_taskflow.visibility: the agent sees the turn's kind and
    text, never its reference (an allowlist: the new fields are hidden without being named)."""
    from swe_taskflow.candidates import TaskMaterial, build_session, enumerate_candidates
    from swe_taskflow.rows import build_row
    from swe_taskflow.schema import QAItem
    from swe_taskflow.visibility import agent_view, grader_view, merge_views

    task = cart_task()
    secret = "SECRET-REFERENCE-7f3a"
    items = [QAItem("x", task.instance_id, "Run `python3 -m unittest -v` and count the tests.", secret,
                    kind="execute", intent="execute", command="python3 -m unittest -v",
                    facts=[{"name": "passed", "value": "4" + secret}], status="accepted",
                    checks=[{"name": "repeatable", "passed": True, "detail": secret}]),
             QAItem("r", task.instance_id, "Review this.", secret, kind="review", intent="code-review",
                    mutation={"operator": "off-by-one", "path": "p" + secret, "line": 3, "before": "a", "after": "b"},
                    locations=[{"path": "shop/" + secret, "symbol": "S", "line_start": 1, "line_end": 1}],
                    status="accepted")]
    parts = ("part zero", "part one", "part two")
    mat = TaskMaterial(task.instance_id, task.original_prompt, "ok", parts=parts, augments=tuple(items))
    intents = {t: "new-feature" for t in mat.issue_texts()}
    cand = next(c for c in enumerate_candidates(mat, intents, max_augments=2) if c.n_augments == 2)
    row = build_row(task, build_session(mat, cand, intents, condition="tfas_optimized"), None, items)
    view = json.dumps(agent_view(row).to_dict())
    assert secret not in view and "execute" in view and "review" in view
    assert secret in json.dumps(grader_view(row), default=str)
    assert merge_views(agent_view(row), grader_view(row)) == row


class _Judge:
    """A judge backend stand-in returning a fixed reply (the combination of judge and scorer is tested)."""

    info = {"backend": "fixed", "model": "m"}

    def __init__(self, verdict):
        self.text = json.dumps({"verdict": verdict, "reason": "fixed"})

    def complete(self, messages, *, stage):
        from builder.llm.requests import LLMReply
        return LLMReply(text=self.text, key="k", model="m", stage=stage, replayed=True, provenance="hand-written")


def test_evaluate_registry_scores_every_augmentation_kind():
    from builder.evaluation.scoring import AnswerCase, scorer_for

    debug = {"question": "test T fails: why?", "reference_answer": "Cart.subtotal ignores quantity", "kind": "debug",
             "locations": [{"path": "shop/cart.py", "symbol": "Cart.subtotal", "line_start": 16, "line_end": 16}]}
    right, wrong = "`Cart.subtotal` ignores the quantity.", "The test itself is wrong."
    det = scorer_for("debug", {})(AnswerCase("t", 0, "debug", debug, right))
    assert det.verdict == "correct" and "not judged" in det.reason
    assert scorer_for("debug", {})(AnswerCase("t", 0, "debug", debug, wrong)).verdict == "incorrect"
    both = scorer_for("debug", {"llm": _Judge("correct")})(AnswerCase("t", 0, "debug", debug, right))
    assert both.verdict == "correct" and both.judge == "augment-debug:deterministic+qa-judge:fixed:m"
    judged_wrong = scorer_for("debug", {"llm": _Judge("incorrect")})(AnswerCase("t", 0, "debug", debug, right))
    assert judged_wrong.verdict == "incorrect" and judged_wrong.reason == "explanation judged wrong"
    execute = {"question": "run it", "kind": "execute", "facts": [{"name": "passed", "value": "4"}]}
    ex = scorer_for("execute", {"llm": _Judge("incorrect")})(AnswerCase("t", 0, "execute", execute, "4 passed"))
    assert ex.verdict == "correct" and ex.detail["deterministic"]["score"] == 1.0   # facts only: no judge
    assert scorer_for("review", {})(AnswerCase("t", 0, "review", {}, " ")).verdict == "unanswered"
