"""Read the tasks a split or QA run works on.

Uses ``builder.sources.load_tasks`` when that module exists (it owns source formats); otherwise
reads a JSONL of SWE-Bench Pro rows or normalized :class:`Task` dicts itself.
"""

from __future__ import annotations

import json
import os
from typing import Any

from swe_taskflow.errors import InputError
from swe_taskflow.jsonl import read_jsonl
from swe_taskflow.schema import Task

REQ_HEADER = "\n\nRequirements:\n"
IFACE_HEADER = "\n\nNew interfaces introduced:\n"


def pro_prompt(problem_statement: str, requirements: str, interface: str) -> str:
    """The single message SWE-Bench Pro gives an agent (as in its ``instances.yaml``)."""
    return f"{problem_statement}{REQ_HEADER}{requirements}{IFACE_HEADER}{interface}"


def _as_list(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            import ast
            try:
                value = ast.literal_eval(value)
            except (ValueError, SyntaxError):
                return (value,) if value else ()
    return tuple(str(v) for v in (value or ()))


def task_from_row(row: dict[str, Any], *, path: str, lineno: int) -> Task:
    """A :class:`Task` from a normalized dict (has ``original_prompt``) or a SWE-Bench Pro row."""
    if "original_prompt" in row:
        return Task.from_dict(row, where=path, row=lineno)
    for key in ("instance_id", "problem_statement"):
        if not isinstance(row.get(key), str):
            raise InputError("missing or non-text field", path=path, row=lineno, field=key)
    ps, req, iface = row["problem_statement"], row.get("requirements") or "", row.get("interface") or ""
    prompt = pro_prompt(ps, req, iface) if req or iface else ps
    extra = {k: v for k, v in row.items() if k not in {
        "instance_id", "repo", "base_commit", "problem_statement", "requirements", "interface",
        "image_name", "repo_language", "fail_to_pass", "pass_to_pass", "patch", "test_patch"}}
    return Task(instance_id=row["instance_id"], source=row.get("source", "swe-bench-pro"),
                source_revision=row.get("source_revision", ""), repo=row.get("repo", ""),
                base_commit=row.get("base_commit", ""), original_prompt=prompt, problem_statement=ps,
                requirements=req, interface=iface, image_name=row.get("image_name", ""),
                repo_language=row.get("repo_language", ""),
                fail_to_pass=_as_list(row.get("fail_to_pass")), pass_to_pass=_as_list(row.get("pass_to_pass")),
                patch=row.get("patch", "") or "", test_patch=row.get("test_patch", "") or "", extra=extra)


def load_tasks(path: str | os.PathLike) -> list[Task]:
    """Tasks from ``path``, through ``builder.sources`` when available."""
    try:
        from builder.sources import load_tasks as sources_load  # type: ignore[attr-defined]
    except ImportError:
        sources_load = None
    if sources_load is not None:
        return list(sources_load(str(path)).tasks)
    return [task_from_row(row, path=str(path), lineno=n) for n, row in read_jsonl(path)]
