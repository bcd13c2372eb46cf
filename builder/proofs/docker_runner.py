"""Run one untrusted proof script in a Docker container and record what it did (docs/proofs.md, "Docker").

No network (``network_mode="none"``; no network is ever created), read-only rootfs and repository, /tmp and
/dev/shm a tmpfs of ``tmpfs_mb`` each (Docker's own /dev/shm would be 64 MiB whatever the report said), and
output read through a bounded stream. Every container carries its owner's label (:mod:`swe_taskflow.hygiene`) and
is removed in ``finally``; containers left by a run killed with ``kill -9`` are swept by a later run.
"""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path
from typing import Any, Callable

from swe_taskflow.errors import SandboxError
from swe_taskflow.proofs import RunFacts

from swe_taskflow import hygiene
from .config import ProofConfig
from .script import PROOF_MOUNT, REPO_MOUNT, captures, run_facts, script_command, stage_script

_CLIENT_LOCK = threading.Lock()
_CLIENT: Any = None


def docker_client(timeout: int = 30):
    """A shared docker SDK client that answered a ping, or SandboxError."""
    global _CLIENT
    with _CLIENT_LOCK:
        if _CLIENT is not None:
            return _CLIENT
        try:
            import docker
        except ImportError as exc:
            raise SandboxError("the docker SDK is not installed (pip install 'swe-taskflow[build]')") from exc
        try:
            client = docker.from_env(timeout=timeout)
            client.ping()
        except Exception as exc:  # noqa: BLE001 - any failure means no usable daemon
            raise SandboxError(f"no Docker daemon answers: {exc}",
                               hint="start dockerd (see .ci/start-docker.sh) or use --sandbox bwrap") from exc
        _CLIENT = client
    hygiene.sweep_once("containers", lambda: hygiene.sweep_containers(client))
    return client


def docker_answers() -> bool:
    try:
        docker_client(timeout=10)
        return True
    except SandboxError:
        return False


def image_info(client, image: str) -> tuple[str, str]:
    """(local image id, registry digest or ""), or SandboxError saying how to get the image."""
    try:
        img = client.images.get(image)
        digests = img.attrs.get("RepoDigests") or []
        return img.id, (digests[0] if digests else "")
    except Exception as exc:  # noqa: BLE001 - ImageNotFound or daemon error
        raise SandboxError(f"image {image!r} is not available locally: {type(exc).__name__}",
                           hint="build the test image with `swe-taskflow proofs build-image`, or "
                                "`docker pull` / `docker load` the task image (see docs/proofs.md)") from exc


def run_in_docker(repo_dir: str | Path, script: str, *, image: str, config: ProofConfig) -> RunFacts:
    """Run ``script`` once against ``repo_dir`` (mounted read-only at /repo); tree hashes are left to the caller."""
    client = docker_client()
    repo = str(Path(repo_dir).resolve())
    command = script_command(script)
    staged = stage_script(script)
    container = None
    handle = None
    t0 = time.monotonic()
    try:
        container = _create_container(client, image, command, repo, staged.name, config)
        kill, _ = hygiene.kill_once(client.api.kill, container.id, ignore=(Exception,))   # it may have exited
        handle = hygiene.register(kill)
        out, err, stream, reader = _attach_bounded(client, container, config, kill)
        t0 = time.monotonic()
        container.start()
        timed_out = _wait_or_kill(container, config.timeout_s, t0, kill)
        duration = time.monotonic() - t0
        reader.join(timeout=5)
        with contextlib.suppress(Exception):
            stream.close()
        container.reload()
        state = container.attrs.get("State", {})
        return run_facts(out, err, exit_code=state.get("ExitCode"), timed_out=timed_out,
                         oom_killed=bool(state.get("OOMKilled")), duration_s=duration, command=command,
                         excerpt_chars=config.excerpt_chars)
    except SandboxError:
        raise
    except Exception as exc:  # noqa: BLE001 - a daemon/API failure is an infrastructure error, not a verdict
        return RunFacts(infra_error=f"docker: {type(exc).__name__}: {str(exc)[:300]}",
                        duration_s=round(time.monotonic() - t0, 3), command=tuple(command))
    finally:
        if handle is not None:
            hygiene.unregister(handle)
        if container is not None:
            with contextlib.suppress(Exception):
                container.remove(force=True)
        staged.cleanup()


def _create_container(client, image: str, command: list[str], repo: str, staged_dir: str, config: ProofConfig):
    """The locked-down container (see the module docstring), created but not started."""
    from docker.types import LogConfig

    mem = f"{int(config.mem_mb)}m"
    return client.containers.create(   # the entrypoint is set so an image's own never wraps the script
        image, command[1:], entrypoint=command[:1], working_dir=REPO_MOUNT,
        volumes={repo: {"bind": REPO_MOUNT, "mode": "ro"}, staged_dir: {"bind": PROOF_MOUNT, "mode": "ro"}},
        read_only=True, tmpfs={"/tmp": f"rw,nosuid,nodev,size={int(config.tmpfs_mb)}m,mode=1777"},
        shm_size=f"{int(config.tmpfs_mb)}m",
        network_mode="none", mem_limit=mem, memswap_limit=mem, pids_limit=int(config.pids),
        nano_cpus=int(config.cpus * 1e9), cap_drop=["ALL"], security_opt=["no-new-privileges"],
        user="65534:65534", environment={}, hostname="proof", stdin_open=False, tty=False,
        log_config=LogConfig(type="json-file", config={"max-size": "1m", "max-file": "1"}),
        labels=hygiene.labels(**{"swe-taskflow.proof": "1"}))


def _attach_bounded(client, container, config: ProofConfig, kill: Callable[[], None]):
    """Attach to ``container`` and pump its output into bounded captures: (out, err, stream, reader thread)."""
    def kill_async() -> None:
        # the daemon's kill waits for the container to stop, which needs its output drained: never
        # call it from the reader thread
        threading.Thread(target=kill, daemon=True).start()

    out, err = captures(config, on_limit=kill_async)
    # attach before start so that nothing printed early is lost; demux splits stdout from stderr
    stream = client.api.attach(container.id, stdout=True, stderr=True, stream=True, demux=True, logs=False)

    def pump() -> None:
        try:
            for o, e in stream:   # past the limit, keep draining (and dropping) until the kill lands
                if o:
                    out.feed(o)
                if e:
                    err.feed(e)
        except Exception:  # noqa: BLE001 - the stream ends when the container is killed
            pass

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    return out, err, stream, reader


def _wait_or_kill(container, timeout_s: float, t0: float, kill: Callable[[], None]) -> bool:
    """Wait for the container to exit; True when the wall clock ran out and it was killed."""
    try:
        container.wait(timeout=timeout_s)
    except Exception:  # noqa: BLE001 - requests' ReadTimeout / ConnectionError
        if time.monotonic() - t0 < timeout_s * 0.9:
            raise   # not the wall clock: the daemon failed (an infrastructure error)
        kill()
        container.wait(timeout=30)
        return True
    return False
