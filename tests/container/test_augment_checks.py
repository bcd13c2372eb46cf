"""Creation-time checks of the augmentation turns in real sandboxes (Docker and bubblewrap), on a
hand-written fixture task (tests/fixtures/augment/cart: a cart whose subtotal ignores quantities)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from builder.turns import AugmentSpec, TaskContext, TemplateWriter, augment_tasks
from builder.turns.sandbox import CheckSandbox
from builder.bundled.repo import commit_folder
from builder.proofs import ProofConfig, build_test_image, run_proof
from builder.proofs.gitsafe import tree_hash
from builder.split.structural import StructuralSplitter
from builder.turns.registry import PROPOSERS, realize
from swe_taskflow.turns.registry import TURNS, recheck, score_answer
from swe_taskflow.turns import reference
from tests.support.augment_cart import FIX, cart_task



@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("cart") / "cart"
    commit_folder(FIX / "repo", dest)
    return dest


@pytest.fixture(scope="module", params=[pytest.param("docker", marks=pytest.mark.docker), "bwrap"])
def sandbox(request) -> CheckSandbox:
    if request.param == "docker":
        request.getfixturevalue("docker_available")
        return CheckSandbox("docker", image=build_test_image()["tag"])
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    return CheckSandbox("bwrap")


@pytest.fixture(scope="module")
def generated(repo, sandbox):
    task = cart_task()
    split = StructuralSplitter().split(task)
    assert split.status == "ok"
    before = tree_hash(repo)
    items, summary = augment_tasks([task], {task.instance_id: split}, writer=TemplateWriter(), realize=realize,
                                   proposers=PROPOSERS, sandbox=sandbox, repos={task.instance_id: repo})
    assert tree_hash(repo) == before            # the checks never touch the repository
    return {i.question_id: i for i in items}, summary


def test_every_kind_is_generated_and_checked(generated):
    items, summary = generated
    ex = items["fixture__cart-1::execute-counts"]
    assert ex.status == "accepted" and ex.facts == ({"name": "passed", "value": "4"}, {"name": "failed", "value": "1"},
                                                {"name": "error", "value": "1"})
    assert "python3 -m unittest -v" in ex.question and [c["name"] for c in ex.checks][:3] == \
        ["sandbox-available", "sandbox-run", "sandbox-run"]
    assert {c["name"]: c["passed"] for c in ex.checks}["repeatable"]
    dbg = items["fixture__cart-1::debug-0"]
    assert dbg.status == "accepted" and dbg.facts[-1] == {"name": "failure", "value": "AssertionError: 6.0 != 10.0"}
    assert [(x["path"], x["symbol"]) for x in dbg.locations] == [("shop/cart.py", "Cart.subtotal")]
    assert "test_subtotal_counts_quantity" in dbg.question and "Cart.subtotal" not in dbg.question
    assert "git" not in dbg.proof_script and "test_discount" not in dbg.proof_script   # the checkout as it is
    # the second FAIL_TO_PASS test's failure names the function it is scored on: rejected, with the reason
    assert items["fixture__cart-1::debug-1"].reason.startswith("text-contract: names-location")
    plan = items["fixture__cart-1::planning-2"]
    assert plan.status == "accepted" and plan.requirement_part == 2 and plan.proof_script == ""
    assert [(x["path"], x["symbol"]) for x in plan.locations] == [("shop/cart.py", "Cart.total")]
    rev = [i for k, i in items.items() if "review" in k and i.status == "accepted"]
    assert rev and all(i.mutation["path"] == "shop/cart.py" and i.facts for i in rev)
    assert all("index " not in i.question for i in rev) and all(i.mutation["after"] in i.question for i in rev)
    assert summary["by_kind_status"]["execute"] == {"accepted": 1}
    assert all(i.intent == {"execute": "execute", "debug": "debug", "planning": "planning",
                            "review": "code-review", "tests": "tests"}[i.kind] for i in items.values())
    # tests: the hidden file's FAIL_TO_PASS test fails with the file added and passes with the gold patch
    new = items["fixture__cart-1::tests-0"]
    assert new.status == "accepted", new.reason
    assert new.facts == ({"name": "test_file", "value": "tests/test_discount.py"},
                         {"name": "failing_test", "value": "tests/test_discount.py::TestTotals::test_rejects_bad_discount"})
    assert "`tests/`" in new.question and "test_rejects_bad_discount" not in new.question   # the hidden test unsaid
    assert "the hidden test patch does not apply" in new.proof_script
    assert [c["name"] for c in new.checks][-3:] == ["fails-before-patch", "passes-with-gold-patch", "text-contract"]


def test_published_scripts_reproduce_their_references(generated, repo, sandbox):
    """What verify --reprove does: re-run the proof script, compare the evidence and re-derive the facts."""
    items, _ = generated
    for item in items.values():
        if item.status != "accepted" or not item.proof_script:
            continue
        rerun = run_proof(repo, item.proof_script, image=sandbox.image, sandbox=sandbox.kind,
                          config=ProofConfig(timeout_s=120, mem_mb=1024, pids=128, tmpfs_mb=256))
        assert rerun.status == "passed" and rerun.stdout_sha256 == item.proof_report["stdout_sha256"]
        if item.kind != "tests":   # its re-run is re-checked by its own row (the hidden tests still fail)
            assert reference.reproduce(item.to_dict(), rerun.stdout_excerpt) == [], item.question_id
        assert recheck(item.to_dict(), item.question, result=rerun, task=cart_task(), repo=repo) == [], item.question_id


def test_reference_answers_score_as_correct(generated):
    """Each accepted item's own reference answer passes its deterministic scorer (the scorer can succeed); a kind
    its own verifier judges (tests) is scored on that verdict (tests/unit/test_new_test.py)."""
    items, _ = generated
    for item in items.values():
        if item.status == "accepted" and TURNS[item.kind].verdict is None:
            s = score_answer(item.to_dict(), item.reference_answer, turn_text=item.question)
            assert s.correct, (item.question_id, s)


BROKEN = [
    (AugmentSpec("b-exec", "fixture__cart-1", "execute", style="output",
                 command="python3 -c 'import time; print(time.time_ns())'"), "repeatable"),
    (AugmentSpec("b-debug-p2p", "fixture__cart-1", "debug", test="tests/test_cart.py::TestCart::test_add"),
     "fail-to-pass"),
    (AugmentSpec("b-debug-hidden", "fixture__cart-1", "debug",
                 test="tests/test_discount.py::TestTotals::test_rejects_bad_discount"), "visible-in-checkout"),
    (AugmentSpec("b-debug-fix", "fixture__cart-1", "debug",
                 test="tests/test_cart.py::TestCart::test_subtotal_counts_quantity",
                 text="`test_subtotal_counts_quantity` fails. Find out why and fix it."), "text-contract"),
    (AugmentSpec("b-plan", "fixture__cart-1", "planning", requirement_part=1,
                 requirement="The subtotal should count each line's price times its quantity.",
                 locations=[{"path": "shop/cart.py", "symbol": "Cart.add"}]), "location-in-gold-patch"),
    (AugmentSpec("b-review", "fixture__cart-1", "review",
                 mutation={"operator": "off-by-one", "path": "shop/cart.py", "line": 21,
                           "before": "        return round(self.subtotal() * (1 - discount) * (1 + TAX_RATE), 2)",
                           "after": "        return round(self.subtotal() * (1 - discount) * (1 + TAX_RATE), 3)"}),
     "defect-caught"),
    (AugmentSpec("b-tests-visible", "fixture__cart-1", "tests", requirement="Cart totals count quantities.",
                 test="tests/test_cart.py::TestCart::test_subtotal_counts_quantity"), "hidden-test-file"),
]


@pytest.mark.parametrize("spec,check", BROKEN, ids=[s.item_id for s, _ in BROKEN])
def test_broken_items_are_rejected_with_their_reason(spec, check, repo, sandbox):
    task = cart_task()
    ctx = TaskContext(task, StructuralSplitter().split(task).parts, repo, sandbox)
    item = realize(spec, ctx, TemplateWriter())
    assert item.status == "rejected" and item.reason.startswith(check + ":"), item.reason
    assert item.checks[-1] == {"name": check, "passed": False, "detail": item.reason.split(": ", 1)[1]}


def test_no_sandbox_means_no_sandbox_kinds(repo):
    task = cart_task()
    split = StructuralSplitter().split(task)
    items, summary = augment_tasks([task], {task.instance_id: split}, writer=TemplateWriter(), realize=realize,
                                   proposers=PROPOSERS)
    assert {i.kind for i in items} == {"planning"}
    assert summary["not_proposed"] == {k: {"no checkout of the task's repository": 1}
                                       for k in ("debug", "execute", "review", "tests")}
