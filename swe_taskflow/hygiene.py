"""Leftovers of killed runs: who owns a container, cgroup or temporary folder, and sweeping the dead ones.

Everything the project creates that can outlive its process (Docker containers, pids cgroups,
temporary folders) carries its owner: ``<pid>.<start time>@<boot id>.<pid namespace>``, as the label
``swe-taskflow.owner`` or inside its name. Images say who built them with ``swe-taskflow.built-by``
and are never swept (a container inherits its image's labels, so the owner key must not be there). A process killed with ``kill -9`` runs no
cleanup, so the next run sweeps: it removes only what belongs to owners that are dead on this host
(same boot and pid namespace, and the pid gone or reused). Other live processes' containers, on the
same daemon, are never touched, nor is anything whose owner cannot be judged from here.

Catchable signals (SIGINT, SIGTERM, SIGHUP) interrupt the main thread, so ``finally`` blocks run;
:func:`kill_active` stops every sandbox still running in worker threads at that moment.
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Callable, Sequence

# the owner tag and the owned temporary folders live in the core (swe_taskflow.verify makes one too)
from .owned import OWNER_RE as _OWNER_RE
from .owned import PREFIX, owned_temp, owned_temp_dir, owner_dead, owner_id, scratch_dir
from .owned import sweep_dead_owners as sweep_folders

#: Docker label naming the owner process of a container.
OWNER_LABEL = "swe-taskflow.owner"
#: Docker label naming the process that built an image. Not OWNER_LABEL: a container inherits its image's
#: labels, so an image carrying OWNER_LABEL would mark every container made from it (by any process,
#: any version of the code) as owned by the long-dead builder, and the sweep would remove it.
IMAGE_LABEL = "swe-taskflow.built-by"
CGROUP_ROOTS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))


def labels(**extra: str) -> dict[str, str]:
    """Labels for a container this process creates (the sweep removes it once this process is dead)."""
    return {OWNER_LABEL: owner_id(), **extra}


def scratch_temp(prefix: str) -> tempfile.TemporaryDirectory:
    """A TemporaryDirectory inside :func:`scratch_dir`, so a killed run's leftovers can be found."""
    return tempfile.TemporaryDirectory(prefix=prefix, dir=scratch_dir())


def cgroup_name(tag: str) -> str:
    return f"{PREFIX}-{tag}-{owner_id()}-{os.urandom(4).hex()}"


# ---------------------------------------------------------------- running sandboxes

_ACTIVE: dict[int, Callable[[], None]] = {}
_ACTIVE_LOCK = threading.Lock()
_NEXT = [0]
#: Set by :func:`kill_active`: a sandbox registering afterwards is stopped at once.
CANCELLED = threading.Event()


def register(kill: Callable[[], None]) -> int:
    """Remember how to stop a running sandbox; returns a handle for :func:`unregister`."""
    with _ACTIVE_LOCK:
        _NEXT[0] += 1
        _ACTIVE[_NEXT[0]] = kill
        handle = _NEXT[0]
    if CANCELLED.is_set():
        kill()
    return handle


def unregister(handle: int) -> None:
    with _ACTIVE_LOCK:
        _ACTIVE.pop(handle, None)


def kill_once(kill: Callable[..., object], *args: object,
              ignore: tuple[type[BaseException], ...] = ()) -> tuple[Callable[[], None], threading.Event]:
    """``kill(*args)`` made to act once however often it is called (output limit, timeout, interrupt), errors
    in ``ignore`` dropped (it may have ended already); and the event saying it was called."""
    killed = threading.Event()

    def once() -> None:
        if not killed.is_set():
            killed.set()
            with contextlib.suppress(*ignore):
                kill(*args)

    return once, killed


def kill_active() -> int:
    """Stop every registered sandbox, and any that registers until :func:`CANCELLED` is cleared (called
    when the run is interrupted); returns how many were running."""
    CANCELLED.set()
    with _ACTIVE_LOCK:
        kills = list(_ACTIVE.values())
    for kill in kills:
        with contextlib.suppress(Exception):   # it may have ended already
            kill()
    return len(kills)


def run_threads(calls: Sequence[Callable[[], Any]], jobs: int, on_result: Callable[[int, Any], None],
                stopping: threading.Event | None = None) -> None:
    """``calls`` on ``jobs`` threads, ``on_result(index, value)`` as each finishes. An interrupt (Ctrl-C,
    SIGTERM) sets ``stopping``, stops every registered sandbox now and starts no other call, then propagates."""
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        futures = {pool.submit(call): i for i, call in enumerate(calls)}
        for fut in as_completed(futures):
            on_result(futures[fut], fut.result())
    except BaseException:
        if stopping is not None:
            stopping.set()
        kill_active()
        pool.shutdown(wait=True, cancel_futures=True)
        CANCELLED.clear()
        raise
    pool.shutdown(wait=True)


# ---------------------------------------------------------------- sweeping dead owners

def remove_cgroup(cg: Path) -> bool:
    """Kill every process in the cgroup ``cg`` and remove it (tried for about a second); True when removed."""
    for _ in range(50):
        try:
            pids = [int(x) for x in (cg / "cgroup.procs").read_text().split()]
        except OSError:
            pids = []
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        try:
            cg.rmdir()
            return True
        except OSError:
            time.sleep(0.02)
    return False


def sweep_cgroups() -> list[str]:
    """Kill what is left in, and remove, the pids cgroups of dead owners."""
    removed = []
    for base in CGROUP_ROOTS:
        try:
            entries = [p for p in base.iterdir() if p.name.startswith(f"{PREFIX}-") and p.is_dir()]
        except OSError:
            continue
        removed += [str(cg) for cg in entries if owner_dead(cg.name) and remove_cgroup(cg)]
    return removed


def sweep_containers(client) -> list[str]:
    """Remove containers labelled with a dead owner (running ones are killed first)."""
    removed: list[str] = []
    try:   # other processes remove containers all the time: one gone between listing and inspecting is skipped
        found = client.containers.list(all=True, filters={"label": OWNER_LABEL}, ignore_removed=True)
    except Exception:  # noqa: BLE001 - no daemon: nothing to sweep there
        return removed
    for c in found:
        owner = (c.labels or {}).get(OWNER_LABEL, "")
        try:   # a label inherited from the image was not set by the container's creator: not ours to judge
            inherited = (c.image.labels or {}).get(OWNER_LABEL) == owner
        except Exception:  # noqa: BLE001 - the image is gone: the label was the container's own
            inherited = False
        if not inherited and owner_dead(owner):
            try:
                c.remove(force=True)
                removed.append(c.id[:12])
            except Exception:  # noqa: BLE001 - removed concurrently
                pass
    return removed


_SWEPT: set[str] = set()
_SWEEP_LOCK = threading.Lock()


def sweep_once(what: str, fn: Callable[[], list[str]]) -> list[str]:
    """Run one kind of sweep at most once per process (at the first sandbox or build it starts)."""
    with _SWEEP_LOCK:
        if what in _SWEPT:
            return []
        _SWEPT.add(what)
    return fn()


def sweep_host() -> list[str]:
    """Folders and cgroups of dead owners (the Docker sweep needs a client: see docker_runner)."""
    return sweep_once("folders", sweep_folders) + sweep_once("cgroups", sweep_cgroups)


__all__ = ["OWNER_LABEL", "IMAGE_LABEL", "owner_id", "labels", "owner_dead", "scratch_dir", "scratch_temp",
           "owned_temp_dir", "owned_temp", "PREFIX",
           "cgroup_name", "register", "unregister", "kill_once", "kill_active", "run_threads", "CANCELLED",
           "sweep_folders", "remove_cgroup", "sweep_cgroups", "sweep_containers", "sweep_once", "sweep_host"]
