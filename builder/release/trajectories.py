"""Import agent trajectories into a release's ``trajectories`` config.

Readers for mini-swe-agent ``.traj.json`` (optionally gzipped) and Harbor's ATIF JSON turn a file
into one trajectory row keyed by (condition, instance_id, model, run), bound to the split hash and
the row hash of the release row it was run on, with cost and token statistics. The release is then
rewritten (same provenance, new manifest) so trajectories are published and verified like splits.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from swe_taskflow.errors import ConfigError, InputError
from swe_taskflow import untrusted
from swe_taskflow.hashing import ROW_HASH_FIELD
from swe_taskflow.release import SESSION_CONFIG, TRAJ_HASH_FIELD

from ..evaluation.jobfiles import check_usage

from .messages import typed_messages

FORMATS = ("auto", "mini-swe-agent", "atif")


def _load_json(path: Path) -> Any:
    """A trajectory file through :mod:`swe_taskflow.untrusted`: a regular file (no link, no FIFO), bounded, and
    when gzipped (by name or by its magic bytes) decompressed with a bound on the decompressed size."""
    raw = untrusted.read_bytes(path, "trajectory file")
    if path.suffix == ".gz" or raw[:2] == b"\x1f\x8b":
        raw = untrusted.gunzip(raw, path=path, kind="trajectory file")
    try:
        return untrusted.parse_json(raw, path=path, kind="trajectory file")
    except InputError as exc:
        raise InputError(f"trajectory is not readable JSON ({exc.message})", path=str(path), row=exc.row) from None


def _usage(value: Any, key: str, field: str, where: str) -> float:
    """A usage figure checked as ``result.json``'s are (``jobfiles.check_usage``): a number, finite, non-negative,
    whole for counts; absent is 0. Anything else is an error naming the file and the field (never truncated,
    never parsed from a string)."""
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError("expected a number", path=where, field=field, actual=value)
    why = check_usage(key, float(value))
    if why:
        raise InputError(f"impossible usage figure: {why}", path=where, field=field, actual=value)
    return float(value)


def _int(x: Any) -> int:
    return int(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else 0


def parse_mini_swe_agent(doc: Mapping[str, Any], *, where: str) -> dict[str, Any]:
    """Fields of a mini-swe-agent trajectory (``info``, ``messages``, ``trajectory_format``, ``instance_id``)."""
    if not isinstance(doc.get("messages"), list) or not isinstance(doc.get("info"), Mapping):
        raise InputError("not a mini-swe-agent trajectory (needs 'info' and 'messages')", path=where)
    info = doc["info"]
    stats = info.get("model_stats") or {}
    if not isinstance(stats, Mapping):
        raise InputError("expected an object", path=where, field="info.model_stats", actual=type(stats).__name__)
    tin = tout = 0
    model = None
    for m in doc["messages"]:
        resp = ((m.get("extra") or {}).get("response") or {}) if isinstance(m, Mapping) else {}
        usage = resp.get("usage") or {}
        tin += _int(usage.get("prompt_tokens"))
        tout += _int(usage.get("completion_tokens"))
        model = model or resp.get("model")
    return {"instance_id": doc.get("instance_id"), "trajectory_format": str(doc.get("trajectory_format") or "mini-swe-agent"),
            "messages": doc["messages"], "exit_status": str(info.get("exit_status") or ""),
            "cost_usd": _usage(stats.get("instance_cost"), "cost_usd", "info.model_stats.instance_cost", where),
            "api_calls": int(_usage(stats.get("api_calls"), "api_calls", "info.model_stats.api_calls", where)),
            "tokens_in": tin, "tokens_out": tout, "model": model}


def parse_atif(doc: Mapping[str, Any], *, where: str) -> dict[str, Any]:
    """Fields of a Harbor ATIF trajectory (``schema_version``, ``agent``, ``steps``, ``final_metrics``)."""
    if not str(doc.get("schema_version", "")).startswith("ATIF") or not isinstance(doc.get("steps"), list):
        raise InputError("not an ATIF trajectory (needs schema_version 'ATIF-v1.x' and 'steps')", path=where)
    fm = doc.get("final_metrics") or {}
    if not isinstance(fm, Mapping):
        raise InputError("expected an object", path=where, field="final_metrics", actual=type(fm).__name__)
    steps = doc["steps"]
    metrics = []
    for n, st in enumerate(steps):
        m = st.get("metrics") if isinstance(st, Mapping) else None
        if m is not None and not isinstance(m, Mapping):
            raise InputError("expected an object", path=where, field=f"steps[{n}].metrics", actual=type(m).__name__)
        metrics.append((n, m or {}))
    step_in = sum(_usage(m.get("prompt_tokens"), "tokens_in", f"steps[{n}].metrics.prompt_tokens", where)
                  for n, m in metrics)
    step_out = sum(_usage(m.get("completion_tokens"), "tokens_out", f"steps[{n}].metrics.completion_tokens", where)
                   for n, m in metrics)
    step_cost = sum(_usage(m.get("cost_usd"), "cost_usd", f"steps[{n}].metrics.cost_usd", where) for n, m in metrics)
    tin = _usage(fm.get("total_prompt_tokens"), "tokens_in", "final_metrics.total_prompt_tokens", where) or step_in
    tout = _usage(fm.get("total_completion_tokens"), "tokens_out", "final_metrics.total_completion_tokens",
                  where) or step_out
    cost = step_cost if fm.get("total_cost_usd") is None else \
        _usage(fm.get("total_cost_usd"), "cost_usd", "final_metrics.total_cost_usd", where)
    extra = doc.get("extra") or {}
    return {"instance_id": extra.get("instance_id"), "trajectory_format": str(doc["schema_version"]),
            "messages": steps, "exit_status": str(extra.get("exit_status") or ""), "cost_usd": float(cost),
            "api_calls": sum(1 for s in steps if isinstance(s, Mapping) and s.get("source") == "agent"),
            "tokens_in": tin, "tokens_out": tout, "model": (doc.get("agent") or {}).get("model_name")}


def read_trajectory(path: str | os.PathLike, *, fmt: str = "auto") -> dict[str, Any]:
    """Parse one trajectory file; ``fmt`` is auto, mini-swe-agent or atif."""
    if fmt not in FORMATS:
        raise ConfigError("unknown trajectory format", field="format", actual=fmt, expected=FORMATS)
    path = Path(path)
    doc = _load_json(path)
    if not isinstance(doc, Mapping):
        raise InputError("trajectory is not a JSON object", path=str(path))
    if fmt == "atif" or (fmt == "auto" and "schema_version" in doc):
        out = parse_atif(doc, where=str(path))
    else:
        out = parse_mini_swe_agent(doc, where=str(path))
    out["source_file_sha256"] = untrusted.file_sha256(path, "trajectory file")
    if not out.get("instance_id"):
        out["instance_id"] = re.sub(r"(\.traj)?\.json(\.gz)?$", "", path.name)
    return out


def trajectory_row(parsed: Mapping[str, Any], *, condition: str, model: str, run: int, split_sha256: str,
                   row_sha256: str, checkpoints: Sequence[Mapping[str, Any]] = (),
                   qa_answers: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """A trajectory row (its ``trajectory_sha256`` is filled by the writer)."""
    return {"condition": condition, "instance_id": parsed["instance_id"], "model": model, "run": int(run),
            "split_sha256": split_sha256, "row_sha256": row_sha256,
            "trajectory_format": parsed["trajectory_format"],
            "messages": typed_messages(parsed["trajectory_format"], parsed["messages"]),
            "exit_status": parsed["exit_status"], "checkpoints": [dict(c) for c in checkpoints],
            "qa_answers": [dict(a) for a in qa_answers], "cost_usd": float(parsed["cost_usd"]),
            "tokens_in": int(parsed["tokens_in"]), "tokens_out": int(parsed["tokens_out"]),
            "api_calls": int(parsed["api_calls"]), "source_file_sha256": parsed["source_file_sha256"],
            TRAJ_HASH_FIELD: None}


def import_trajectories(release_dir: str | os.PathLike, files: Iterable[str | os.PathLike], *, condition: str,
                        model: str | None = None, run: int = 0, fmt: str = "auto",
                        extras: Mapping[str, Mapping[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Trajectory rows for ``files`` run on split ``condition`` of the release at ``release_dir``.

    Each file's instance must be a row of that split (else an error naming the file). ``extras``:
    optional ``{instance_id: {"checkpoints": [...], "qa_answers": [...]}}`` from the harness.
    """
    from swe_taskflow.release import open_release, split_rows

    manifest = open_release(release_dir).manifest
    split = manifest.split(SESSION_CONFIG, condition)
    if split is None:
        raise ConfigError("unknown split", field="condition", actual=condition,
                          expected=[s.name for s in manifest.splits if s.config == SESSION_CONFIG])
    row_of = {r["instance_id"]: r[ROW_HASH_FIELD] for r in split_rows(release_dir, split)}
    out = []
    for f in files:
        parsed = read_trajectory(f, fmt=fmt)
        iid = parsed["instance_id"]
        if iid not in row_of:
            raise InputError(f"trajectory's instance is not in split '{condition}' of {manifest.release_id} "
                             f"({len(row_of)} rows)", path=str(f), field="instance_id", actual=iid,
                             hint="pass --condition with the split the agent was run on")
        name = model or parsed.get("model")
        if not name:
            raise InputError("trajectory names no model: pass --model", path=str(f), field="model")
        ex = (extras or {}).get(iid, {})
        out.append(trajectory_row(parsed, condition=condition, model=str(name), run=run, split_sha256=split.sha256,
                                  row_sha256=row_of[iid], checkpoints=ex.get("checkpoints", ()),
                                  qa_answers=ex.get("qa_answers", ())))
    return out


def add_trajectories(release_dir: str | os.PathLike, rows: Sequence[Mapping[str, Any]], *,
                     replace: bool = False):
    """Rewrite the release with ``rows`` added to its trajectories config; returns the new manifest.

    A row whose (condition, instance_id, model, run) is already published is an error unless
    ``replace``. Everything else (splits, provenance, package record, target, extra files, the
    release's repository id, license and description) is kept.
    """
    from .writer import read_release, rewrite_release
    _, _, published = read_release(release_dir)
    key = lambda r: (r["condition"], r["instance_id"], r["model"], int(r["run"]))  # noqa: E731
    existing = {key(r): r for r in published}
    for r in rows:
        if key(r) in existing and not replace:
            raise InputError("trajectory already in the release", field="condition/instance/model/run",
                             actual=list(key(r)), hint="--replace replaces it")
        existing[key(r)] = {**r, TRAJ_HASH_FIELD: None}
    return rewrite_release(release_dir, trajectories=list(existing.values()))


__all__ = ["read_trajectory", "parse_mini_swe_agent", "parse_atif", "trajectory_row", "import_trajectories",
           "add_trajectories", "FORMATS"]
