"""A release folder: its layout, its one manifest, its rows, and which files it may hold.

The one place that knows the layout (``manifests/<name>-<version>.json``, the session and trajectory configs,
``data/...`` shards named by the manifest); the writer, ``verify``, the card, croissant.json, ``export harbor``
and ``evaluate import`` all read releases through it. A release is published byte for byte, so every file in
it must be a regular file inside it: a symbolic link (even to an identical copy elsewhere), a FIFO (reading it
blocks forever), a socket or a device is a finding, never read; a link loop is a finding, never a traceback.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from .errors import ConfigError, InputError, VerifyError
from . import untrusted
from .manifest import FORMAT as MANIFEST_FORMAT, FileEntry, Manifest, SplitEntry, load_manifest

#: The dataset config of the session splits (one per condition) and of the agent trajectories.
SESSION_CONFIG = "default"
TRAJECTORY_CONFIG = "trajectories"
#: The column of a trajectory row that binds it to the row it was run on.
TRAJ_HASH_FIELD = "trajectory_sha256"
MANIFESTS_DIR = "manifests"
#: A push record kept beside a manifest in the project's manifests/ folder; never a release's manifest.
PUBLISHED_SUFFIX = ".published.json"

#: Files a Hub checkout or download adds that are not part of a release.
IGNORED = (re.compile(r"^\.git(/|$)"), re.compile(r"^\.gitattributes$"), re.compile(r"^\.cache(/|$)"),
           re.compile(r"(^|/)\.DS_Store$"))


def is_ignored(rel: str) -> bool:
    return any(p.search(rel) for p in IGNORED)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a regular file"


def inventory(root: Path, *, skip: Sequence[str] = ()) -> tuple[dict[str, int], list[VerifyError]]:
    """The size of every regular file under ``root`` (posix paths relative to it), from ``lstat`` alone, and a
    finding for every entry that is not a regular file or folder. Nothing is opened or hashed here: what is
    hashed is decided by name and size first (``verify`` hashes only files the manifest lists at that size)."""
    out: dict[str, int] = {}
    errors: list[VerifyError] = []
    for dirpath, dirnames, filenames in os.walk(root):   # never follows links to folders
        for name in sorted(dirnames + filenames):
            p = Path(dirpath) / name
            rel = p.relative_to(root).as_posix()
            if is_ignored(rel) or rel in skip:
                if name in dirnames:
                    dirnames.remove(name)
                continue
            try:
                st = os.lstat(p)
            except OSError as exc:
                errors.append(VerifyError(f"cannot be read ({exc.strerror})", kind="unexpected", path=rel))
                continue
            if stat.S_ISDIR(st.st_mode):
                continue
            if not stat.S_ISREG(st.st_mode):
                what = _kind(st.st_mode)
                if what == "a symbolic link":
                    what += f" to {os.readlink(p)!r}"
                errors.append(VerifyError(f"is {what}, not a regular file; a release holds regular files only",
                                          kind="unexpected", path=rel))
                continue
            out[rel] = st.st_size
        dirnames[:] = sorted(d for d in dirnames if stat.S_ISDIR(os.lstat(Path(dirpath) / d).st_mode))
    return out, errors


def hash_listed(root: Path, expected: Sequence[FileEntry],
                sizes: Mapping[str, int]) -> tuple[dict[str, FileEntry], list[VerifyError]]:
    """A :class:`FileEntry` per file of the inventory, hashed (through :mod:`swe_taskflow.untrusted`) only when
    the manifest lists it at exactly that size and that size is within the limit for a release file; any other
    keeps an empty sha256 (a sparse 8 GiB file that is not listed, or listed at another size, is never read).
    A listed file over the limit is a finding of its own (a forged manifest cannot make verify hash 1 TiB)."""
    want = {f.path: f.size for f in expected}
    bound = untrusted.limit_for("release file")
    out, errors = {}, []
    for rel, size in sizes.items():
        sha = ""
        if want.get(rel) == size:
            if size > bound:
                errors.append(VerifyError(f"file is larger than the limit for a release file ({bound} bytes); "
                                          "it is not hashed", kind="unexpected", path=rel, field="size",
                                          expected=f"<= {bound} B", actual=f"{size} B"))
            else:
                sha = untrusted.file_sha256(Path(root) / rel, "release file", root=root)
        out[rel] = FileEntry(rel, sha, size)
    return out, errors


def regular_file(root: Path, rel: str) -> bool:
    """Whether ``root/rel`` is a regular file reached without following a link."""
    p = root
    for part in Path(rel).parts:
        p = p / part
        try:
            mode = os.lstat(p).st_mode
        except OSError:
            return False
        if stat.S_ISLNK(mode):
            return False
    return stat.S_ISREG(mode)


def is_release_root(path: Path) -> bool:
    """A folder holding exactly one manifest (``manifests/<name>-<version>.json``) of its own name and at
    least one of its data files: a release folder (the project's ``manifests/`` is not one)."""
    if not (path / MANIFESTS_DIR).is_dir() or not (path / "README.md").is_file():
        return False
    found = manifest_files(path)
    if len(found) != 1 or not regular_file(path, f"manifests/{found[0].name}"):
        return False
    try:
        doc = untrusted.read_json(found[0], "manifest")
    except InputError:
        return False
    if not isinstance(doc, dict) or doc.get("format") != MANIFEST_FORMAT \
            or f"{doc.get('name')}-{doc.get('version')}.json" != found[0].name:
        return False
    files = [f.get("path") for s in doc.get("splits") or [] if isinstance(s, dict)
             for f in s.get("files") or [] if isinstance(f, dict)]
    return any(isinstance(f, str) and (path / f).is_file() for f in files)


def manifest_files(root: Path) -> list[Path]:
    """The manifest candidates of a release folder, sorted: ``manifests/*.json`` but push records."""
    mdir = Path(root) / MANIFESTS_DIR
    return sorted(p for p in mdir.glob("*.json") if not p.name.endswith(PUBLISHED_SUFFIX)) if mdir.is_dir() else []


def split_rows(root: Path, entry: SplitEntry) -> list[dict[str, Any]]:
    """The rows of one split (a manifest ``SplitEntry``), its shards in order."""
    import pyarrow.parquet as pq
    out: list[dict[str, Any]] = []
    for f in entry.files:
        with untrusted.open_file(Path(root) / f.path, "parquet shard", root=root) as fh:
            out += pq.read_table(fh).to_pylist()
    return out


@dataclass(frozen=True)
class Release:
    """A release folder opened for reading: its manifest, the manifest's file and that file's sha256."""

    root: Path
    manifest: Manifest
    manifest_path: Path
    manifest_sha256: str

    def split(self, condition: str) -> SplitEntry:
        """The session split of ``condition`` (a ConfigError naming the conditions there are)."""
        entry = self.manifest.split(SESSION_CONFIG, condition)
        if entry is None:
            raise ConfigError("the release has no such condition", path=str(self.root), field="condition",
                              actual=condition,
                              expected=[s.name for s in self.manifest.splits if s.config == SESSION_CONFIG])
        return entry

    def rows(self, condition: str) -> list[dict[str, Any]]:
        """A condition's rows in release order."""
        return split_rows(self.root, self.split(condition))

    def session_splits(self) -> dict[str, list[dict[str, Any]]]:
        return {s.name: split_rows(self.root, s) for s in self.manifest.splits if s.config == SESSION_CONFIG}

    def trajectory_rows(self) -> list[dict[str, Any]]:
        return [r for s in self.manifest.splits if s.config == TRAJECTORY_CONFIG for r in split_rows(self.root, s)]


def open_release(path: str | os.PathLike) -> Release:
    """The release folder at ``path``, which must hold exactly one manifest."""
    import hashlib

    root = Path(path)
    if not root.is_dir():
        raise InputError("release folder not found", path=str(root))
    found = manifest_files(root)
    if len(found) != 1:
        raise InputError("release folder must hold exactly one manifest", path=str(root / MANIFESTS_DIR),
                         expected=1, actual=len(found))
    manifest, raw = load_manifest(found[0])
    return Release(root, manifest, found[0], hashlib.sha256(raw).hexdigest())


def release_containing(path: str | os.PathLike) -> Path | None:
    """The release folder that ``path`` (existing or not) is, or lies inside; None when there is none."""
    p = Path(os.path.abspath(path))
    for folder in (p, *p.parents):
        if folder.is_dir() and is_release_root(folder):
            return folder
    return None


__all__ = ["SESSION_CONFIG", "TRAJECTORY_CONFIG", "TRAJ_HASH_FIELD", "MANIFESTS_DIR", "IGNORED", "is_ignored", "inventory",
           "hash_listed", "regular_file", "is_release_root", "release_containing", "manifest_files", "split_rows", "Release",
           "open_release"]
