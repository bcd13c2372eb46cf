"""Normalize one source row (SWE-Bench Pro, SWE-bench Verified/Lite) into a :class:`Task`.

Pure: a row dict in, a Task out. A row that cannot be normalized still becomes a Task, with
``status="malformed"`` and a reason naming the row and the field, so nothing is dropped.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from swe_taskflow.errors import ConfigError
from swe_taskflow.schema import Task

#: How SWE-Bench Pro gives an agent its issue (the form of upstream ``instances.yaml``).
PRO_REQUIREMENTS_HEADER = "\n\nRequirements:\n"
PRO_INTERFACE_HEADER = "\n\nNew interfaces introduced:\n"


def pro_prompt(problem_statement: str, requirements: str, interface: str) -> str:
    """The single-message SWE-Bench Pro issue: statement, requirements, new interfaces."""
    return problem_statement + PRO_REQUIREMENTS_HEADER + requirements + PRO_INTERFACE_HEADER + interface


def swebench_image(instance_id: str) -> str:
    """SWE-bench's own evaluation image name for an instance (``__`` is spelled ``_1776_``)."""
    return f"swebench/sweb.eval.x86_64.{instance_id.replace('__', '_1776_').lower()}:latest"


@dataclass(frozen=True)
class SourceSpec:
    """The fields one source family names, and how it builds the agent's prompt."""

    name: str
    required: tuple[str, ...]          # must be present (not null); the statement must be non-empty
    list_fields: tuple[str, ...]       # lists that may arrive as JSON (or Python-literal) strings
    mapping: Mapping[str, str]         # Task field -> source field
    prompt: Callable[[Mapping[str, Any]], str]
    image: Callable[[Mapping[str, Any]], str]
    language: Callable[[Mapping[str, Any]], str]


_PRO = SourceSpec(
    name="swe-bench-pro",
    required=("instance_id", "repo", "base_commit", "problem_statement", "requirements", "interface"),
    list_fields=("fail_to_pass", "pass_to_pass", "selected_test_files", "selected_test_files_to_run",
                 "issue_specificity", "issue_categories"),
    mapping={"instance_id": "instance_id", "repo": "repo", "base_commit": "base_commit",
             "problem_statement": "problem_statement", "requirements": "requirements",
             "interface": "interface", "fail_to_pass": "fail_to_pass", "pass_to_pass": "pass_to_pass",
             "patch": "patch", "test_patch": "test_patch", "image_name": "image_name",
             "repo_language": "repo_language", "test_command": "test_command"},
    prompt=lambda r: pro_prompt(r["problem_statement"], r["requirements"], r["interface"]),
    image=lambda r: r.get("image_name") or (f"jefzda/sweap-images:{r['dockerhub_tag']}" if r.get("dockerhub_tag") else ""),
    language=lambda r: r.get("repo_language") or "",
)

_SWEBENCH_MAPPING = {"instance_id": "instance_id", "repo": "repo", "base_commit": "base_commit",
                     "problem_statement": "problem_statement", "fail_to_pass": "FAIL_TO_PASS",
                     "pass_to_pass": "PASS_TO_PASS", "patch": "patch", "test_patch": "test_patch"}


def _swebench(name: str) -> SourceSpec:
    return SourceSpec(
        name=name, required=("instance_id", "repo", "base_commit", "problem_statement"),
        list_fields=("FAIL_TO_PASS", "PASS_TO_PASS"), mapping=_SWEBENCH_MAPPING,
        prompt=lambda r: r["problem_statement"], image=lambda r: swebench_image(r["instance_id"]),
        language=lambda r: "python")


#: Known source families; ``swe-bench`` is the full SWE-bench set (same schema as Verified/Lite).
SOURCES: Mapping[str, SourceSpec] = {
    "swe-bench-pro": _PRO,
    "swe-bench-verified": _swebench("swe-bench-verified"),
    "swe-bench-lite": _swebench("swe-bench-lite"),
    "swe-bench": _swebench("swe-bench"),
}


def get_source(name: str) -> SourceSpec:
    if name not in SOURCES:
        raise ConfigError("unknown source", field="source", actual=name, expected=sorted(SOURCES))
    return SOURCES[name]


def detect_source(columns, spec: str) -> str:
    """Guess the family from the columns (and, for SWE-bench, from the dataset's name)."""
    cols = set(columns)
    if {"requirements", "interface"} & cols:
        return "swe-bench-pro"
    if {"FAIL_TO_PASS", "PASS_TO_PASS"} & cols:
        low = spec.lower()
        return "swe-bench-verified" if "verified" in low else "swe-bench-lite" if "lite" in low else "swe-bench"
    raise ConfigError("cannot tell which benchmark these rows come from", field="source",
                      actual=sorted(cols)[:12], expected=sorted(SOURCES),
                      hint="pass source= (--source) explicitly")


def decode_list(value: Any) -> list[str]:
    """A list field as a list of strings: a list as is, a JSON list string, or a Python list literal
    (SWE-Bench Pro's Hub rows spell ``fail_to_pass`` as ``"['a', 'b']"``). Raises ValueError."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        out = list(value)
    elif isinstance(value, str):
        text = value.strip()
        if not text:
            return []
        try:
            out = json.loads(text)
        except json.JSONDecodeError as exc:
            try:
                out = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                raise ValueError(f"not a JSON list ({exc.msg} at column {exc.colno})") from None
    else:
        raise ValueError(f"expected a list, got {type(value).__name__}")
    if not isinstance(out, list) or not all(isinstance(x, str) for x in out):
        raise ValueError("not a list of strings")
    return out


#: Text fields that SWE-Bench Pro's Hub rows sometimes hold as a JSON string literal ("\"...\\n...\"").
QUOTED_TEXT_FIELDS = ("problem_statement", "requirements", "interface")
#: Key in ``Task.extra`` listing the text fields that were decoded from a JSON string literal.
DECODED_KEY = "swe_taskflow_decoded_fields"


def unquote_text(value: str) -> tuple[str, bool]:
    """Decode a text that is a whole JSON string literal (a quirk of the HF data); else keep it."""
    if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
        try:
            out = json.loads(value)
        except json.JSONDecodeError:
            return value, False
        if isinstance(out, str):
            return out, True
    return value, False


def _plain(value: Any) -> Any:
    """A timestamp the reader inferred as text again: Arrow's JSON reader turns ISO 8601 strings such as
    SWE-bench's ``created_at`` (``2022-03-03T15:14:54Z``) into naive UTC datetimes, which are not JSON.
    They go back to ISO 8601 in UTC with ``Z``, the form the source files write."""
    import datetime as dt
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return value.isoformat() + "Z"
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def _own(row: Mapping[str, Any], key: str) -> str:
    value = row.get(key)
    return value if isinstance(value, str) and value.strip() else ""


def normalize_row(row: Mapping[str, Any], *, source: str, revision: str, row_number: int,
                  where: str = "") -> Task:
    """One source row as a Task; problems become ``status="malformed"`` with a reason (never raised)."""
    spec = get_source(source)
    decoded_text = []
    if spec.name == "swe-bench-pro":
        row = dict(row)
        for f in QUOTED_TEXT_FIELDS:
            if isinstance(row.get(f), str):
                row[f], changed = unquote_text(row[f])
                if changed:
                    decoded_text.append(f)
    loc = f"{where + ': ' if where else ''}row {row_number}"
    iid = row.get("instance_id")
    instance_id = iid if isinstance(iid, str) and iid.strip() else f"row-{row_number}"
    problems: list[str] = []
    for f in spec.required:
        v = row.get(f)
        if v is None:
            problems.append(f"field '{f}' is missing")
        elif not isinstance(v, str):
            problems.append(f"field '{f}' is not text ({type(v).__name__})")
        elif f in ("instance_id", "problem_statement") and not v.strip():
            problems.append(f"field '{f}' is empty")
    decoded: dict[str, list[str]] = {}
    for f in spec.list_fields:
        if f in row:
            try:
                decoded[f] = decode_list(row[f])
            except ValueError as exc:
                problems.append(f"field '{f}': {exc}")
    mapped = set(spec.mapping.values()) | {"source", "source_revision"}
    extra = {k: decoded.get(k, _plain(v)) for k, v in row.items() if k not in mapped}
    if decoded_text:
        extra[DECODED_KEY] = decoded_text
    text = {k: (row.get(v) if isinstance(row.get(v), str) else "") for k, v in spec.mapping.items()
            if k not in ("fail_to_pass", "pass_to_pass")}
    # A row may name its own origin (a hand-written task added to a benchmark's file says so).
    source, revision = _own(row, "source") or source, _own(row, "source_revision") or revision
    if problems:
        return Task(instance_id=instance_id, source=source, source_revision=revision,
                    repo=text.get("repo", ""), base_commit=text.get("base_commit", ""), original_prompt="",
                    extra=extra, status="malformed", reason=f"{loc}: " + "; ".join(problems))
    return Task(
        instance_id=instance_id, source=source, source_revision=revision, repo=text["repo"],
        base_commit=text["base_commit"], original_prompt=spec.prompt(row),
        problem_statement=text["problem_statement"], requirements=text.get("requirements", ""),
        interface=text.get("interface", ""), image_name=spec.image(row), repo_language=spec.language(row),
        fail_to_pass=tuple(decoded.get(spec.mapping["fail_to_pass"], ())),
        pass_to_pass=tuple(decoded.get(spec.mapping["pass_to_pass"], ())),
        patch=text.get("patch", ""), test_patch=text.get("test_patch", ""),
        test_command=text.get("test_command", ""), extra=extra)
