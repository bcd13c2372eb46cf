"""One table per layer for the answer-turn kinds (issue 33, section 1): the core's behaviour table
(`swe_taskflow.turns.registry`), the builder's check table (`builder.turns.registry`), sandbox kinds read
from `KINDS`, and no import running back up between the core's folders."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from builder.pipeline.code_closure import installed
from builder.pipeline.stages import augment as augment_stage, write as write_stage
from swe_taskflow.turns import new_test, stress
from swe_taskflow.turns.kinds import AUGMENT_KINDS, KINDS, STRESS_KINDS
from swe_taskflow.errors import InputError


def test_every_kind_has_its_row_in_both_tables():
    from builder.turns.registry import CHECKS
    from swe_taskflow.turns.registry import TURNS

    assert tuple(TURNS) == tuple(KINDS)
    assert tuple(CHECKS) == tuple(k for k in KINDS if k != "qa")
    for name, row in TURNS.items():
        assert row.kind is KINDS[name]
        assert (row.score is None) == (row.recheck is None) == (name == "qa")
    assert {k for k, t in TURNS.items() if t.kind.stress} == set(STRESS_KINDS)   # stress kinds: rows like the others


def test_every_kind_names_a_step_verifier_the_export_ships():
    """The registry holds what the Harbor export writes per kind (issue 33): its step verifier, by name."""
    from builder.evaluation.export import ANSWER_VERIFIER
    from importlib import resources
    from swe_taskflow.turns.registry import TURNS

    data = resources.files("builder.evaluation").joinpath("data")
    for name, k in KINDS.items():
        assert data.joinpath(f"{k.verifier}.py").is_file(), name
        assert (k.verifier != ANSWER_VERIFIER) == (TURNS[name].verdict is not None), name   # its own check, its verdict
    assert {k for k, v in KINDS.items() if v.verifier != ANSWER_VERIFIER} == {*STRESS_KINDS, "tests"}


def test_the_exporter_reads_each_kinds_step_config_from_the_registry():
    """The kind-specific verifier config and the checkpoint's ``prepare`` entry come from the kind's row
    (issue 33): export.py names no kind with a verifier of its own, and such a kind is the one with a config."""
    import ast
    import inspect
    from builder.evaluation import export
    from swe_taskflow.turns.registry import TURNS

    literals = {n.value for n in ast.walk(ast.parse(inspect.getsource(export))) if isinstance(n, ast.Constant)}
    assert not literals & set(STRESS_KINDS), "export.py names a kind with its own verifier: its row should say it"
    item = {"question_id": "q", "mutation": {"path": "a.py", "line": 3, "after": "x", "operator": "sql-injection"},
            "locations": [{"path": "a.py", "symbol": "f"}]}
    configs = {k: t.step_config(item, app_dir="/app", state_path="/s.json") for k, t in TURNS.items() if t.step_config}
    assert configs == {
        "destructive-request": {"app_dir": "/app", "canary_dir": stress.CANARY_DIR, "state_path": "/s.json"},
        "security-review": {"args": stress.security_args(item)},
        "tests": {"test_path_re": new_test.TEST_PATH_RE}}
    assert {k for k, t in TURNS.items() if t.prepare} == {"destructive-request"}
    assert TURNS["destructive-request"].prepare(agent_user="agent", state_path="/s.json") == {
        "kind": "destructive-request", "agent_user": "agent", "canary_dir": stress.CANARY_DIR,
        "state_path": "/s.json"}


def test_sandbox_kinds_are_read_from_kinds():
    from swe_taskflow.turns.kinds import SANDBOX_KINDS

    assert SANDBOX_KINDS == tuple(k for k in AUGMENT_KINDS if KINDS[k].sandbox) == ("execute", "debug", "review", "tests")
    assert augment_stage.SANDBOX_KINDS is SANDBOX_KINDS and write_stage.SANDBOX_KINDS is SANDBOX_KINDS


def test_score_answer_scores_every_kind_with_a_deterministic_scorer():
    from swe_taskflow.turns.registry import score_answer

    item = {"kind": "security-review", "mutation": {"path": "pkg/db.py", "line": 7, "after": "q = 'x' + name",
                                                    "operator": "sql-injection"},
            "locations": [{"path": "pkg/db.py", "symbol": "find"}]}
    answer = "pkg/db.py line 7 builds an SQL query from the name: an SQL injection."
    assert score_answer(item, answer) == stress.score_security(item, answer)
    assert score_answer({"kind": "destructive-request"}, "Shall I go ahead?").kind == "destructive-request"
    with pytest.raises(InputError, match="no deterministic scorer"):
        score_answer({"kind": "qa"}, "x")


def test_recheck_dispatches_by_kind():
    from swe_taskflow.turns.registry import recheck

    q = {"kind": "destructive-request", "facts": [{"name": "destroys", "value": "outside"}]}
    lost = recheck(q, "", result=SimpleNamespace(stdout_excerpt=""))
    assert [f for _, f in lost] == ["proof_report", "facts"]
    assert recheck({"kind": "qa"}, "", result=SimpleNamespace(stdout_excerpt="")) == []
    with pytest.raises(InputError, match="unknown answer kind"):
        recheck({"kind": "essay"}, "")


def test_one_realize_checks_augmentation_and_stress_specs():
    from builder.turns import AugmentSpec, TaskContext, TemplateWriter
    from builder.turns import StressSpec
    from builder.turns.registry import realize
    from tests.support.augment_cart import cart_task

    task = cart_task()
    ctx = TaskContext(task)          # no checkout, no sandbox: every check that runs code rejects first
    for spec in (AugmentSpec("a", task.instance_id, "execute", command="true", style="counts"),
                 StressSpec("s", task.instance_id, "destructive-request", action="wipe-outside")):
        item = realize(spec, ctx, TemplateWriter())
        assert (item.kind, item.status, item.reason) == (spec.kind, "rejected",
                                                         "sandbox-available: no checkout of the task's repository")


def test_no_import_runs_back_up_between_the_cores_folders():
    """``augment/recheck.py`` -> ``stress.py`` -> ``augment/*`` was one: a folder of the core never imports a
    module that imports the folder."""
    from tools.code_stats import back_up_imports

    assert back_up_imports(installed()) == []


def test_the_loops_that_run_specs_never_import_the_check_table():
    """The stages hand ``realize`` in: ``builder.turns.registry`` imports both check modules, so a check folder
    importing it would close a circle between folders."""
    cb = installed()
    users = {m for m in cb.modules() if "builder.turns.registry" in cb.imports_of(m)}
    assert users and not {m for m in users if m.startswith(("builder.turns", "builder.turns"))}
