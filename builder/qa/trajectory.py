"""Read a mini-swe-agent trajectory (``.traj.json`` or ``.traj.json.gz``) into the facts QA mining needs."""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass
from pathlib import Path

from swe_taskflow.errors import InputError
from swe_taskflow.safepath import is_inside

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
