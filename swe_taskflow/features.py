"""The ``datasets.Features`` of release rows, strict row conformance, and an exact schema check.

``datasets`` casts a parquet column to the declared feature silently (floats declared ``string``
load as text), so the writer and the verifier compare the parquet schema with the declared features
themselves (:func:`schema_differences`). Rows are conformed to the features before hashing so that a
row hashed in memory and the same row read back from parquet are the same JSON value.
"""

from __future__ import annotations

from functools import cache, partial
from typing import Any, Mapping

from .errors import InputError
from .turns.record import question_fields
from .hashing import canonical_sha256
from .typed_records import GENERATOR, MESSAGE, PROOF_REPORT, REVIEWER, join_record, split_record


def _v(dtype: str):
    from datasets import List, Value
    if dtype.startswith("list<"):
        return List(Value(dtype[5:-1]))
    return Value(dtype)


_s = partial(_v, "string")
_i = partial(_v, "int64")


def record_feature(spec: Mapping[str, str]) -> dict[str, Any]:
    """The struct of a typed record (:mod:`swe_taskflow.typed_records`): its typed keys plus ``extra``."""
    return {**{k: _v(t) for k, t in spec.items()}, "extra": _v("string")}


def question_feature() -> dict[str, Any]:
    """One item of ``questions``: an answer turn's hidden reference (the one place to add fields)."""
    from datasets import List
    return {"question_id": _s(), "turn_index": _v("int64"), "intent": _s(), "question": _s(),
            "reference_answer": _s(),
            "evidence": List({"path": _s(), "symbol": _s(), "note": _s()}),
            "proof_script": _s(), "proof_report": record_feature(PROOF_REPORT), "proof_report_sha256": _s(),
            "generator": record_feature(GENERATOR), "reviewer": record_feature(REVIEWER),
            **question_fields()}


def message_feature() -> dict[str, Any]:
    """One message of an agent trajectory, normalized across mini-swe-agent and Harbor ATIF."""
    from datasets import List
    return {"index": _v("int64"), **{k: _v(t) for k, t in MESSAGE.items()},
            "tool_calls": List({"id": _s(), "name": _s(), "arguments": _s()}),
            "observations": List({"call_id": _s(), "content": _s()}), "extra": _s()}


def session_features():
    """Features of a session row (config ``default``; every condition is one split of it)."""
    from datasets import Features, List
    turn = {"turn_index": _i(), "kind": _s(), "text": _s(), "intent": _s(), "split_parts": List(_i()),
            "question_id": _s()}
    question = question_feature()
    return Features({
        "instance_id": _s(), "source": _s(), "source_revision": _s(), "repo": _s(), "base_commit": _s(),
        "image_name": _s(), "repo_language": _s(), "condition": _s(), "question_pool": _s(),
        "turns": List(turn), "n_turns": _i(), "length_bin": _s(), "questions": List(question),
        "original_prompt": _s(), "split_status": _s(), "source_task_sha256": _s(), "row_sha256": _s(),
    })


def trajectory_features():
    """Features of a trajectory row (config ``trajectories``; one split per condition)."""
    from datasets import Features, List
    return Features({
        "condition": _s(), "instance_id": _s(), "model": _s(), "run": _i(),
        "split_sha256": _s(), "row_sha256": _s(), "trajectory_format": _s(), "messages": List(message_feature()),
        "exit_status": _s(),
        "checkpoints": List({"turn_index": _i(), "patch_sha256": _s(), "tests_passed": _i(),
                             "tests_failed": _i(), "resolved": _v("bool")}),
        "qa_answers": List({"question_id": _s(), "answer": _s(), "verdict": _s(), "judge": _s()}),
        "cost_usd": _v("float64"), "tokens_in": _i(), "tokens_out": _i(), "api_calls": _i(),
        "source_file_sha256": _s(), "trajectory_sha256": _s(),
    })


def features_sha256(features) -> str:
    """The schema hash recorded per split: canonical JSON of ``Features.to_dict()``."""
    return canonical_sha256(features.to_dict())


# ---------------------------------------------------------------- conformance
_PY_TYPES: dict[str, tuple[type[Any], ...]] = {"string": (str,), "int64": (int,), "int32": (int,), "float64": (int, float), "bool": (bool,)}


def conform(value: Any, feature: Any, *, where: str = "row", row: int | None = None, path: str = "") -> Any:
    """Return ``value`` shaped exactly like ``feature``: every struct key present (None if absent).

    Unknown keys and wrong types raise :class:`InputError` naming the field path; nothing is cast
    silently except int -> float for float columns.
    """
    Features, List, Value = _types()
    if value is None:
        return None
    if isinstance(feature, (dict, Features)):
        if not isinstance(value, Mapping):
            raise InputError("expected an object", path=where, row=row, field=path or "<row>",
                             actual=type(value).__name__)
        unknown = sorted(set(value) - set(feature))
        if unknown:
            raise InputError("unknown field", path=where, row=row, field=_join(path, unknown[0]),
                             expected=sorted(feature))
        return {k: conform(value.get(k), f, where=where, row=row, path=_join(path, k)) for k, f in feature.items()}
    if isinstance(feature, List):
        if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
            raise InputError("expected a list", path=where, row=row, field=path, actual=type(value).__name__)
        return [conform(v, feature.feature, where=where, row=row, path=f"{path}[{n}]") for n, v in enumerate(value)]
    if isinstance(feature, Value):
        ok = _PY_TYPES.get(feature.dtype)
        if ok is None:
            raise InputError("unsupported dtype in features", field=path, actual=feature.dtype)
        if not isinstance(value, ok) or (feature.dtype != "bool" and isinstance(value, bool)):
            raise InputError(f"expected {feature.dtype}", path=where, row=row, field=path,
                             actual=type(value).__name__)
        return float(value) if feature.dtype == "float64" else value
    raise InputError("unsupported feature type", field=path, actual=type(feature).__name__)


@cache
def _types():
    from datasets import Features, List, Value
    return Features, List, Value


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def split_proof_report(report: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A proof report dict as its typed columns plus ``extra`` (canonical JSON of other keys)."""
    return split_record(report, PROOF_REPORT)


def join_proof_report(stored: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Inverse of :func:`split_proof_report` (absent typed keys come back as absent)."""
    return join_record(stored, PROOF_REPORT)


# ---------------------------------------------------------------- schema comparison
def schema_differences(features, schema) -> list[str]:
    """Differences between declared ``features`` and a parquet/arrow ``schema`` (metadata ignored).

    Empty list = exact match, field by field and type by type (nested types included).
    """
    declared = features.arrow_schema
    out: list[str] = []
    dnames, anames = declared.names, schema.names
    for name in dnames:
        if name not in anames:
            out.append(f"column '{name}' is declared but missing from the file")
    for name in anames:
        if name not in dnames:
            out.append(f"column '{name}' is in the file but not declared")
    common = [n for n in dnames if n in anames]
    if [n for n in anames if n in dnames] != common:
        out.append(f"column order differs: declared {common}, file {[n for n in anames if n in dnames]}")
    for name in common:
        dt, at = declared.field(name).type, schema.field(name).type
        if not dt.equals(at):
            out.append(f"column '{name}' has type {at} in the file, declared {dt}")
    return out


__all__ = ["session_features", "trajectory_features", "question_feature", "message_feature", "record_feature", "features_sha256", "conform", "split_proof_report",
           "join_proof_report", "schema_differences"]
