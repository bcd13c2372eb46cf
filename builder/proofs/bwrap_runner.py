"""Run one untrusted proof script under bubblewrap, for machines without Docker (docs/proofs.md, "bubblewrap").

All namespaces unshared, the host's /usr, the repository and the script read-only, a read-only root and
/dev, /tmp and /dev/shm a tmpfs of ``tmpfs_mb`` each, uid 65534, no capabilities, ``prlimit`` and
``timeout -s KILL``. Run as root, bwrap itself is started as the host's uid 65534 (``setpriv``): bwrap maps
the sandbox user onto the identity that starts it, so started as root the sandbox's uid 65534 would be host
root. ``timeout`` dies with this process (``setpriv --pdeathsig``) and bwrap with ``timeout``, so a killed
run leaves no sandbox behind.

Weaker than Docker, and the report says so: memory is an address-space limit (a MemoryError, seen
on stderr, stands for an OOM kill), CPU is not limited, and the process limit is shared by every
process of uid 65534 on the host (as root a pids cgroup caps them instead).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

from swe_taskflow.errors import SandboxError
from swe_taskflow.proofs import RunFacts

from swe_taskflow import hygiene
from .config import ProofConfig
from .script import PROOF_MOUNT, REPO_MOUNT, BoundedCapture, captures, run_facts, script_command, stage_script

NOBODY = 65534
#: A run whose stderr starts with one of these never reached the script: an infrastructure error.
_SETUP_TOOLS = ("bwrap:", "unshare:", "mount:", "setpriv:", "prlimit:", "timeout:")
_OOM_MARKERS = ("MemoryError", "Cannot allocate memory", "out of memory", "std::bad_alloc")


def bwrap_available() -> bool:
    tools = ("bwrap", "prlimit", "timeout", "setpriv") + (("unshare", "mount") if os.geteuid() == 0 else ())
    return all(shutil.which(t) for t in tools)


@functools.lru_cache(maxsize=1)
def bwrap_bounds_tmpfs() -> bool:
    """Whether this bwrap has ``--size`` (0.5 and later): without it a tmpfs is as big as half the host's memory."""
    try:
        proc = subprocess.run(["bwrap", "--help"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return "--size" in proc.stdout + proc.stderr


@functools.lru_cache(maxsize=1)
def host_toolchain_id() -> str:
    """What a bubblewrap proof ran with: the host's python3 (hash of the binary)."""
    py = shutil.which("python3", path="/usr/bin:/bin") or shutil.which("python3") or ""
    if not py:
        return "host:no-python3"
    real = os.path.realpath(py)
    digest = hashlib.sha256(Path(real).read_bytes()).hexdigest()
    return f"host:{real}@sha256:{digest[:16]}"


def _process_count(uid: int) -> int:
    """Processes ``uid`` runs now: ``prlimit --nproc`` counts them against the sandbox's cap."""
    n = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    n += 1
            except OSError:
                pass   # the process ended while we looked
    return n


class PidsCgroup:
    """A throw-away pids cgroup (v1 ``pids`` controller or v2) capping the sandbox's processes, for root.

    RLIMIT_NPROC counts every process of uid 65534 on the host; a cgroup counts only this sandbox's.
    Its name carries the owner (:mod:`swe_taskflow.hygiene`), so one left by a killed run is swept.
    """

    def __init__(self, limit: int) -> None:
        self.path: Path | None = None
        for base in (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup")):
            if (base / "cgroup.procs").exists() and os.access(base, os.W_OK) and (
                    base.name == "pids" or "pids" in _read(base / "cgroup.subtree_control")):
                cand = base / hygiene.cgroup_name("proof")
                try:
                    cand.mkdir()
                    (cand / "pids.max").write_text(str(limit))
                except OSError:
                    continue
                self.path = cand
                break

    @property
    def procs(self) -> str:
        return str(self.path / "cgroup.procs") if self.path else ""

    def close(self) -> None:
        if self.path is not None:
            hygiene.remove_cgroup(self.path)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def bwrap_command(repo: str, staged: str, command: list[str], config: ProofConfig, cgroup_procs: str = "",
                  mounts: str = "") -> list[str]:
    """The full host command line (timeout, setpriv, prlimit, bwrap) for one run.

    As root, bwrap is started as uid 65534, which may not traverse the folders above the repository
    (e.g. a 0700 temp folder): so first, in a private mount namespace of its own (``unshare``), the
    repository and the script folder are bound onto two empty folders under ``mounts`` (a 0755
    scratch folder), and bwrap binds those. Nothing is mounted on the host; the namespace ends with
    the run.
    """
    if not bwrap_available():
        raise SandboxError("bubblewrap is not available (needs bwrap, prlimit and timeout)",
                           hint="apt-get install bubblewrap, or use --sandbox docker")
    root = os.geteuid() == 0
    outer = []
    if cgroup_procs:   # join the pids cgroup (as root), then run the rest
        outer += ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', cgroup_procs]
        nproc = int(config.pids) + _process_count(NOBODY)   # the cgroup is the real cap
    else:
        nproc = int(config.pids) + _process_count(NOBODY if root else os.getuid())
    # timeout dies with this process; bwrap (--die-with-parent) and the sandbox die with timeout
    outer += ["setpriv", "--pdeathsig", "KILL", "--", "timeout", "-s", "KILL", f"{config.timeout_s:g}"]
    src_repo, src_proof = repo, staged
    if root:   # never start bwrap as root: its sandbox user would be host root
        if not mounts:
            raise SandboxError("bwrap as root needs a scratch folder for its mounts")
        src_repo, src_proof = f"{mounts}/repo", f"{mounts}/proof"
        outer += ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c",
                  'mount --bind "$1" "$3" && mount --bind "$2" "$4" && shift 4 && exec "$@"', "bind",
                  repo, staged, src_repo, src_proof,
                  "setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]
    outer += ["prlimit", f"--as={int(config.mem_mb) << 20}", f"--nproc={nproc}",
              f"--fsize={int(config.fsize_mb) << 20}", "--core=0", "--"]
    box = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session",
           "--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/lib", "/lib64", "/sbin"):
        p = Path(top)
        if p.is_symlink():
            box += ["--symlink", os.readlink(p), top]
        elif p.is_dir():
            box += ["--ro-bind", top, top]
    if Path("/etc/ld.so.cache").exists():
        box += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    size = str(int(config.tmpfs_mb) << 20)   # the report's tmpfs_mb: each writable folder, nothing else writable
    box += ["--proc", "/proc", "--dev", "/dev",
            "--size", size, "--tmpfs", "/dev/shm", "--size", size, "--tmpfs", "/tmp",
            "--ro-bind", src_repo, REPO_MOUNT, "--ro-bind", src_proof, PROOF_MOUNT,
            "--remount-ro", "/dev", "--remount-ro", "/",
            "--chdir", REPO_MOUNT,
            "--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/tmp",
            "--setenv", "LANG", "C.UTF-8",
            "--uid", str(NOBODY), "--gid", str(NOBODY), "--cap-drop", "ALL", "--"]
    return outer + box + command


def run_in_bwrap(repo_dir: str | Path, script: str, *, config: ProofConfig) -> RunFacts:
    """Run ``script`` once against ``repo_dir`` (read-only at /repo); tree hashes are left to the caller."""
    if not bwrap_bounds_tmpfs():
        raise SandboxError("this bubblewrap cannot bound a tmpfs (no --size; needs bubblewrap >= 0.5): the "
                           "sandbox's writable folders would not hold the report's tmpfs_mb",
                           hint="upgrade bubblewrap, or use --sandbox docker")
    repo = str(Path(repo_dir).resolve())
    command = script_command(script)
    staged = stage_script(script)
    t0 = time.monotonic()
    mounts = None
    hygiene.sweep_host()
    cgroup = PidsCgroup(int(config.pids)) if os.geteuid() == 0 else None
    proc = None
    handle = None
    try:
        if os.geteuid() == 0:   # the empty folders the root-only bind mounts land on
            mounts = hygiene.scratch_temp("mnt-")
            for name in ("repo", "proof"):
                os.mkdir(Path(mounts.name, name), 0o755)
            os.chmod(mounts.name, 0o755)
        argv = bwrap_command(repo, staged.name, command, config, cgroup.procs if cgroup else "",
                             mounts.name if mounts else "")
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env={"PATH": "/usr/bin:/bin:/usr/sbin:/sbin"},
                                start_new_session=True)
        kill, killed = hygiene.kill_once(os.killpg, proc.pid, signal.SIGKILL, ignore=(ProcessLookupError,))
        handle = hygiene.register(kill)
        out, err = captures(config, on_limit=kill)
        readers = _pump_output(proc, out, err)
        try:
            rc = proc.wait(timeout=config.timeout_s + 10)   # `timeout -s KILL` fires first; this is a backstop
        except subprocess.TimeoutExpired:
            kill()
            rc = proc.wait()
        duration = time.monotonic() - t0
        for r in readers:
            r.join(timeout=5)
        proc.stdout.close()
        proc.stderr.close()
        return _exit_facts(out, err, rc, killed=killed.is_set(), duration=duration, command=command, config=config)
    except SandboxError:
        raise
    except OSError as exc:
        return RunFacts(infra_error=f"bwrap: {exc}", duration_s=round(time.monotonic() - t0, 3),
                        command=tuple(command))
    finally:
        if handle is not None:
            hygiene.unregister(handle)
        if proc is not None and proc.poll() is None:   # interrupted: the sandbox must not run on
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if cgroup is not None:
            cgroup.close()
        if mounts is not None:
            mounts.cleanup()
        staged.cleanup()


#: bwrap's own line when it cannot execute the staged script (a shebang naming no interpreter, a binary for
#: another machine, ...): the script's error, as Docker reports the same script, not the sandbox's.
_EXEC_FAILED = re.compile(rf"^bwrap: execvp {re.escape(PROOF_MOUNT)}/script: (.*)$", re.MULTILINE)


def _script_not_executable(stderr_text: str) -> int | None:
    """The exit status a shell gives for a script that cannot be executed (127 not found, 126 otherwise), or
    None when bwrap did not fail to execute the script."""
    m = _EXEC_FAILED.search(stderr_text)
    if m is None:
        return None
    return 127 if "No such file or directory" in m.group(1) else 126


def _pump_output(proc: subprocess.Popen, out: BoundedCapture, err: BoundedCapture) -> list[threading.Thread]:
    """Started reader threads feeding stdout and stderr into their bounded captures."""
    def pump(fh, cap: BoundedCapture) -> None:
        while True:
            chunk = fh.read1(65536)
            if not chunk or not cap.feed(chunk):
                break

    readers = [threading.Thread(target=pump, args=(proc.stdout, out), daemon=True),
               threading.Thread(target=pump, args=(proc.stderr, err), daemon=True)]
    for r in readers:
        r.start()
    return readers


def _exit_facts(out: BoundedCapture, err: BoundedCapture, rc: int, *, killed: bool, duration: float,
                command: list[str], config: ProofConfig) -> RunFacts:
    """What the exit status and output say: a setup failure (infra error), a timeout, an OOM, or the script's run."""
    exit_code = 128 - rc if rc < 0 else rc
    timed_out = (exit_code == 137 and not killed and duration >= config.timeout_s * 0.98)
    stderr_text = err.tail_text()
    unrunnable = _script_not_executable(stderr_text) if exit_code != 0 and out.nbytes == 0 else None
    if unrunnable is not None:   # the sandbox started and the script's own first line failed: the script's fault
        return run_facts(out, err, exit_code=unrunnable, timed_out=False, oom_killed=False, duration_s=duration,
                         command=command, excerpt_chars=config.excerpt_chars)
    if exit_code != 0 and out.nbytes == 0 and stderr_text.lstrip().startswith(_SETUP_TOOLS):  # setup failed
        return RunFacts(infra_error=f"bwrap: {stderr_text.strip()[-300:]}", duration_s=round(duration, 3),
                        command=tuple(command))
    oom = exit_code not in (0, None) and any(m in stderr_text for m in _OOM_MARKERS)
    return run_facts(out, err, exit_code=exit_code, timed_out=timed_out, oom_killed=oom, duration_s=duration,
                     command=command, excerpt_chars=config.excerpt_chars)
