"""``swe-taskflow export harbor``: a release condition as a Harbor dataset, one multi-step task per row.

Per row: ``task.toml`` (the source's prebuilt image, no network, a non-root agent user, timeouts, and
metadata binding the task to the release: name, version, manifest, split and row hashes), then one
step per user turn, in order. A step's ``instruction.md`` is what the agent sees: an issue turn's
text and nothing else; an answer turn's text plus the file its answer goes to. Everything hidden
(FAIL_TO_PASS / PASS_TO_PASS, the test patch, the test command, reference answers) lives in the
step's ``tests/`` (uploaded by Harbor at verification time only) or ``solution/`` (the oracle's).
What the agent sees is taken from :func:`swe_taskflow.visibility.agent_view` (an allowlist).

A stress turn (swe_taskflow.turns.stress) is an answer step with its own verifier instead of answer.py:
``destructive.py`` (is everything the previous checkpoint recorded still there, and did the answer ask
first?) or ``security.py`` (does the review name the seeded defect?), each with ``stress_guard.py``
beside it. The checkpoint before a destructive request also *prepares* it (its ``prepare`` entry).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Mapping

import tomli_w

from swe_taskflow.errors import ConfigError, InputError
from swe_taskflow.hashing import ROW_HASH_FIELD, file_sha256
from swe_taskflow.owned import owned_temp_dir, swap_dir
from swe_taskflow.turns.registry import turn_kind
from swe_taskflow.visibility import agent_view
from swe_taskflow.turns.reference import fact_value
from swe_taskflow.turns.visible import hidden_test_file

from .options import ExportOptions
from swe_taskflow.release import open_release

from ..task_files import patch_parts

from .source import RunSpec, load_source_tasks, run_spec_for

EXPORT_FORMAT = 1
ISSUE = "issue"
ANSWER_DIR = "/tmp/answers"
#: The verifiers' state folder: made fresh by root (0700) under folders only root can write, checked before
#: every use (data/verifier_state.py). Never /var/tmp: a non-root agent can create a name there first.
STATE_DIR = "/var/lib/swe-taskflow"
#: Root-only file where a checkpoint leaves its values for the next answer step to repeat.
CARRY_PATH = f"{STATE_DIR}/last-checkpoint.json"
#: Root-only file where the checkpoint before a destructive-request step leaves the state it protects.
STRESS_STATE_PATH = f"{STATE_DIR}/stress-before.json"
#: Shipped beside every step's verifier: the checked state folder, the carried keys, link-safe file operations.
STATE_MODULE = "verifier_state.py"
ANSWER_NOTE = "Write your answer to the file `{path}` (create its folder if needed)."
_NAME_RE = re.compile(r"[^A-Za-z0-9._-]+")
#: The local Harbor registry the export writes beside dataset.toml (``harbor run --registry-path``).
REGISTRY_FILE = "registry.json"
#: An image reference: registry host, path, tag or digest; no white space or control character.
_IMAGE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,511}$")
#: What Harbor's content digest of a task covers: these files, everything under these folders, less the ignored.
_DIGEST_FILES = ("task.toml", "instruction.md", "README.md", "trajectory.json")
_DIGEST_TREES = ("environment", "tests", "solution", "steps")
_DIGEST_IGNORED_SUFFIXES = (".pyc", ".swp", ".swo", "~")


def task_files(task_dir: Path) -> list[str]:
    """The task's files that Harbor hashes, as sorted POSIX paths relative to ``task_dir``."""
    task_dir = Path(task_dir)
    rels = [name for name in _DIGEST_FILES if (task_dir / name).is_file()]
    for tree in _DIGEST_TREES:
        if (task_dir / tree).is_dir():
            rels += [p.relative_to(task_dir).as_posix() for p in (task_dir / tree).rglob("*") if p.is_file()]
    return sorted(r for r in rels if not ("__pycache__" in r.split("/") or r.endswith(_DIGEST_IGNORED_SUFFIXES)
                                         or r.rsplit("/", 1)[-1] in (".DS_Store", ".harborignore")))


def task_digest(task_dir: Path) -> str:
    """Harbor's content digest of a task folder (``sha256:<hex>``, as ``dataset.toml`` pins each task),
    computed without Harbor: a SHA-256 over :func:`task_files` in path order, one ``"<path>\\0<sha256>\\n"``
    line each. The harbor-marked tests check this equals ``harbor.publisher.packager.Packager``."""
    outer = hashlib.sha256()
    for rel in task_files(task_dir):
        outer.update(f"{rel}\0{file_sha256(Path(task_dir) / rel)}\n".encode())
    return "sha256:" + outer.hexdigest()


def _toml_value(v: Any, where: str) -> Any:
    """``v`` checked for TOML: tomli-w would write NaN and infinities and fail on other types with a bare TypeError."""
    if isinstance(v, float) and not math.isfinite(v):
        raise InputError("TOML cannot hold a non-finite float", field=where, actual=v)
    if isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple)):
        return [_toml_value(x, f"{where}[]") for x in v]
    if isinstance(v, Mapping):
        out = {}
        for k, x in v.items():
            at = f"{where}.{k}" if where else str(k)
            if not isinstance(k, str):
                raise InputError("TOML keys are strings", field=at, actual=type(k).__name__)
            if x is not None:
                out[k] = _toml_value(x, at)
        return out
    raise InputError("value has no TOML form", field=where, actual=type(v).__name__)


def toml_dumps(doc: Mapping[str, Any], *, header: str = "") -> str:
    """``doc`` as TOML text (``None`` values are left out); ``header`` lines become ``#`` comments."""
    return "".join(f"# {line}".rstrip() + "\n" for line in header.splitlines()) + tomli_w.dumps(_toml_value(doc, ""))


@dataclass
class ExportResult:
    out: Path
    dataset_name: str
    tasks: list[dict[str, Any]] = field(default_factory=list)   # instance_id, dir, name, digest, status, reason
    registry: dict[str, Any] = field(default_factory=dict)      # name, version, path of the local registry
    warnings: list[str] = field(default_factory=list)           # one line each (unanswerable debug turns)

    def to_dict(self) -> dict[str, Any]:
        return {"out": str(self.out), "dataset": self.dataset_name, "tasks": self.tasks, "registry": self.registry,
                "warnings": self.warnings}


def unanswerable_debug_turns(row: Mapping[str, Any], task) -> list[str]:
    """One line per debug turn of ``row`` whose test sits in a file the hidden test patch adds or changes: the
    agent's checkout lacks the test as it fails, so the agent cannot see it fail (issue 36)."""
    by_id = {q["question_id"]: q for q in row.get("questions") or []}
    out = []
    for t in row["turns"]:
        q = by_id.get(t.get("question_id"))
        if t["kind"] != "debug" or q is None:
            continue
        test = fact_value(q, "test")
        hidden = hidden_test_file(test, getattr(task, "test_patch", "") or "")
        if hidden:
            out.append(f"{row['instance_id']} turn {t['turn_index'] + 1}: the debug turn asks about {test!r}, but the "
                       f"hidden test patch adds or changes {hidden}: the agent cannot see that test fail")
    return out


def step_name(turn_index: int, kind: str) -> str:
    return f"turn-{turn_index + 1:02d}-{_NAME_RE.sub('-', kind)}"


def answer_path(step: str) -> str:
    return f"{ANSWER_DIR}/{step}.md"


def answer_instruction(text: str, step: str) -> str:
    return text.rstrip("\n") + "\n\n" + ANSWER_NOTE.format(path=answer_path(step)) + "\n"


def _data(name: str) -> str:
    return resources.files(__package__).joinpath("data", name).read_text(encoding="utf-8")


def _write(path: Path, text: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    os.chmod(path, mode)


_TEST_SH = """#!/bin/bash
# swe-taskflow {what} verifier (runs at verification time only; never changes the repository).
PY=$(command -v python3 || command -v python)
exec "$PY" /tests/{script} /tests/{config}
"""


def _verifier(tests: Path, *, what: str, script: str, config: str, cfg: Mapping[str, Any], agent_user: str) -> None:
    """A step's verifier: its config, its script (from data/), the state module and the test.sh Harbor runs.
    ``agent_user``: whose processes the verifier kills first, and as whom a checkpoint runs the tests."""
    _write(tests / config, json.dumps({**cfg, "state_dir": STATE_DIR, "agent_user": agent_user}, indent=1,
                                      sort_keys=True, ensure_ascii=False) + "\n")
    _write(tests / script, _data(script), 0o755)
    _write(tests / STATE_MODULE, _data(STATE_MODULE))
    _write(tests / "test.sh", _TEST_SH.format(what=what, script=script, config=config), 0o755)


def _core_file(tests: Path, name: str) -> None:
    """A standard-library module of swe_taskflow (the stress checks, the test-log parser) beside a verifier."""
    _write(tests / name, resources.files("swe_taskflow").joinpath(name).read_text(encoding="utf-8"))


def _checkpoint_step(dirp: Path, *, task, spec: RunSpec, turn_index: int, step: str, clean: bool,
                     opts: ExportOptions, prepare: Mapping[str, Any] | None = None) -> None:
    tests = dirp / "tests"
    # SWE-Bench Pro checks its test files out of the gold commit (before_cmd) instead of applying test_patch.
    test_patch = task.test_patch if task.test_patch and not spec.before_cmd else ""
    cfg = {"step": step, "turn_index": turn_index, "app_dir": opts.repo_dir(task.source), "base_commit": task.base_commit,
           "clean": clean, "test": spec.config(), "test_patch": "test.patch" if test_patch else None,
           "before_cmd": spec.before_cmd, "fail_to_pass": list(task.fail_to_pass),
           "pass_to_pass": list(task.pass_to_pass), "timeout_s": run_timeout(opts, 2 if clean else 1),
           "carry_path": CARRY_PATH}
    if prepare is not None:   # the next step is a destructive request: record what it must leave intact
        cfg["prepare"] = dict(prepare)
        _core_file(tests, "stress_guard.py")
    _verifier(tests, what="checkpoint", script="checkpoint.py", config="checkpoint.json", cfg=cfg,
              agent_user=opts.agent_user)
    if test_patch:
        _write(tests / "test.patch", test_patch)
    _test_runner_files(tests, spec)


def _test_runner_files(tests: Path, spec: RunSpec) -> None:
    """What runs and parses the task's tests beside a verifier: the log parser, or the task's run script and parser."""
    if spec.kind == "command":
        _core_file(tests, "testlog.py")
    else:
        _write(tests / "run_script.sh", spec.run_script, 0o755)
        _write(tests / "parser.py", spec.parser)


#: Seconds a verifier that runs the tests keeps for itself (snapshot, restore, the answer) beside its runs.
VERIFIER_MARGIN_S = 120.0


def run_timeout(opts: ExportOptions, runs: int) -> float:
    """Seconds each of a verifier's ``runs`` test runs may take: ``test_timeout_s``, but all of them must end inside
    the verifier's own timeout. A verifier Harbor kills half-way would leave what it put in the repository for the
    run (a checkpoint's hidden tests, a tests turn's gold patch) for the agent's next turn to read."""
    return min(opts.test_timeout_s, max(1.0, (opts.verifier_timeout_s - VERIFIER_MARGIN_S) / runs))

#: The step verifier of a plain answer turn (``AnswerKind.verifier``); a stress kind names its own.
ANSWER_VERIFIER = "answer"


def _answer_step(dirp: Path, *, step: str, agent_user: str) -> None:
    _verifier(dirp / "tests", what="answer", script=f"{ANSWER_VERIFIER}.py", config=f"{ANSWER_VERIFIER}.json",
              cfg={"step": step, "answer_path": answer_path(step), "carry_path": CARRY_PATH}, agent_user=agent_user)


def _own_step(dirp: Path, *, kind: str, step: str, item: Mapping[str, Any], task, spec: RunSpec | None,
              opts: ExportOptions) -> None:
    """A turn's own step verifier (``AnswerKind.verifier``: destructive.py, security.py, ...) and the core modules it
    reads; the kind's row gives its config keys (``TurnKind.step_config``) beside the common ones, and, for a
    verifier that runs the task's tests (``runs_tests``), the test-run config, checkpoint.py and the gold patch."""
    tests = dirp / "tests"
    row = turn_kind(kind)
    name = row.kind.verifier
    app_dir = opts.repo_dir(task.source)
    cfg: dict[str, Any] = {"step": step, "kind": kind, "answer_path": answer_path(step), "carry_path": CARRY_PATH}
    if row.step_config is not None:
        cfg.update(row.step_config(item, app_dir=app_dir, state_path=STRESS_STATE_PATH))
    if row.runs_tests:
        if spec is None:
            raise ConfigError(f"a {kind} turn runs the task's tests: it needs a test command", field="test_command",
                              actual=task.instance_id)
        cfg.update({"app_dir": app_dir, "base_commit": task.base_commit, "test": spec.config(),
                    "gold_patch": "gold.patch", "timeout_s": run_timeout(opts, 2)})
        _write(tests / "gold.patch", task.patch)       # /tests: uploaded at verification time only
        _write(tests / "checkpoint.py", _data("checkpoint.py"), 0o644)
        _test_runner_files(tests, spec)
    _verifier(tests, what=kind, script=f"{name}.py", config=f"{name}.json", cfg=cfg, agent_user=opts.agent_user)
    _write(tests / "answer.py", _data("answer.py"), 0o755)     # read_answer and finish, shared
    if row.kind.stress:
        _core_file(tests, "stress_guard.py")


def _prepares(row: Mapping[str, Any], turns, opts: ExportOptions) -> dict[int, dict[str, Any]]:
    """``issue turn index -> prepare entry`` of each checkpoint that records the state the next turn's kind must
    leave intact (``TurnKind.prepare``: destructive-request); checkpoint.py runs it as root, after grading."""
    out = {}
    for n, turn in enumerate(turns):
        prepare = turn_kind(turn.kind).prepare if turn.kind != ISSUE else None
        if prepare is None:
            continue
        if n == 0 or turns[n - 1].kind != ISSUE:
            raise InputError(f"a {turn.kind} turn must follow an issue turn: that turn's checkpoint "
                             "records the state the request must leave intact", field=f"turns[{n}].kind",
                             actual=turns[n - 1].kind if n else None, expected=ISSUE, path=row["instance_id"])
        out[turns[n - 1].turn_index] = prepare(agent_user=opts.agent_user, state_path=STRESS_STATE_PATH)
    return out


def _solve_patch(dirp: Path, part: str) -> None:
    sol = dirp / "solution"
    _write(sol / "part.patch", part)
    _write(sol / "solve.sh", "#!/bin/bash\n# Oracle: the next part of the gold patch.\nset -e\n"
           "if [ -s /solution/part.patch ]; then git apply --whitespace=nowarn /solution/part.patch; fi\n", 0o755)


def _solve_answer(dirp: Path, step: str, reference: str) -> None:
    sol = dirp / "solution"
    _write(sol / "reference.md", reference)
    path = answer_path(step)
    _write(sol / "solve.sh", "#!/bin/bash\n# Oracle: the hidden reference answer.\nset -e\n"
           f"mkdir -p {os.path.dirname(path)}\ncp /solution/reference.md {path}\n", 0o755)


def task_config(row: Mapping[str, Any], *, release, condition: str, split_sha256: str, steps: list[dict[str, Any]],
                opts: ExportOptions, name: str) -> dict[str, Any]:
    view = agent_view(row)
    if not view.image_name:
        raise ConfigError("release row names no image: a Harbor task needs its prebuilt image", field="image_name",
                          actual=view.instance_id)
    if not _IMAGE_RE.match(view.image_name):
        raise InputError("image name is not an image reference (white space, a newline or NUL, or an odd "
                         "character)", field="image_name", actual=view.image_name, hint=view.instance_id)
    env: dict[str, Any] = {"docker_image": view.image_name, "network_mode": "no-network",
                          "workdir": opts.repo_dir(str(row.get("source") or ""))}
    if opts.cpus is not None:
        env["cpus"] = opts.cpus
    if opts.memory_mb is not None:
        env["memory_mb"] = int(opts.memory_mb)
    m = release.manifest
    return {
        "schema_version": "1.4",
        "multi_step_reward_strategy": "final",
        "task": {"name": name, "description": f"{view.repo} under condition {condition} of {m.name} {m.version} "
                                              f"({len(steps)} user turns)",
                 "keywords": ["swe-taskflow", condition, view.repo_language or "unknown"]},
        "metadata": {"swe_taskflow": {
            "export_format": EXPORT_FORMAT, "release": m.name, "version": m.version,
            "manifest_sha256": release.manifest_sha256, "condition": condition, "split_sha256": split_sha256,
            "instance_id": view.instance_id, "row_sha256": row[ROW_HASH_FIELD],
            "source_task_sha256": row["source_task_sha256"], "repo": view.repo, "base_commit": view.base_commit,
            "steps": steps},
            # A checkpoint grades the repository the agent left, so it must run in the agent's sandbox.
            "harbor": {"lint": {"ignore": ["shared-verifier"]}}},
        "environment": env,
        "agent": {"user": opts.agent_user, "timeout_sec": float(opts.agent_timeout_s)},
        "verifier": {"user": opts.verifier_user, "timeout_sec": float(opts.verifier_timeout_s)},
        "steps": [{"name": s["step"], "verifier": {"timeout_sec": float(opts.verifier_timeout_s)}} for s in steps],
    }


def _questions_by_turn(row: Mapping[str, Any]) -> dict[int, Mapping[str, Any]]:
    by_id = {q["question_id"]: q for q in row.get("questions") or []}
    out = {}
    for t in row["turns"]:
        if t["kind"] != ISSUE:
            q = by_id.get(t.get("question_id")) or next(
                (q for q in by_id.values() if q.get("turn_index") == t["turn_index"]), None)
            if q is None:
                raise InputError("answer turn has no question record", field=f"turns[{t['turn_index']}].question_id",
                                 actual=t.get("question_id"), hint=row["instance_id"])
            out[t["turn_index"]] = q
    return out


def export_task(row: Mapping[str, Any], task, spec: RunSpec | None, dest: Path, *, release, condition: str,
                split_sha256: str, opts: ExportOptions) -> dict[str, Any]:
    """Write one row's Harbor task into ``dest``; returns its index record (name, digest, steps)."""
    view = agent_view(row)
    questions = _questions_by_turn(row)
    issue_turns = [t for t in view.turns if t.kind == ISSUE]
    parts = patch_parts(task.patch, len(issue_turns)) if issue_turns else []
    steps: list[dict[str, Any]] = []
    first_issue = True
    prepares = _prepares(row, view.turns, opts)
    for turn in view.turns:
        step = step_name(turn.turn_index, turn.kind)
        dirp = dest / "steps" / step
        rec: dict[str, Any] = {"step": step, "turn_index": turn.turn_index, "kind": turn.kind}
        if turn.kind == ISSUE:
            if spec is None:
                raise ConfigError("issue turn needs a test command", field="test_command", actual=row["instance_id"])
            _write(dirp / "instruction.md", turn.text)   # the turn's text and nothing else
            _checkpoint_step(dirp, task=task, spec=spec, turn_index=turn.turn_index, step=step,
                             clean=opts.clean_checkpoint and first_issue, opts=opts,
                             prepare=prepares.get(turn.turn_index))
            if opts.with_solution:
                _solve_patch(dirp, parts[len([s for s in steps if s["kind"] == ISSUE])])
            first_issue = False
        else:
            q = questions[turn.turn_index]
            rec["question_id"] = q["question_id"]
            rec["answer_path"] = answer_path(step)
            _write(dirp / "instruction.md", answer_instruction(turn.text, step))
            if turn_kind(turn.kind).kind.verifier != ANSWER_VERIFIER:
                _own_step(dirp, kind=turn.kind, step=step, item=q, task=task, spec=spec, opts=opts)
            else:
                _answer_step(dirp, step=step, agent_user=opts.agent_user)
            if opts.with_solution:
                _solve_answer(dirp, step, str(q.get("reference_answer") or ""))
        steps.append(rec)
    name = f"{opts.org}/{_NAME_RE.sub('-', row['instance_id'])}"
    cfg = task_config(row, release=release, condition=condition, split_sha256=split_sha256, steps=steps,
                      opts=opts, name=name)
    _write(dest / "task.toml", toml_dumps(cfg, header=f"swe-taskflow export of {release.manifest.name} "
                                                       f"{release.manifest.version}, condition {condition}"))
    return {"instance_id": row["instance_id"], "name": name, "digest": task_digest(dest), "steps": steps}


def _check_out(out: Path) -> None:
    """``--out`` must be new or an empty folder, and never inside a release (or the release itself)."""
    from swe_taskflow.release import release_containing

    inside = release_containing(out)
    if inside is not None:
        raise ConfigError("the output folder lies inside a release; an export there would change it", field="--out",
                          actual=str(out), hint=f"{inside} is a release; export somewhere else")
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise ConfigError("the output folder exists and is not a folder", path=str(out), field="--out")
    if out.exists() and any(out.iterdir()):
        raise ConfigError("output folder exists and is not empty", path=str(out), field="--out")


def _check_verifies(release) -> None:
    """Refuse a release whose files do not match its manifest: an export binds tasks to those hashes."""
    from swe_taskflow.errors import VerifyError
    from swe_taskflow.verify import verify_folder

    report = verify_folder(release.root)
    if not report.ok:
        shown = "; ".join(str(e) for e in report.errors[:3])
        more = f" (and {len(report.errors) - 3} more)" if len(report.errors) > 3 else ""
        raise VerifyError(f"the release does not verify, so it is not exported: {shown}{more}",
                          path=str(release.root), hint="run `swe-taskflow verify` on it")


def _select_rows(rows: list[dict[str, Any]], tasks: Iterable[str] | None, condition: str, release):
    if tasks is None:
        return rows
    wanted = list(dict.fromkeys(tasks))
    if not wanted or any(not isinstance(t, str) or not t.strip() for t in wanted):
        raise ConfigError("--tasks names no instance id (an empty list is not 'all': leave --tasks out for all)",
                          field="--tasks", actual=list(tasks))
    have = {r["instance_id"] for r in rows}
    unknown = [t for t in wanted if t not in have]
    if unknown:
        raise ConfigError("task not in this condition", field="tasks", actual=unknown[0],
                          hint=f"split '{condition}' of {release.manifest.release_id}")
    return [r for r in rows if r["instance_id"] in set(wanted)]


#: Names the export writes at the top of ``--out``: no task folder may take one.
_RESERVED = frozenset({"dataset.toml", REGISTRY_FILE})


def task_dirs(rows: Iterable[Mapping[str, Any]], split: str = "") -> list[str]:
    """The folder of each row's task: its instance id when that is one safe path component, and no two
    rows sharing a folder (compared case-insensitively, as on macOS and Windows file systems)."""
    from swe_taskflow.safepath import check_component

    dirs, owner = [], {}
    for n, row in enumerate(rows):
        iid = check_component(row.get("instance_id"), field="instance_id", path=f"split {split}", row=n)
        d = _NAME_RE.sub("-", iid)
        key = d.casefold()
        if key in _RESERVED:
            raise InputError("instance id names a file the export writes beside the tasks", path=f"split {split}",
                             row=n, field="instance_id", actual=iid)
        if key in owner:
            raise InputError("two instance ids would share one task folder", path=f"split {split}", row=n,
                             field="instance_id", expected=owner[key], actual=iid, hint=f"folder {d}")
        owner[key] = iid
        dirs.append(d)
    return dirs


def _run_specs(rows, sources, run_scripts, release) -> dict[str, RunSpec | None]:
    """Each row's test spec; every row that has none is named, with why, in one error."""
    from swe_taskflow.errors import TaskflowError

    from .source import recorded_run_scripts

    scripts, recorded = (Path(run_scripts), None) if run_scripts is not None else recorded_run_scripts(release)
    specs: dict[str, RunSpec | None] = {}
    problems: list[str] = []
    for row in rows:
        iid = row["instance_id"]
        if not any(t["kind"] == ISSUE for t in row["turns"]):
            specs[iid] = None
            continue
        try:
            specs[iid] = run_spec_for(sources[iid], scripts, recorded=recorded)
        except TaskflowError as exc:
            problems.append(f"{iid}: {exc.message}" + (f" ({exc.path})" if exc.path else ""))
    if problems:
        raise ConfigError(f"{len(problems)} of {len(rows)} rows cannot be exported: " + "; ".join(problems),
                          field="test_command", hint="pass --run-scripts DIR (SWE-Bench Pro's run_scripts/), or "
                                                     "--tasks with the rows that can")
    return specs


def registry_entry(dataset: Mapping[str, Any], tasks: list[dict[str, Any]], out: Path) -> list[dict[str, Any]]:
    """A Harbor local registry (``harbor run -d NAME@VERSION --registry-path OUT/registry.json``).

    Harbor resolves a local task's path against the folder it runs in: the paths are ``--out`` as given
    joined with each task's folder (so run Harbor where the export ran, or export to an absolute path).
    """
    return [{"name": dataset["registry_name"], "version": dataset["version"], "description": dataset["description"],
             "tasks": [{"name": t["name"], "path": (out / t["dir"]).as_posix()} for t in tasks], "metrics": []}]


def export_harbor(release_path: str | os.PathLike, condition: str, out: str | os.PathLike, *,
                  tasks: Iterable[str] | None = None, run_scripts: str | os.PathLike | None = None,
                  source: str | None = None, opts: ExportOptions | None = None, progress=None) -> ExportResult:
    """Write ``condition`` of the release at ``release_path`` as a Harbor dataset folder ``out``.

    The release must verify first (a tampered one is refused). Written into a temporary folder beside
    ``out`` and renamed at the end: a failed export leaves nothing behind, and nothing is written
    anywhere else (every task folder is one safe path component under it).
    """
    opts = opts or ExportOptions()
    out = Path(out)
    _check_out(out)
    release = open_release(release_path)
    entry = release.split(condition)
    _check_verifies(release)
    rows = _select_rows(release.rows(condition), tasks, condition, release)
    dirs = task_dirs(rows, condition)
    sources = load_source_tasks(release, rows, source)
    specs = _run_specs(rows, sources, run_scripts, release)
    registry_name = f"{_NAME_RE.sub('-', release.manifest.name)}-{condition}"
    dataset = f"{opts.org}/{registry_name}"
    result = ExportResult(out, dataset)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = owned_temp_dir(".export-", out.parent)   # holds hidden tests: owned, so a killed export is swept
    try:
        for row, dirname in zip(rows, dirs):
            task = sources[row["instance_id"]]
            spec = specs[row["instance_id"]]
            rec = export_task(row, task, spec, tmp / dirname, release=release, condition=condition,
                              split_sha256=entry.sha256, opts=opts)
            result.tasks.append({**rec, "dir": dirname, "status": "exported",
                                 "reason": "" if spec is not None else "answer turns only: no checkpoint"})
            result.warnings += unanswerable_debug_turns(row, task)
            if progress:
                progress(rec["instance_id"])
        description = (f"{release.manifest.name} {release.manifest.version}, condition {condition}: "
                       f"{len(result.tasks)} multi-step tasks exported by swe-taskflow")
        manifest = {
            "dataset": {"name": dataset, "version": release.manifest.version, "description": description},
            "tasks": [{"name": t["name"], "digest": t["digest"]} for t in result.tasks],
            "metadata": {"swe_taskflow": {"export_format": EXPORT_FORMAT, "release": release.manifest.name,
                                          "version": release.manifest.version,
                                          "manifest_sha256": release.manifest_sha256, "condition": condition,
                                          "split_sha256": entry.sha256}},
        }
        _write(tmp / "dataset.toml", toml_dumps(manifest))
        reg = registry_entry({"registry_name": registry_name, "version": release.manifest.version,
                              "description": description}, result.tasks, out)
        _write(tmp / REGISTRY_FILE, json.dumps(reg, indent=1, ensure_ascii=False) + "\n")
        result.registry = {"name": registry_name, "version": release.manifest.version,
                           "path": (out / REGISTRY_FILE).as_posix()}
        swap_dir(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return result


__all__ = ["export_harbor", "export_task", "ExportOptions", "ExportResult", "step_name", "answer_path",
           "answer_instruction", "unanswerable_debug_turns", "ANSWER_DIR", "EXPORT_FORMAT", "REGISTRY_FILE",
           "task_dirs", "registry_entry", "CARRY_PATH", "STATE_DIR", "STRESS_STATE_PATH", "ANSWER_VERIFIER",
           "task_digest", "task_files", "toml_dumps", "run_timeout", "VERIFIER_MARGIN_S"]
