"""The source tasks behind a release's rows, and how each one's tests run (its test spec).

A checkpoint needs what a release row does not carry: FAIL_TO_PASS / PASS_TO_PASS, the hidden test
files and the command that runs them. They come from the source the release was built from (its
recorded provenance, or an explicit ``--source``), and every source task must hash to the row's
``source_task_sha256``: a different task under the same id is refused, never silently used.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from swe_taskflow.errors import ConfigError, InputError
from swe_taskflow.hashing import task_sha256
from swe_taskflow.schema import Task

from ..resources import builder_path
from ..task_files import RUN_SCRIPT_FILES

_RECIPES_DIR = builder_path("releases")


def _source_candidates(spec: str, recipe_file: str | None) -> list[Path]:
    from ..pipeline.recipe import PACKAGE_PREFIX, resolve_path

    if spec.startswith(PACKAGE_PREFIX):          # a shipped file, named as a recipe kept anywhere names it
        return [resolve_path(Path("."), spec)]
    cands = [Path(spec)]
    if recipe_file and (_RECIPES_DIR / recipe_file).exists():
        cands.append(_RECIPES_DIR / spec)
    return cands


def load_source_tasks(release, rows: Iterable[Mapping[str, Any]], source: str | None = None) -> dict[str, Task]:
    """Source Task per instance of ``rows``, each checked against the row's ``source_task_sha256``."""
    from ..sources import SOURCES, load_tasks

    prov = dict(release.manifest.provenance.get("source") or {})
    recipe = dict(release.manifest.provenance.get("recipe") or {})
    if source:
        spec, name, revision, split = source, None, None, "test"
    else:
        spec = str(prov.get("spec") or "")
        if not spec:
            raise ConfigError("the release records no source; pass --source", path=str(release.manifest_path),
                              field="provenance.source.spec")
        name, revision, split = prov.get("source"), prov.get("revision"), prov.get("requested_split") or "test"
        name = name if name in SOURCES else None
        if prov.get("kind") != "hub":
            found = [p for p in _source_candidates(spec, recipe.get("file")) if p.exists()]
            if not found:
                raise ConfigError("the release's recorded source is not on this machine; pass --source",
                                  path=str(release.manifest_path), field="provenance.source.spec", actual=spec)
            spec = str(found[0])   # the recorded revision reproduces the build's source_revision
    load = load_tasks(spec, source=name, revision=revision, split=split)
    by_id = {t.instance_id: t for t in load.tasks if t.status == "ok"}
    out: dict[str, Task] = {}
    for n, row in enumerate(rows):
        iid = row["instance_id"]
        task = by_id.get(iid)
        if task is None:
            raise InputError("the source has no task for this release row", path=spec, field="instance_id",
                             actual=iid, hint=f"release row {n}")
        got = task_sha256(task)
        if got != row["source_task_sha256"]:
            raise InputError("source task differs from the one the release was built from", path=spec,
                             field="source_task_sha256", expected=row["source_task_sha256"], actual=got,
                             hint=f"instance {iid} (release row {n})")
        out[iid] = task
    return out


@dataclass(frozen=True)
class RunSpec:
    """How one task's tests run inside its image, from the repository root, with no network."""

    kind: str                       # "command" (the task's own test_command) or "run-script" (SWE-Bench Pro)
    command: str = ""
    run_script: str = ""            # file contents
    parser: str = ""                # file contents
    selected: str = ""              # SWE-Bench Pro's selected_test_files_to_run, comma-joined
    before_cmd: str = ""            # SWE-Bench Pro: last line of before_repo_set_cmd (checks out test files)

    def config(self) -> dict[str, Any]:
        if self.kind == "command":
            return {"kind": "command", "command": self.command}
        return {"kind": "run-script", "run_script": "run_script.sh", "parser": "parser.py",
                "selected": self.selected}


def _list_field(value: Any) -> list[str]:
    from ..sources import decode_list
    return [str(x) for x in decode_list(value)] if value not in (None, "") else []


def recorded_run_scripts(release) -> tuple[Path | None, Mapping[str, str] | None]:
    """The run-scripts folder the build recorded (manifest ``provenance.source.run_scripts``) and its files' hashes.

    ``(None, None)`` when the release records none. The folder is found as the source spec is: as
    written, or beside the shipped recipes (the example's ``../data/example/run_scripts``).
    """
    rec = (release.manifest.provenance.get("source") or {}).get("run_scripts") or {}
    if not rec:
        return None, None
    recipe = dict(release.manifest.provenance.get("recipe") or {})
    found = [p for p in _source_candidates(str(rec.get("path") or ""), recipe.get("file")) if p.is_dir()]
    if not found:
        raise ConfigError("the release's recorded run scripts are not on this machine; pass --run-scripts",
                          path=str(release.manifest_path), field="provenance.source.run_scripts.path",
                          actual=rec.get("path"))
    return found[0], dict(rec.get("files") or {})


def run_spec_for(task: Task, run_scripts: str | Path | None = None, *,
                 recorded: Mapping[str, str] | None = None) -> RunSpec:
    """The task's own ``test_command`` when it has one; else SWE-Bench Pro's run script and parser.

    ``recorded``: ``<id>/<file>`` -> sha256 as the build recorded them; a file that differs is refused.
    """
    command = str(getattr(task, "test_command", "") or (task.extra or {}).get("test_command") or "")
    if command:
        return RunSpec("command", command=command)
    if run_scripts is None:
        raise ConfigError("task has no test command: pass --run-scripts DIR (SWE-Bench Pro's run_scripts/, with "
                          "<instance_id>/run_script.sh and parser.py)", field="test_command", actual=task.instance_id)
    from swe_taskflow.hashing import file_sha256
    from swe_taskflow.safepath import inside

    base = inside(run_scripts, task.instance_id)
    missing = [str(base / f) for f in RUN_SCRIPT_FILES if not (base / f).is_file()]
    if missing:
        raise InputError("run script missing for this task", path=missing[0], field="run_scripts",
                         hint=f"instance {task.instance_id}")
    for f in RUN_SCRIPT_FILES if recorded is not None else ():
        want, got = recorded.get(f"{task.instance_id}/{f}"), file_sha256(base / f)
        if want != got:
            raise InputError("run script differs from the one the build recorded", path=str(base / f),
                             field="provenance.source.run_scripts", expected=want, actual=got)
    extra = task.extra or {}
    before = [ln for ln in str(extra.get("before_repo_set_cmd") or "").strip().splitlines() if ln.strip()]
    return RunSpec("run-script", run_script=(base / "run_script.sh").read_text(encoding="utf-8"),
                    parser=(base / "parser.py").read_text(encoding="utf-8"),
                    selected=",".join(_list_field(extra.get("selected_test_files_to_run"))),
                    before_cmd=before[-1] if before else "")


__all__ = ["load_source_tasks", "RunSpec", "run_spec_for", "recorded_run_scripts"]
