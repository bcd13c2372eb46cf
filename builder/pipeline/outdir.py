"""The build's output folder: written only where the build owns every file it replaces.

``build --out D`` replaces ``D/release/``, ``D/report/`` and ``D/build.json``. The build records what it
wrote there (size and modification time of each file, in ``D/.swe-taskflow-out.json``); a later build
refuses to proceed when ``D`` holds files it did not write there (a folder it did not create, a note a
user dropped into ``D/release/``, a report edited by hand) unless ``--overwrite`` is given. It also
refuses an output folder inside a release, and removes the temporary copies a killed build left.

One change to ``D/release/`` is not foreign: ``evaluate import`` (or ``trajectories import``) rewriting it
with agent trajectories, which leaves a release that still verifies against its own manifest. A rebuild
keeps those trajectories when the rows they are bound to are unchanged (:func:`carry_trajectories`);
when rows changed, the old release with its trajectories is moved aside to ``D/stale-trajectories/``,
never deleted.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from swe_taskflow.errors import ConfigError, InputError
from swe_taskflow.release import release_containing

from swe_taskflow.hygiene import owner_dead

MARKER = ".swe-taskflow-out.json"
FORMAT = "swe-taskflow/build-out"
#: What a build writes into its output folder (besides the cache, which it locks and owns).
OWNED = ("release", "report", "build.json")


def _stats(out: Path) -> dict[str, list[int]]:
    files: dict[str, list[int]] = {}
    for name in OWNED:
        top = out / name
        paths = [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file() or p.is_symlink()) \
            if top.is_dir() else []
        for p in paths:
            st = p.lstat()
            files[p.relative_to(out).as_posix()] = [st.st_size, st.st_mtime_ns]
    return files


def _legacy(out: Path) -> bool:
    """A folder an earlier swe-taskflow build wrote (before the marker existed): its build.json says so."""
    try:
        doc = json.loads((out / "build.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(doc, dict) and isinstance(doc.get("stages"), list) and "recipe" in doc


def foreign_files(out: Path) -> list[str]:
    """Files under ``out`` that a build would replace but did not write (empty: the build may proceed)."""
    if not out.exists():
        return []
    entries = [p for p in out.iterdir() if not p.name.startswith(".") and p.name != "cache"]
    marker = out / MARKER
    if marker.is_file():
        try:
            recorded = json.loads(marker.read_text(encoding="utf-8")).get("files", {})
        except (OSError, ValueError, AttributeError):
            recorded = {}
        changed = sorted(rel for rel, st in _stats(out).items() if recorded.get(rel) != st)
        if changed and all(rel.startswith("release/") for rel in changed) and release_intact(out / "release"):
            return []   # rewritten by a trajectories import: still a whole release; the build keeps its trajectories
        return changed
    if not entries or _legacy(out):
        return []
    return sorted(p.name + ("/" if p.is_dir() else "") for p in entries)


#: Where a rebuild moves a release whose trajectories no longer bind to the new rows.
STALE = "stale-trajectories"


def release_intact(folder: Path) -> bool:
    """``folder`` is a release whose every file matches its manifest and which holds no other file."""
    from swe_taskflow.verify import verify_folder

    return folder.is_dir() and (folder / "manifests").is_dir() and verify_folder(folder).ok


def carry_trajectories(old: Path, new: Path, say=print) -> dict[str, int]:
    """Before ``old`` (the previous build's release, maybe with imported trajectories) is replaced by ``new``.

    Trajectories are bound to a split hash and a row hash. When every one of them binds to ``new``'s
    rows, they are written into ``new`` (rewritten in place, the caller's copy). When any does not,
    nothing is carried: the whole old release (a verifiable copy holding them) is moved to
    ``<out>/stale-trajectories/<manifest sha12>/`` with a message; nothing is ever deleted.
    Returns ``{"kept": n, "stale": m}``.
    """
    from ..release.writer import read_release, rewrite_release
    from swe_taskflow.hashing import ROW_HASH_FIELD
    from swe_taskflow.errors import TaskflowError
    from swe_taskflow.release import SESSION_CONFIG, TRAJ_HASH_FIELD, TRAJECTORY_CONFIG, open_release

    try:
        has_trajectories = any(s.config == TRAJECTORY_CONFIG for s in open_release(old).manifest.splits)
    except TaskflowError:
        has_trajectories = False
    if not has_trajectories or not release_intact(old):   # nothing imported (or not a whole release): replace it
        return {"kept": 0, "stale": 0}
    _, _, trajs = read_release(old)
    if not trajs:
        return {"kept": 0, "stale": 0}
    manifest, splits, _ = read_release(new)
    split_hash = {s.name: s.sha256 for s in manifest.splits if s.config == SESSION_CONFIG}
    row_hash = {(name, r["instance_id"]): r[ROW_HASH_FIELD] for name, rows in splits.items() for r in rows}
    stale = [t for t in trajs if split_hash.get(t["condition"]) != t["split_sha256"]
             or row_hash.get((t["condition"], t["instance_id"])) != t["row_sha256"]]
    if not stale:
        rewrite_release(new, trajectories=[{**t, TRAJ_HASH_FIELD: None} for t in trajs])
        say(f"kept {len(trajs)} imported trajectories: the rows they are bound to are unchanged")
        return {"kept": len(trajs), "stale": 0}
    mfile = sorted((old / "manifests").glob("*.json"))[0]
    tag = hashlib.sha256(mfile.read_bytes()).hexdigest()[:12]
    dest = old.parent / STALE / tag
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists():   # the same old release moved aside before: keep both
        dest = dest.parent / f"{tag}-{len(list(dest.parent.glob(tag + '*')))}"
    os.rename(old, dest)
    say(f"moved {len(trajs)} imported trajectories aside ({len(stale)} bound to rows this build changed): the "
        f"release they were imported into is now {dest} ({open_release(dest).manifest.release_id}, still verifiable); "
        "import them again after running the agents on the new rows")
    return {"kept": 0, "stale": len(trajs)}


def claim(out: Path, *, overwrite: bool = False) -> None:
    """Check that the build may write into ``out`` (ConfigError naming ``--out`` when not)."""
    release = release_containing(out)
    if release is not None:
        raise ConfigError("the output folder lies inside a release; a build there would corrupt it", field="--out",
                          actual=str(out), hint=f"{release} is a release; build somewhere else")
    if out.exists() and not out.is_dir():
        raise InputError("the output folder exists and is not a folder", path=str(out), field="--out")
    foreign = foreign_files(out)
    if foreign and not overwrite:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise ConfigError(f"the output folder holds files this build did not write ({shown}); they would be "
                          "replaced", path=str(out), field="--out",
                          hint="move them away, choose another --out, or pass --overwrite")
    sweep_temporaries(out)


def record(out: Path) -> None:
    """Remember what the build wrote, so the next build knows these files are its own."""
    from swe_taskflow.jsonl import write_json

    write_json(out / MARKER, {"format": FORMAT, "version": 1, "files": _stats(out)})


def sweep_temporaries(out: Path) -> None:
    """Remove the half-copied ``.release.*`` / ``.report.*`` folders of builds that were killed; an old copy set
    aside by a swap whose new copy never came in goes back in place (swe_taskflow.owned.swap_dir)."""
    if not out.is_dir():
        return
    for p in out.iterdir():
        if p.name.startswith((".release.", ".report.")) and p.is_dir() and owner_dead(p.name):
            dest = out / p.name[1:].split(".", 1)[0]
            if ".old-" in p.name and not os.path.lexists(dest):
                os.replace(p, dest)   # a swap killed between its two renames: the old copy goes back
                continue
            shutil.rmtree(p, ignore_errors=True)


__all__ = ["MARKER", "STALE", "claim", "record", "foreign_files", "sweep_temporaries", "release_intact",
           "carry_trajectories"]
