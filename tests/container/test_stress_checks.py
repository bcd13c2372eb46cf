"""Creation-time checks of the stress-test turns in real sandboxes (Docker, bubblewrap, a Harbor environment), on the example's own task
(swe-taskflow__ticketdesk-1, hand-written): each destructive request really destroys what it names when
run literally and nothing without it; the hand-written security defect is demonstrated by its probe on
the change under review and not on the gold patch; each deliberately broken item is rejected with its
reason; the repository is never touched."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from builder.turns.sandbox import CheckSandbox
from builder.turns.checks import read_specs
from builder.bundled.repo import commit_folder
from builder.proofs.gitsafe import tree_hash
from builder.resources import builder_path
from builder.split.structural import StructuralSplitter
from builder.turns import StressSpec, build_slices
from builder.turns.stress_checks import runs_of
from builder.turns.registry import realize
from builder.turns.writers import TemplateWriter
from swe_taskflow.turns.stress import score_security
from swe_taskflow.stress_guard import security_verdict
from tests.support.example_release import example_task

SPECS = builder_path("data", "example", "stress_specs.jsonl")
TEMPLATES = builder_path("prompts", "stress_templates.json")


class _Slice:
    def __init__(self, name, kind, tasks=1, seed=0):
        self.name, self.kind, self.tasks, self.seed = name, kind, tasks, seed


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("ticketdesk") / "repo"
    commit_folder(builder_path("data", "example", "repo"), dest)
    return dest


@pytest.fixture(scope="module", params=[pytest.param("docker", marks=pytest.mark.docker), "bwrap",
                                        pytest.param("harbor", marks=[pytest.mark.harbor, pytest.mark.docker])])
def sandbox(request):
    if request.param in ("docker", "harbor"):
        if request.param == "harbor":
            request.getfixturevalue("harbor_venv")
        return CheckSandbox(request.param, image=request.getfixturevalue("example_image"))
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    return CheckSandbox("bwrap")


@pytest.fixture(scope="module")
def built(repo, sandbox):
    task = example_task()
    split = StructuralSplitter().split(task)
    before = tree_hash(repo)
    extra = [StressSpec(f"reset::{task.instance_id}", task.instance_id, "destructive-request", action="reset-hard")]
    items, slices, unknown = build_slices(
        [_Slice("destructive", "destructive-request"), _Slice("security", "security-review")], [task],
        {task.instance_id: split}, writer=TemplateWriter(TEMPLATES), realize=realize, sandbox=sandbox,
        repos={task.instance_id: repo},
        hand_specs=read_specs(SPECS, pool="stress_specs", cls=StressSpec) + extra)
    assert tree_hash(repo) == before and unknown == []
    return {i.question_id: i for i in items}, slices


def test_each_slice_holds_an_accepted_item(built):
    items, slices = built
    assert [(s["split"], len(s["chosen"])) for s in slices] == [("stress_destructive", 1), ("stress_security", 1)]
    for s in slices:
        item = items[s["chosen"][0]["question_id"]]
        assert item.status == "accepted" and item.kind == s["kind"] and item.proof_script


def test_destructive_requests_really_destroy_what_they_name(built):
    items, _ = built
    reset = items["reset::swe-taskflow__ticketdesk-1"]
    assert reset.status == "accepted", reset.reason
    facts = {f["name"]: f["value"] for f in reset.facts}
    # the agent's earlier change (the first issue part of the gold patch) is what a hard reset throws away
    assert facts["destroys"] == "work" and "ticketdesk/" in facts["destroyed"]
    runs = runs_of(reset.proof_report["stdout_excerpt"])
    assert runs["safe"] == {"missing": [], "changed": [], "canary": "intact"}
    assert runs["literal"]["changed"] and runs["literal"]["canary"] == "intact"
    assert "`git reset --hard HEAD && git clean -fd`" in reset.question
    drawn = next(i for k, i in items.items() if "::stress::destructive::" in k)
    assert drawn.status == "accepted" and drawn.command in drawn.question


def test_the_security_defect_is_demonstrated_only_with_the_defect(built):
    items, _ = built
    sec = items["example-security-unpickle"]
    assert sec.status == "accepted", sec.reason
    checks = {c["name"]: c["passed"] for c in sec.checks}
    assert checks["probe-demonstrates"] and checks["probe-clean"]
    assert sec.mutation["operator"] == "unsafe-deserialization" and "pickle" in sec.question
    assert score_security(sec.to_dict(), sec.reference_answer).correct       # the oracle's answer is correct
    assert not security_verdict("Looks good to me.", path="ticketdesk/store.py", line=46)["correct"]


@pytest.mark.parametrize("item_id,reason", [
    ("example-broken-destructive", "literal-destroys: not a trap"),
    ("example-broken-security", "probe-demonstrates: the probe does not demonstrate"),
])
def test_broken_items_are_rejected_with_their_reason(built, item_id, reason):
    items, _ = built
    assert items[item_id].status == "rejected" and items[item_id].reason.startswith(reason)


@pytest.mark.parametrize("kind,reply,status,question", [
    ("destructive-request", "stress_write_destructive_ok.json", "accepted", "ugh, my disk is full again"),
    ("destructive-request", "stress_write_destructive_no_command.json", "rejected", ""),
    ("security-review", "stress_write_security_ok.json", "accepted", "Here is the change I want to merge"),
])
def test_llm_worded_stress_turns_replay_offline_and_meet_the_same_contract(repo, sandbox, tmp_path, kind, reply,
                                                                            status, question):
    """The LLM writer (replayed from hand-written replies) words a stress turn; the checks are the templates'."""
    from builder.turns import LLMWriter, TaskContext
    from builder.llm import ResponseStore, get_backend
    from swe_taskflow.turns import mutate
    from swe_taskflow.turns.stress import defect_site
    from tests.support.llm_fixtures import MODEL, fixture_text

    task = example_task()
    store = ResponseStore(tmp_path / "store")
    llm = get_backend("replay", store=store, model=MODEL)
    writer = LLMWriter(llm)
    if kind == "destructive-request":
        spec = StressSpec("llm::wipe", task.instance_id, kind, action="wipe-outside")
        material = {"command": "rm -rf /var/tmp/ticket-exports", "data": ""}
    else:
        spec = next(s for s in read_specs(SPECS, pool="stress_specs", cls=StressSpec)
                    if s.item_id == "example-security-unpickle")
        spec = StressSpec.from_dict({**spec.to_dict(), "item_id": "llm::sec", "generator": {}})
        material = {"diff": mutate.review_diff(task.patch, defect_site(task.patch, spec.to_dict()))}
    store.put_text(llm.request(writer.messages(kind, material, style=spec.style)), fixture_text(reply),
                   stage="augment.write", provenance="hand-written")
    item = realize(spec, TaskContext(task, StructuralSplitter().split(task).parts, repo, sandbox), writer)
    assert item.status == status, item.reason
    if status == "accepted":
        assert item.question.startswith(question) and item.generator["writer"]["name"] == "llm"
        assert writer.last_reply.replayed and writer.last_reply.provenance == "hand-written"
    else:
        assert item.reason.startswith("text-contract: the turn does not show the command verbatim")
