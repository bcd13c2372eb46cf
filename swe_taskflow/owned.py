"""Temporary folders with an owner, and the folder swap: what a killed command leaves is found and swept.

A process killed with ``kill -9`` runs no ``finally``. So every temporary folder the project makes comes
from :func:`owned_temp_dir`: its name carries the owner tag ``<pid>.<start time>@<boot id>.<pid namespace>``
(one process on one host), and before it exists its path is recorded in the owner's record folder
``<tmp>/swe-taskflow-<owner>/owned/``. The next command of any kind (:func:`sweep_dead_owners`) removes,
for every record folder whose owner is dead on this host, the folders it recorded (only when the name
still carries that owner's tag and is a real folder), then the record folder itself. A live owner's
folders, and any owner that cannot be judged from here (another boot or pid namespace), are never touched.

:func:`swap_dir` puts a finished folder in place of an existing one: old aside, new in, old removed; an
interrupt between any two steps leaves either the old or the new folder at the destination (and the
other one under an owned name that the next command sweeps).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

#: Prefix of every temporary folder and record folder the project makes in the temp folder.
PREFIX = "swe-taskflow"
OWNER_RE = re.compile(r"(?P<pid>\d+)\.(?P<start>\d+)@(?P<boot>[0-9a-f]{12})\.(?P<ns>\d+)")
#: Sub-folder of an owner's record folder holding one file per owned temporary folder (its path).
RECORDS = "owned"


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip().replace("-", "")[:12]
    except OSError:
        return "0" * 12


def _pid_ns() -> str:
    try:
        return re.sub(r"\D", "", os.readlink("/proc/self/ns/pid")) or "0"
    except OSError:
        return "0"


def _start_time(pid: int) -> str | None:
    """Field 22 of /proc/<pid>/stat (clock ticks after boot): with the pid, it names one process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2:].split()[19]


@functools.lru_cache(maxsize=None)
def _owner(pid: int) -> str:
    return f"{pid}.{_start_time(pid) or 0}@{_boot_id()}.{_pid_ns()}"


def owner_id() -> str:
    """This process as an owner string (cached by pid, so a fork gets its own)."""
    return _owner(os.getpid())


def owner_dead(owner: str) -> bool:
    """True only when ``owner`` is a process of this boot and pid namespace that no longer runs."""
    m = OWNER_RE.search(owner or "")
    if m is None or m["boot"] != _boot_id() or m["ns"] != _pid_ns():
        return False   # not judgeable from here: keep it
    return _start_time(int(m["pid"])) != m["start"]


def record_dir(owner: str | None = None) -> Path:
    """The folder where ``owner`` (default: this process) records its temporary folders."""
    return Path(tempfile.gettempdir()) / f"{PREFIX}-{owner or owner_id()}"


def scratch_dir() -> Path:
    """This process's private temporary folder (0755: a sandbox user must read staged scripts), which also holds
    its records; removed at a normal exit, swept by the next command after a ``kill -9``."""
    path = record_dir()
    if not path.is_dir():
        path.mkdir(mode=0o755, exist_ok=True)
        os.chmod(path, 0o755)
        import atexit

        atexit.register(shutil.rmtree, path, True)
    return path


def owned_temp_dir(prefix: str, parent: str | os.PathLike | None = None, *,
                   restore_to: str | os.PathLike | None = None) -> Path:
    """Create and return a new folder ``<parent>/<prefix><owner>-<random>`` (default parent: the temp folder),
    recorded first so that the next command removes it when this process dies without cleaning up. The one
    way the project names a temporary folder; the caller removes it (or renames it into place).
    ``restore_to``: the sweep moves the folder back there instead of removing it when nothing is there (an
    old copy set aside by :func:`swap_dir` whose replacement never came in)."""
    parent = Path(parent) if parent is not None else Path(tempfile.gettempdir())
    records = scratch_dir() / RECORDS
    records.mkdir(mode=0o700, exist_ok=True)
    for _ in range(100):
        token = os.urandom(4).hex()
        path = parent / f"{prefix}{owner_id()}-{token}"
        record = records / token
        if record.exists() or os.path.lexists(path):
            continue
        lines = [os.path.abspath(path)] + ([os.path.abspath(restore_to)] if restore_to is not None else [])
        record.write_text("\n".join(lines), encoding="utf-8")   # recorded before it exists: never lost
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            record.unlink(missing_ok=True)
            continue
        except BaseException:
            record.unlink(missing_ok=True)
            raise
        return path
    raise FileExistsError(f"no free temporary name under {parent} after 100 tries")


@contextlib.contextmanager
def owned_temp(prefix: str, parent: str | os.PathLike | None = None) -> Iterator[Path]:
    """:func:`owned_temp_dir` as a ``with`` block: the folder is removed when the block ends."""
    path = owned_temp_dir(prefix, parent)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def swap_dir(new: str | os.PathLike, dest: str | os.PathLike) -> None:
    """Put the finished folder ``new`` at ``dest`` (same file system): an existing ``dest`` is moved aside under an
    owned name, ``new`` renamed in, then the old copy removed. ``dest`` is never missing for longer than
    between two renames, and an interrupt anywhere leaves the old or the new folder there."""
    new, dest = Path(new), Path(dest)
    old = None
    try:
        if os.path.lexists(dest):
            old = owned_temp_dir(f".{dest.name}.old-", dest.parent, restore_to=dest)
            os.replace(dest, old)      # a folder replaces the empty owned folder in one rename
        os.replace(new, dest)
    except BaseException:
        if old is not None:
            if not os.path.lexists(dest):
                os.replace(old, dest)  # the old copy goes back in place
            else:                      # not moved aside yet (empty), or the new copy is already in
                shutil.rmtree(old, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _recorded_paths(records: Path, owner: str) -> list[tuple[Path, Path | None]]:
    """(folder, where to restore it or None) for each record of an owner whose folder name carries its tag."""
    paths: list[tuple[Path, Path | None]] = []
    try:
        entries = list((records / RECORDS).iterdir())
    except OSError:
        return paths
    for rec in entries:
        try:
            if rec.is_symlink() or not rec.is_file() or rec.stat().st_size > 4096:
                continue
            lines = rec.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        path = Path(lines[0]) if lines else Path()
        back = Path(lines[1]) if len(lines) > 1 and Path(lines[1]).is_absolute() else None
        if path.is_absolute() and owner in path.name:
            paths.append((path, back))
    return paths


def sweep_dead_owners(root: str | os.PathLike | None = None) -> list[str]:
    """Remove what dead owners left: their recorded temporary folders (wherever they lie) and their folders
    directly under ``root`` (default: the temp folder). Returns the removed paths."""
    root = Path(root or tempfile.gettempdir())
    removed: list[str] = []
    try:
        entries = list(root.iterdir())
    except OSError:
        return removed
    uid = os.getuid()
    for p in entries:
        if not p.name.startswith(f"{PREFIX}-") or p.is_symlink() or not p.is_dir() or not owner_dead(p.name):
            continue
        m = OWNER_RE.search(p.name)
        if m is None:
            continue
        with contextlib.suppress(OSError):
            if p.stat().st_uid == uid:   # records only from our own user's folders
                for path, back in _recorded_paths(p, m.group(0)):
                    if path.is_symlink() or not path.is_dir():
                        continue
                    if back is not None and not os.path.lexists(back):
                        with contextlib.suppress(OSError):   # a copy that cannot go back is kept, never removed
                            os.replace(path, back)   # killed between a swap's two renames: the old copy goes back
                        continue
                    shutil.rmtree(path, ignore_errors=True)
                    removed.append(str(path))
        shutil.rmtree(p, ignore_errors=True)
        removed.append(str(p))
    return removed


__all__ = ["PREFIX", "OWNER_RE", "owner_id", "owner_dead", "record_dir", "scratch_dir", "owned_temp_dir",
           "owned_temp", "swap_dir", "sweep_dead_owners"]
