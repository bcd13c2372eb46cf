"""Stage ``ingest``: the source benchmark's tasks, normalized, with provenance; nothing dropped."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ...sources import load_tasks
from swe_taskflow.errors import ConfigError
from swe_taskflow.schema import Task

from ..stage_data import IngestOutputs as Outputs, IngestSummary as Summary


@dataclass(frozen=True)
class Inputs:
    """No upstream stage: the recipe's ``[source]`` is the input."""


def _load(recipe) -> tuple[list[Task], dict]:
    sec = recipe.source
    local = recipe.resolve(sec.spec)
    load = load_tasks(str(local) if local.exists() else sec.spec, source=sec.source or None,
                      revision=sec.revision or None, split=sec.split, limit=None)
    prov = dict(load.provenance)
    # Record paths as the recipe spells them, never this machine's absolute paths.
    if local.exists():
        prov["spec"] = sec.spec
        prov["files"] = [{**f, "path": _rel(f.get("path", ""), local, sec.spec)} for f in prov.get("files", [])]
    return list(load.tasks), prov


def _rel(path: str, local: Path, spec: str) -> str:
    p = Path(path)
    try:
        return (Path(spec) / p.resolve().relative_to(local.resolve())).as_posix() if local.is_dir() else spec
    except ValueError:
        return p.name


def run(inputs: Inputs, ctx) -> Outputs:
    recipe = ctx.recipe
    sec = recipe.source
    tasks, provenance = _load(recipe)
    if sec.instance_ids:
        by_id = {t.instance_id: t for t in tasks}
        missing = [i for i in sec.instance_ids if i not in by_id]
        if missing:
            raise ConfigError("instance id not in the source", path=str(recipe.path), field="source.instance_ids",
                              actual=missing[0])
        tasks = [by_id[i] for i in sec.instance_ids]
    if sec.limit:
        tasks = tasks[:sec.limit]
    if sec.run_scripts:   # recorded with each file's hash: `export harbor` finds and checks them
        from ...task_files import run_script_hashes
        provenance["run_scripts"] = {"path": sec.run_scripts, "files": run_script_hashes(
            recipe.resolve(sec.run_scripts), [t.instance_id for t in tasks])}
    ctx.progress.set_total(len(tasks))
    statuses = Counter(t.status for t in tasks)
    reasons = Counter(t.reason for t in tasks if t.status != "ok")
    ctx.progress.advance(len(tasks), failed=len(tasks) - statuses.get("ok", 0))
    return Outputs(tasks=tasks, provenance=provenance,
                   summary=Summary(tasks=len(tasks), by_status=dict(sorted(statuses.items())),
                                   malformed_reasons=dict(sorted(reasons.items()))))
