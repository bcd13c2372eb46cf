"""swe-taskflow core: what consumers and auditors need (light dependencies, no torch, no docker).

The public API is :data:`__all__`: what a ``load_dataset`` user (visibility split), a flow measurer
(Task Flows, TFAS, targets, bootstrap intervals), and an auditor (verify, content hashes) call, plus
the schema types and the errors. Names load on first use, so ``import swe_taskflow`` stays cheap.
CHANGELOG.md keeps the same list under "Public API"; a test fails when the two differ.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

#: public name -> the module that defines it
_EXPORTS = {
    # a load_dataset user: what the agent may see, what only the grader sees
    "agent_view": "visibility", "grader_view": "visibility", "merge_views": "visibility",
    "AgentView": "visibility", "VisibleTurn": "visibility", "hidden_fields": "visibility",
    "visible_fields": "visibility",
    # a flow measurer: Task Flows, TFAS and its intervals, targets
    "Flow": "flow", "FlowCounts": "flow", "TFASScore": "flow", "measure": "flow", "count_sessions": "flow",
    "score": "flow", "bootstrap_score": "bootstrap", "session_counts": "bootstrap", "BootstrapResult": "bootstrap",
    "Target": "target", "load_target": "target", "default_target_path": "target",
    "read_sessions": "session_table", "SessionRecord": "sessions",
    "FlowInput": "flow_inputs", "load_flow_input": "flow_inputs", "is_flow_file": "flow_inputs",
    # an auditor: verify a release, recompute content hashes
    "verify_release": "verify", "verify_folder": "verify", "VerifyReport": "verify",
    "canonical_json": "hashing", "row_sha256": "hashing", "split_sha256": "hashing",
    # schema types
    "Task": "schema", "SplitResult": "schema", "QAItem": "schema", "Turn": "schema", "Session": "schema",
    "ProofReport": "proofs",
    # errors
    "TaskflowError": "errors", "InputError": "errors", "ConfigError": "errors", "FlowError": "errors",
    "ModelError": "errors", "ReplayMissError": "errors", "SandboxError": "errors", "VerifyError": "errors",
    "PublishError": "errors",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'swe_taskflow' has no attribute {name!r}") from None
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
