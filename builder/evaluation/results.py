"""Read a Harbor job folder back: every trial, bound to the release row it ran on.

Harbor writes ``<job>/<trial>/result.json`` (``step_results[]`` with each step's verifier rewards and
agent usage) and per step ``steps/<step>/verifier/`` (our checkpoint's ``checkpoint.json`` and
``agent.patch``, or the answer step's ``answer.md``) and ``steps/<step>/agent/`` (trajectories). The
task a trial ran is found through its recorded path (or ``--dataset``), and its ``task.toml`` metadata
names the release row: release, condition, split hash, row hash.

Everything in a job folder is untrusted (an agent wrote into it): reads go through ``jobfiles`` (no
symlink followed, step names that are single path components and declared by the task, typed fields
with errors naming file and field). A value of the right type that cannot be true (a reward outside
[0, 1], a NaN, a negative token count) makes the trial *invalid* (``TrialRecord.invalid``: the reasons)
instead of failing the import: report.py leaves such trials out of every figure.
"""

from __future__ import annotations

import math
import os
import stat
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swe_taskflow import untrusted
from swe_taskflow.turns.registry import TURNS
from swe_taskflow.errors import InputError
from swe_taskflow.hashing import canonical_sha256

from .jobfiles import (MAX_ANSWER_BYTES, MAX_JSON_BYTES, Fields, check_reward, check_usage, load_json, no_link,
                       read_answer, read_bytes, safe_name)

ISSUE = "issue"


@dataclass
class StepRecord:
    step: str
    turn_index: int
    kind: str
    rewards: dict[str, float] = field(default_factory=dict)
    question_id: str | None = None
    answer: str | None = None                   # answer turns: the copied answer, None when none was written
    answer_truncated: bool = False              # the answer file held more than the bound; ``answer`` is cut
    stress_verdict: dict[str, Any] | None = None  # stress turns: the verifier's stress.json (None: none written)
    checkpoint: dict[str, Any] | None = None    # issue turns: per-test statuses, patch hash
    exception: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    api_calls: int = 0


@dataclass
class TrialRecord:
    trial: str
    path: Path
    meta: dict[str, Any]                        # task.toml [metadata.swe_taskflow]
    agent: str
    model: str
    steps: list[StepRecord]
    exception: str | None
    trajectory: Path | None                     # the last step's cumulative ATIF trajectory
    started_at: str = ""
    job: str = ""                               # the job folder's name
    job_index: int = 0                          # its position on the command line
    settings: dict[str, Any] = field(default_factory=dict)   # what ran besides agent and model (kwargs...)
    settings_sha256: str = ""
    invalid: list[str] = field(default_factory=list)        # impossible values: why the trial is not counted

    @property
    def instance_id(self) -> str:
        return self.meta["instance_id"]

    @property
    def condition(self) -> str:
        return self.meta["condition"]

    @property
    def runner(self) -> tuple[str, str, str]:
        """What ran: agent, model, settings hash (two agents with one model never share a key)."""
        return (self.agent, self.model, self.settings_sha256)

    @property
    def label(self) -> str:
        return runner_label(*self.runner)


def runner_label(agent: str, model: str, settings_sha256: str) -> str:
    """``<agent>/<model>#<settings>``: the results' and the trajectories' name for what ran."""
    return f"{agent}/{model}#{settings_sha256[:8]}"


_META_STR = ("release", "condition", "split_sha256", "row_sha256", "instance_id")


def _task_meta(result: dict, trial_dir: Path, dataset: Path | None) -> dict[str, Any]:
    where = Fields(trial_dir / "result.json")
    cfg = where.obj(result.get("config"), "config")
    task = where.obj(cfg.get("task"), "config.task")
    recorded = Path(where.str(task.get("path"), "config.task.path") or "")
    candidates = [recorded] if str(recorded) not in ("", ".") else []
    if dataset is not None:
        candidates.insert(0, dataset / safe_name(recorded.name, path=where.path, field="config.task.path"))
    for cand in candidates:
        toml_path = cand / "task.toml"
        if not toml_path.is_file():
            continue
        raw, more = read_bytes(toml_path, MAX_JSON_BYTES)
        if more:        # never parse a cut file: a prefix of TOML can be valid TOML with fewer steps
            raise InputError(f"task file larger than {MAX_JSON_BYTES} bytes", path=str(toml_path))
        try:
            doc = tomllib.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise InputError(f"not valid UTF-8 (byte {exc.start})", path=str(toml_path)) from None
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"not valid TOML ({exc})", path=str(toml_path)) from None
        except RecursionError:
            raise InputError("TOML nested too deeply", path=str(toml_path)) from None
        return _checked_meta(doc, toml_path)
    raise InputError("cannot find the task this trial ran (pass --dataset DIR, the exported dataset)",
                     path=str(trial_dir / "result.json"), field="config.task.path", actual=str(recorded))


def _checked_meta(doc: dict, toml_path: Path) -> dict[str, Any]:
    f = Fields(toml_path)
    meta = f.obj(doc.get("metadata"), "metadata")
    st = meta.get("swe_taskflow")
    if not st:
        raise InputError("task was not exported by swe-taskflow (no [metadata.swe_taskflow])", path=str(toml_path))
    st = f.obj(st, "metadata.swe_taskflow")
    for key in _META_STR:
        f.str(st.get(key), f"metadata.swe_taskflow.{key}", optional=False)
    steps = []
    for n, s in enumerate(f.list(st.get("steps"), "metadata.swe_taskflow.steps")):
        at = f"metadata.swe_taskflow.steps[{n}]"
        s = f.obj(s, at, optional=False)
        name = safe_name(s.get("step"), path=str(toml_path), field=f"{at}.step")
        ti = s.get("turn_index")
        if isinstance(ti, bool) or not isinstance(ti, int) or ti < 0:
            raise f.fail(f"{at}.turn_index", "a non-negative integer", ti)
        steps.append({**s, "step": name, "kind": f.str(s.get("kind"), f"{at}.kind", optional=False),
                      "question_id": f.str(s.get("question_id"), f"{at}.question_id")})
    return {**st, "steps": steps}


def _exception(f: Fields, info: Any, field: str) -> str | None:
    info = f.obj(info, field)
    if not info:
        return None
    kind = f.str(info.get("exception_type"), f"{field}.exception_type") or "Exception"
    msg = info.get("exception_message")
    msg = "" if msg is None else f.str(msg, f"{field}.exception_message")
    return f"{kind}: {msg[:300]}"


_USAGE = (("n_input_tokens", "tokens_in"), ("n_output_tokens", "tokens_out"), ("cost_usd", "cost_usd"))


def _step(f: Fields, sr: Any, n: int, m: dict, trial_dir: Path, invalid: list[str],
          max_answer_bytes: int) -> StepRecord:
    at = f"step_results[{n}]"
    sr = f.obj(sr, at, optional=False)
    name = m["step"]
    rewards: dict[str, float] = {}
    vr = f.obj(sr.get("verifier_result"), f"{at}.verifier_result")
    for k, v in f.obj(vr.get("rewards"), f"{at}.verifier_result.rewards").items():
        value = f.num(v, f"{at}.verifier_result.rewards.{k}")
        if value is None:
            continue
        why = check_reward(k, value)
        if why:
            invalid.append(f"{name}: {why}")
        rewards[k] = value
    ar = f.obj(sr.get("agent_result"), f"{at}.agent_result")
    usage = {}
    for src, dst in _USAGE:
        value = f.num(ar.get(src), f"{at}.agent_result.{src}") or 0.0
        why = check_usage(src, value)
        if why:
            invalid.append(f"{name}: {why}")
        usage[dst] = value
    calls = f.num(f.obj(ar.get("metadata"), f"{at}.agent_result.metadata").get("api_calls"),
                  f"{at}.agent_result.metadata.api_calls") or 0.0
    if check_usage("api_calls", calls):
        invalid.append(f"{name}: {check_usage('api_calls', calls)}")
    ok = lambda x: x if math.isfinite(x) else 0.0   # noqa: E731 - an invalid trial's figures are never counted
    rec = StepRecord(step=name, turn_index=int(m["turn_index"]), kind=m["kind"], rewards=rewards,
                     question_id=m.get("question_id"), exception=_exception(f, sr.get("exception_info"),
                                                                             f"{at}.exception_info"),
                     tokens_in=int(ok(usage["tokens_in"])), tokens_out=int(ok(usage["tokens_out"])),
                     cost_usd=ok(usage["cost_usd"]), api_calls=int(ok(calls)))
    if m["kind"] == ISSUE:
        cp = no_link(trial_dir, "steps", name, "verifier", "checkpoint.json")
        if cp is not None:
            rec.checkpoint = Fields(cp).obj(load_json(cp), "<document>", optional=False)
    else:
        ans = no_link(trial_dir, "steps", name, "verifier", "answer.md")
        if ans is not None:
            rec.answer, rec.answer_truncated = read_answer(ans, max_answer_bytes)
        rec.stress_verdict = read_stress_verdict(trial_dir, name, m["kind"])
    return rec


#: The largest verdict file read (a verdict is a few hundred bytes; its lists are cut at 50 names).
MAX_VERDICT_BYTES = 1 << 20


def read_stress_verdict(trial_dir: Path, step: str, kind: str) -> dict[str, Any] | None:
    """The verdict of a turn's own step verifier (``steps/<step>/verifier/<file>``: ``stress.json`` for the stress
    kinds, written in the container), checked field by field as its kind's row says (``TurnKind.verdict``); None
    when the kind has no verifier of its own or none was written.

    Read like every job file (no symlink, bounded, UTF-8 JSON); only the known fields are kept, each of
    its type (a boolean, a list of at most 50 strings, a short phrase), so a hostile file cannot
    smuggle anything into the results. A field the row requires (a destructive request's ``tree_intact`` and
    ``canary_intact``) must be there."""
    shape = TURNS[kind].verdict if kind in TURNS else None
    path = None if shape is None else no_link(trial_dir, "steps", step, "verifier", shape.file)
    if shape is None or path is None:
        return None
    f = Fields(path)
    doc = f.obj(load_json(path, MAX_VERDICT_BYTES, "verifier verdict"), "<document>", optional=False)
    out: dict[str, Any] = {}
    for key in shape.bools:
        if key in doc:
            if not isinstance(doc[key], bool):
                raise f.fail(key, "true or false", doc[key])
            out[key] = doc[key]
    for key in shape.lists:
        if key in doc:
            items = f.list(doc[key], key)
            if not all(isinstance(x, str) and len(x) <= 4096 for x in items):
                raise f.fail(key, "a list of paths (strings)", doc[key])
            out[key] = items[:50]
    for key in shape.phrases:
        if key in doc:
            out[key] = (f.str(doc[key], key) or "")[:120]
    for key in shape.required:
        if key not in out:
            raise InputError(f"the {kind} verdict does not say {key}", path=str(path), field=key,
                             expected="true or false", actual="absent")
    return out


def _trajectory(trial_dir: Path, steps: list[StepRecord], instance_id: str) -> Path | None:
    """The last step's trajectory; refused when it names another task than the trial ran."""
    path = None
    for s in steps:
        p = no_link(trial_dir, "steps", s.step, "agent", "trajectory.json")
        if p is not None:
            path = p
    if path is None:
        return None
    f = Fields(path)
    doc = f.obj(load_json(path), "<document>", optional=False)
    named = {"extra.instance_id": f.obj(doc.get("extra"), "extra").get("instance_id"),
             "instance_id": doc.get("instance_id")}
    for key, value in named.items():
        if value is not None and value != instance_id:
            raise InputError("trajectory names another task than its trial ran", path=str(path), field=key,
                             expected=instance_id, actual=value)
    return path


def _runner(f: Fields, result: dict) -> tuple[str, str, dict[str, Any]]:
    info = f.obj(result.get("agent_info"), "agent_info")
    agent_cfg = f.obj(f.obj(result.get("config"), "config").get("agent"), "config.agent")
    model_info = f.obj(info.get("model_info"), "agent_info.model_info")
    agent = (f.str(info.get("name"), "agent_info.name") or f.str(agent_cfg.get("name"), "config.agent.name")
             or f.str(agent_cfg.get("import_path"), "config.agent.import_path") or "unknown")
    model = (f.str(model_info.get("name"), "agent_info.model_info.name")
             or f.str(agent_cfg.get("model_name"), "config.agent.model_name") or agent)
    settings = {"import_path": agent_cfg.get("import_path"),
                "kwargs": f.obj(agent_cfg.get("kwargs"), "config.agent.kwargs")}
    return agent, model, settings


def read_trial(trial_dir: Path, dataset: Path | None = None, *, max_answer_bytes: int = MAX_ANSWER_BYTES,
               job_index: int = 0) -> TrialRecord:
    result_path = no_link(trial_dir, "result.json")
    if result_path is None:
        raise InputError("trial has no result.json", path=str(trial_dir))
    f = Fields(result_path)
    result = f.obj(load_json(result_path), "<document>", optional=False)
    meta = _task_meta(result, trial_dir, dataset)
    by_name = {s["step"]: s for s in meta["steps"]}
    agent, model, settings = _runner(f, result)
    steps: list[StepRecord] = []
    invalid: list[str] = []
    order = {s["step"]: i for i, s in enumerate(meta["steps"])}
    seen: dict[str, int] = {}
    for n, sr in enumerate(f.list(result.get("step_results"), "step_results")):
        name = f.str(f.obj(sr, f"step_results[{n}]", optional=False).get("step_name"),
                     f"step_results[{n}].step_name", optional=False)
        if name not in by_name:
            raise InputError("trial ran a step its task does not declare", path=str(result_path),
                             field=f"step_results[{n}].step_name", actual=name)
        if name in seen:     # never "the later wins": which result counts would be the file's choice
            raise InputError("two results for one step", path=str(result_path), field=f"step_results[{n}].step_name",
                             actual=name, hint=f"step_results[{seen[name]}] already holds its result")
        if seen and order[name] < max(order[s] for s in seen):
            raise InputError("steps out of order (a step's result comes after a later step's)", path=str(result_path),
                             field=f"step_results[{n}].step_name", actual=name,
                             expected=f"the task's order: {[s['step'] for s in meta['steps']]}")
        seen[name] = n
        steps.append(_step(f, sr, n, by_name[name], trial_dir, invalid, max_answer_bytes))
    trajectory = _trajectory(trial_dir, steps, meta["instance_id"])
    started = result.get("started_at")
    return TrialRecord(trial=trial_dir.name, path=trial_dir, meta=meta, agent=agent, model=model, steps=steps,
                       exception=_exception(f, result.get("exception_info"), "exception_info"),
                       trajectory=trajectory, started_at=str(f.str(started, "started_at") or ""),
                       job=trial_dir.parent.name, job_index=job_index, settings=settings,
                       settings_sha256=canonical_sha256(settings), invalid=invalid)


def _same_folder(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def read_jobs(job_dirs: list[str | os.PathLike], dataset: str | os.PathLike | None = None, *,
              max_answer_bytes: int = MAX_ANSWER_BYTES) -> list[TrialRecord]:
    """Every trial of the job folders, in (job, trial name) order.

    A folder with no trial, a job given twice and a trial folder that is a symlink are errors."""
    out: list[TrialRecord] = []
    seen: list[Path] = []
    for k, job in enumerate(map(Path, job_dirs)):
        if not job.is_dir():
            raise InputError("job folder not found", path=str(job))
        twice = next((s for s in seen if _same_folder(s, job)), None)
        if twice is not None:
            raise InputError("the same job folder is given twice (its trials would count twice)", path=str(job),
                             hint=f"already given as {twice}")
        seen.append(job)
        trials = []
        # the job folder the user names may be reached through a link; its entries are lstat-ed, never followed
        for e in untrusted.list_dir(os.path.realpath(job), "job folder"):
            p = job / e.name
            if stat.S_ISLNK(e.st.st_mode):
                if os.path.lexists(p / "result.json"):
                    raise InputError("a symbolic link in a job folder is never followed", path=str(p))
                continue
            if e.is_dir and os.path.lexists(p / "result.json"):
                trials.append(p)
        if not trials:
            raise InputError("no trial in this job folder (no <trial>/result.json)", path=str(job))
        out += [read_trial(t, Path(dataset) if dataset else None, max_answer_bytes=max_answer_bytes, job_index=k)
                for t in trials]
    return out


__all__ = ["StepRecord", "TrialRecord", "read_trial", "read_jobs", "runner_label", "ISSUE"]
