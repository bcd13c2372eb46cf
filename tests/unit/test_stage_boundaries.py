"""The pipeline's stage rules, read from the code: typed inputs and outputs, no I/O of their own.

Every stage module declares ``Inputs`` and returns its ``Outputs`` (builder.pipeline.stage_data); it
imports neither a sibling stage, nor the runner, cache or pipeline hashing, and never opens files in
the cache. The runner alone stores what a stage returns.
"""

from __future__ import annotations

import ast
import dataclasses
import typing
from pathlib import Path

import pytest

from builder.pipeline import artifacts
from builder.pipeline.registry import pipeline_stages
from builder.pipeline.stages import STAGE_NAMES

STAGES_DIR = Path(__file__).resolve().parents[2] / "builder" / "pipeline" / "stages"
FORBIDDEN = {"builder.pipeline.runner", "builder.pipeline.folder_hash", "builder.pipeline.cache",
             "builder.pipeline.registry", "builder.pipeline.build"}


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = "builder.pipeline" if node.level == 2 else "builder.pipeline.stages" if node.level == 1 else ""
            mod = ".".join(x for x in (base, node.module or "") if x)
            out.add(mod)
            if node.level == 1 and not node.module:
                out.update(f"builder.pipeline.stages.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


@pytest.mark.parametrize("name", STAGE_NAMES)
def test_a_stage_imports_no_sibling_and_not_the_runner(name):
    got = _imports(STAGES_DIR / f"{name}.py")
    siblings = {f"builder.pipeline.stages.{s}" for s in STAGE_NAMES if s != name}
    assert not got & (FORBIDDEN | siblings), sorted(got & (FORBIDDEN | siblings))


@pytest.mark.parametrize("name", STAGE_NAMES)
def test_a_stage_touches_no_files_of_the_cache(name):
    text = (STAGES_DIR / f"{name}.py").read_text()
    for word in ("ctx.out", "ctx.input(", "ctx.cache", "summary.json", ".stage.json", "write_jsonl", "write_json(",
                 "read_jsonl", "ctx.summary"):
        assert word not in text, f"{name}.py uses {word}"


def test_every_stage_declares_typed_inputs_and_outputs():
    stages = pipeline_stages()
    assert tuple(s.name for s in stages) == STAGE_NAMES
    outputs = {s.name: s.outputs for s in stages}
    for st in stages:
        assert dataclasses.is_dataclass(st.inputs) and dataclasses.is_dataclass(st.outputs), st.name
        hints = typing.get_type_hints(st.inputs)
        for f in dataclasses.fields(st.inputs):   # an input is an upstream stage's Outputs, by its name
            assert hints[f.name] is outputs[f.name], (st.name, f.name)
        out_fields = {f.name for f in dataclasses.fields(st.outputs)}
        assert "summary" in out_fields and dataclasses.is_dataclass(artifacts.summary_class(st.outputs)), st.name
        assert {n for n, _ in artifacts.artifacts(st.outputs)} | {"summary"} == out_fields, st.name


def test_a_stage_returning_the_wrong_type_fails_with_its_name(tmp_path):
    from builder.pipeline.cache import StageCache
    from builder.pipeline.runner import Stage, run_stages
    from builder.pipeline.stage_data import VerifyOutputs
    from swe_taskflow.errors import TaskflowError

    @dataclasses.dataclass(frozen=True)
    class NoInputs:
        pass

    with pytest.raises(TaskflowError, match="stage 'odd' failed: TypeError: returned dict, not VerifyOutputs"):
        run_stages([Stage("odd", lambda inputs, ctx: {}, NoInputs, VerifyOutputs)], None, StageCache(tmp_path))
    assert not (tmp_path / "stages" / "odd").exists()


def test_outputs_round_trip_through_their_files(tmp_path):
    from builder.pipeline.stage_data import ProofsOutputs, ProofsSummary
    from swe_taskflow.schema import QAItem

    q = QAItem(question_id="q1", instance_id="t1", question="?", reference_answer="a", status="accepted",
               proof_report={"status": "passed", "duration_s": None})
    out = ProofsOutputs(validated=[q], repos={"kind": "bundled"}, timings=[{"question_id": "q1", "duration_s": 1.5}],
                        summary=ProofsSummary(enabled=True, accepted=1))
    artifacts.save(out, tmp_path, {"items_total": 1, "items_done": 1, "items_failed": 0})
    assert (tmp_path / "_volatile" / "proof_timings.jsonl").exists()
    back = artifacts.load(ProofsOutputs, tmp_path)
    assert back == out
    assert artifacts.read_summary(tmp_path) == {"items_total": 1, "items_done": 1, "items_failed": 0,
                                                "enabled": True, "accepted": 1}
