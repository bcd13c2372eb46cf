"""Read a mini-swe-agent trajectory (``.traj.json`` or ``.traj.json.gz``) into the facts QA mining needs.

Questions are mined only from a run that solved the issue (Appendix E): the run must have ended by
submitting (``exit_status``), with a non-empty patch, and, where a results file records it, the
submission must have resolved the task.
"""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass
from pathlib import Path

from swe_taskflow.errors import InputError
from swe_taskflow.safepath import is_inside

#: ``info.exit_status`` values of a run that ended by submitting its patch (mini-swe-agent).
SOLVED_EXIT_STATUSES = ("Submitted",)

_BASH = re.compile(r"```bash\s*\n(.*?)```", re.S)
_PR = re.compile(r"<pr_description>(.*?)</pr_description>", re.S)
_FILE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.(?:py|pyx|pyi|js|ts|tsx|jsx|go|rs|java|rb|php|c|h|cpp|"
                   r"cfg|toml|ini|ya?ml|json|rst|md|txt|html))\b")


@dataclass(frozen=True)
class Trajectory:
    """What a solving run shows: the issue it got, its commands, the files it touched, its patch."""

    instance_id: str
    issue: str
    commands: tuple[str, ...]
    files_read: tuple[str, ...]
    submission: str
    exit_status: str
    trajectory_format: str
    path: str


def read_trajectory(path: str | Path) -> Trajectory:
    """Parse one trajectory file; a malformed file is an :class:`InputError` naming the field."""
    path = Path(path)
    if not path.exists():
        raise InputError("trajectory not found", path=str(path))
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, json.JSONDecodeError, UnicodeDecodeError, RecursionError, EOFError) as exc:
        raise InputError(f"unreadable trajectory: {type(exc).__name__}: {exc}", path=str(path)) from None
    msgs = data.get("messages") if isinstance(data, dict) else None
    if not isinstance(msgs, list):
        raise InputError("trajectory has no message list", path=str(path), field="messages")
    issue, commands = "", []
    for i, m in enumerate(msgs):
        if not isinstance(m, dict) or not isinstance(m.get("content"), str):
            raise InputError("message without text content", path=str(path), field=f"messages[{i}].content")
        if m.get("role") == "user" and not issue:
            pr = _PR.search(m["content"])
            if pr:
                issue = pr.group(1).replace("Consider the following PR description:", "", 1).strip()
        if m.get("role") == "assistant":
            commands += [c.strip() for c in _BASH.findall(m["content"])]
    seen: dict[str, None] = {}
    for c in commands:
        for f in _FILE.findall(c):
            if not f.startswith(("/tmp", ".")) and "reproduce" not in f:
                seen.setdefault(f.lstrip("./"), None)
    info = data.get("info") or {}
    return Trajectory(instance_id=str(data.get("instance_id") or path.name.split(".traj")[0]), issue=issue,
                      commands=tuple(commands), files_read=tuple(seen), submission=str(info.get("submission") or ""),
                      exit_status=str(info.get("exit_status") or ""),
                      trajectory_format=str(data.get("trajectory_format") or ""), path=str(path))


def find_trajectory(folder: str | Path, instance_id: str) -> Path | None:
    """``<id>.traj.json(.gz)`` directly in ``folder`` or in ``folder/<id>/``."""
    folder = Path(folder)
    if not is_inside(folder, instance_id):   # an id from data never names a path outside the folder
        return None
    for sub in (folder, folder / instance_id):
        for name in (f"{instance_id}.traj.json", f"{instance_id}.traj.json.gz"):
            if (sub / name).exists():
                return sub / name
    return None


def load_resolved(path: str | Path) -> dict[str, bool]:
    """Per-instance resolution flags from a results file: a mini-swe-agent ``results_summary.json``
    (``{"instances": [{"instance_id", "resolved"}, ...]}``) or an ``{instance_id: bool}`` mapping
    (SWE-Bench Pro ``eval_results``)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("results file not found", path=str(path)) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"results file is not JSON: {exc}", path=str(path)) from None
    rows = data.get("instances") if isinstance(data, dict) and "instances" in data else None
    if rows is None:
        if not isinstance(data, dict) or not all(isinstance(v, bool) for v in data.values()):
            raise InputError("not a results file: expected {instance_id: bool} or {'instances': [...]}", path=str(path))
        return dict(data)
    out = {}
    for i, r in enumerate(rows):
        if not isinstance(r, dict) or not isinstance(r.get("instance_id"), str) or not isinstance(r.get("resolved"), bool):
            raise InputError("results row needs instance_id and a boolean resolved", path=str(path), row=i,
                             field="resolved")
        out[r["instance_id"]] = r["resolved"]
    return out


def solving_problem(traj: Trajectory, resolved: bool | None = None) -> str:
    """Why ``traj`` cannot count as a solving run ('' when it can). ``resolved``: the task's flag from a
    results file, or None when no file records it (then the exit status and patch decide)."""
    if traj.exit_status not in SOLVED_EXIT_STATUSES:
        return f"exit status {traj.exit_status or '(none)'!r}: the run did not submit a solution"
    if not traj.submission.strip():
        return "the run submitted an empty patch"
    if resolved is False:
        return "the submitted patch did not resolve the task (results file)"
    return ""
