"""A Harbor environment on the local Docker daemon, through its API: one container per trial, never a network.

``harbor run -e swe_taskflow_harbor.environment:DockerEnvironment``. Harbor 0.25's stock ``-e docker``
cannot run offline (it needs the ``docker compose`` v2 plugin and first probes a registry image), and
driving Harbor's compose orchestration through Debian's docker-compose 1.29 made a trial cost three to six
times the commands it runs (benchmarks/harbor_bench.py): every command, upload and download was a
subprocess, start ran ``down`` + ``up`` + a readiness poll, and teardown waited out compose's 10 s stop
timeout on a ``sleep`` that ignores SIGTERM. Here every operation is one or two Docker API calls on a shared
client (the ``docker`` SDK, blocking calls in a thread pool), or a frame over the pipe of a resident command
helper in the container (:mod:`swe_taskflow_harbor.container_helper`, driven by
:mod:`swe_taskflow_harbor.command_channel`), which hands what it cannot do exactly as ``docker exec`` would
to the Docker API path. Every container runs on ``network_mode="none"`` with the project's owner label
(:mod:`swe_taskflow.hygiene`), so the sweep removes what a ``kill -9`` of ``harbor run`` left. docs/evaluate.md
("Harbor plugins") describes each operation: start, commands, files, stop.

Only ``network_mode = "no-network"`` tasks run here; any other policy is refused before anything starts.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import json
import os
import shutil
import stat as stat_mod
import socket
import tarfile
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath
from typing import Any, Callable

from harbor.environments.base import BaseEnvironment, ExecResult
from harbor.environments.capabilities import EnvironmentCapabilities, EnvironmentResourceCapabilities
from harbor.models.task.config import NetworkMode, NetworkPolicy
from harbor.models.trial.config import ResourceMode
from harbor.models.trial.paths import EnvironmentPaths

from swe_taskflow import hygiene
from swe_taskflow_harbor.bounded_output import OUTPUT_CAP_BYTES, HeadTail
from swe_taskflow_harbor.command_channel import ChannelClosed, CommandChannel, Fallback, dumps, exec_environment, loads

#: Label naming the Harbor session (trial) a container belongs to, for people reading ``docker ps``.
SESSION_LABEL = "swe-taskflow.harbor-session"
#: Blocking Docker calls run here; an agent's long command holds one thread, so ``-n`` trials need several.
_POOL = ThreadPoolExecutor(max_workers=64, thread_name_prefix="swe-taskflow-docker")
_CLIENT: Any = None
_CLIENT_LOCK = threading.Lock()
_SPOOL_BYTES = 16 * 2**20
_ACTIVE = [0]
_ACTIVE_LOCK = threading.Lock()
_GO_DIR_BIT = 1 << 31   # Go's os.ModeDir, as the archive stat header reports a folder
_GO_SYMLINK_BIT = 1 << 27
_GO_NOT_REGULAR = sum(1 << b for b in (27, 26, 25, 24, 21, 19))   # link, device, pipe, socket, char device, irregular
_HELPER_MAX_UPLOAD = 32 * 2**20   # larger archives go through put_archive (the helper holds one in memory)


def docker_client() -> Any:
    """The process's Docker client (no read timeout: an exec stream is silent while its command runs);
    its first use sweeps containers of dead owners, as every Docker client of the project does."""
    global _CLIENT
    with _CLIENT_LOCK:
        if _CLIENT is None:
            import docker

            client = docker.from_env(timeout=None, max_pool_size=64)
            client.ping()
            _CLIENT = client
    hygiene.sweep_once("containers", lambda: hygiene.sweep_containers(_CLIENT))
    return _CLIENT


@contextlib.contextmanager
def _counting():
    with _ACTIVE_LOCK:
        _ACTIVE[0] += 1
    try:
        yield
    finally:
        with _ACTIVE_LOCK:
            _ACTIVE[0] -= 1


def active_execs() -> int:
    """Commands whose worker thread is still attached (a timed-out command must not hold one)."""
    return _ACTIVE[0]


async def _blocking(fn: Callable, *args: Any, **kwargs: Any) -> Any:
    return await asyncio.get_running_loop().run_in_executor(_POOL, functools.partial(fn, *args, **kwargs))


def _root_owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def _tar(entries: list[tuple[Path, PurePosixPath]], folders: dict[PurePosixPath, int] | None = None):
    """A spooled tar of host paths at absolute container paths (names relative to ``/``), owner root."""
    buf = tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES)
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path, mode in (folders or {}).items():
            info = tarfile.TarInfo(str(path).lstrip("/"))
            info.type, info.mode = tarfile.DIRTYPE, mode
            tar.addfile(info)
        for source, dest in entries:
            tar.add(source, arcname=str(dest).lstrip("/"), recursive=False, filter=_root_owned)
    buf.seek(0)
    return buf


def _abs(path: str) -> PurePosixPath:
    p = PurePosixPath(path)
    return p if p.is_absolute() else PurePosixPath("/") / p


class DockerEnvironment(BaseEnvironment):
    """One network-less container of the task's local image per trial, driven through the Docker API."""

    def __init__(self, *args: Any, command_helper: bool = True, output_cap_bytes: int = OUTPUT_CAP_BYTES,
                 **kwargs: Any) -> None:
        self._container: Any = None
        self._created = False      # a container was created: only then can Harbor's logs be downloaded
        self._channel: CommandChannel | None = None
        if not isinstance(command_helper, bool):
            raise ValueError("command_helper must be true or false (--ek command_helper=false), "
                             f"not {command_helper!r}")
        self._use_helper = command_helper
        if isinstance(output_cap_bytes, bool) or not isinstance(output_cap_bytes, int) or output_cap_bytes < 1024:
            raise ValueError(f"output_cap_bytes must be an integer of at least 1024, not {output_cap_bytes!r}")
        #: bytes of one command's output kept on the host (its head and tail; the text says what was dropped)
        self.output_cap_bytes = output_cap_bytes
        #: operations served by the helper and by the Docker API (plain exec, put_archive, get_archive)
        self.served = {"helper": 0, "docker": 0}
        super().__init__(*args, **kwargs)
        if self._host_mounts:   # never dropped silently: the container sees no host folder
            raise ValueError(f"{type(self).__name__} binds no host folder into a container; drop the mounts "
                             f"({', '.join(str(m.get('target')) for m in self._host_mounts)})")

    @staticmethod
    def type() -> str:
        return "swe-taskflow-docker"

    @classmethod
    def preflight(cls) -> None:
        import importlib.util

        if importlib.util.find_spec("docker") is None:
            raise SystemExit("the docker SDK is not installed in Harbor's venv: run `make harbor-venv`")
        try:
            docker_client()
        except Exception as exc:  # noqa: BLE001 - any failure means no usable daemon
            raise SystemExit(f"no Docker daemon answers ({type(exc).__name__}: {exc}); "
                             "start one (.ci/start-docker.sh)") from None

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        return EnvironmentCapabilities(disable_internet=True)

    @classmethod
    def resource_capabilities(cls) -> EnvironmentResourceCapabilities:
        return EnvironmentResourceCapabilities(cpu_limit=True, memory_limit=True, fractional_cpus=True)

    def _validate_definition(self) -> None:
        where = self.environment_dir.parent / "task.toml"
        if not self.task_env_config.docker_image:
            raise FileNotFoundError(f"{where}: [environment] docker_image is required by {type(self).__name__} "
                                    "(it runs a local image and builds none; `swe-taskflow export harbor` sets it)")
        if (self.environment_dir / "docker-compose.yaml").exists():
            raise ValueError(f"{self.environment_dir / 'docker-compose.yaml'}: compose services are not supported by "
                             f"{type(self).__name__} (one container, no network)")

    def validate_network_policy_support(self, network_policy: NetworkPolicy | None = None) -> None:
        policy = network_policy or self.network_policy
        if policy.network_mode != NetworkMode.NO_NETWORK:
            raise ValueError(f"network_mode={policy.network_mode.value!r} is not supported by {type(self).__name__}: "
                             "every container runs with no network (export tasks with network_mode = 'no-network')")

    # ------------------------------------------------------------------ lifecycle

    def _create_kwargs(self) -> dict[str, Any]:
        cpus = self._resource_limit_value("cpu", auto_mode=ResourceMode.LIMIT)
        memory_mb = self._resource_limit_value("memory", auto_mode=ResourceMode.LIMIT)
        kwargs: dict[str, Any] = {
            "image": self.task_env_config.docker_image, "command": ["sh", "-c", "sleep infinity"],
            "network_mode": "none", "security_opt": ["no-new-privileges"],
            "labels": hygiene.labels(**{SESSION_LABEL: self.session_id}),
            "environment": self._startup_env() or None, "working_dir": self.task_env_config.workdir or None,
        }
        if cpus:
            kwargs["nano_cpus"] = int(float(cpus) * 1e9)
        if memory_mb:
            kwargs["mem_limit"] = kwargs["memswap_limit"] = f"{int(memory_mb)}m"
        return kwargs

    async def start(self, force_build: bool) -> None:
        if force_build:
            raise RuntimeError(f"{type(self).__name__} builds no image: build {self.task_env_config.docker_image!r} "
                               "locally and run without --force-build")
        import docker

        client = await _blocking(docker_client)
        image = self.task_env_config.docker_image
        try:
            await _blocking(client.images.get, image)
        except docker.errors.ImageNotFound:
            raise RuntimeError(f"image {image!r} is not available locally and is never pulled: build it first "
                               "(the example's: `swe-taskflow example build-image`)") from None
        self._container = await _blocking(client.containers.create, **self._create_kwargs())
        self._created = True
        paths = EnvironmentPaths.for_os(self.os)
        logs = {_abs(str(d)): 0o777 for d in (paths.agent_dir, paths.verifier_dir, paths.artifacts_dir)}
        await self._put(_tar([], logs))        # Harbor's log folders, writable by the agent user
        await _blocking(self._container.start)
        if self._use_helper:
            await self._start_helper()
        await self._upload_environment_dir_after_start()

    async def _start_helper(self) -> None:
        """The resident command helper; without one (no python3 in the image) every call is a plain exec."""
        container = self._container
        config = container.attrs.get("Config") or {}
        self._config_env = (config.get("Hostname") or "", config.get("Env") or [])
        self._default_user = config.get("User") or ""
        self._default_cwd = config.get("WorkingDir") or "/"
        try:
            self._channel = await _blocking(CommandChannel, container.client.api, container.id)
        except Exception as exc:  # noqa: BLE001 - any failure leaves the plain Docker API path, which always works
            self.logger.info(f"no command helper in {self.task_env_config.docker_image} ({exc}); "
                             "every command is a docker exec")

    async def stop(self, delete: bool) -> None:
        container, self._container = self._container, None
        channel, self._channel = self._channel, None
        if channel is not None:
            channel.close()
        if container is None:
            return
        try:
            await _blocking(container.remove, force=True)   # SIGKILL + remove: no stop timeout to wait out
        except Exception as exc:  # noqa: BLE001 - gone already; a leftover is swept by its owner label
            if getattr(getattr(exc, "response", None), "status_code", None) != 404:
                self.logger.warning(f"removing container {container.short_id} failed: {exc}")

    def _running(self) -> Any:
        if self._container is None:
            raise RuntimeError(f"{type(self).__name__}: the environment is not started")
        return self._container

    # ------------------------------------------------------------------ commands

    def _live_channel(self) -> CommandChannel | None:
        channel = self._channel
        return channel if channel is not None and channel.alive else None

    async def exec(self, command: str, cwd: str | None = None, env: dict[str, str] | None = None,
                   timeout_sec: int | None = None, user: str | int | None = None) -> ExecResult:
        self._running()
        user = self._resolve_user(user)
        options = {"user": "" if user is None else str(user), "environment": self._merge_env(env),
                   "workdir": cwd or self.task_env_config.workdir or None}
        channel = self._live_channel()
        if channel is not None:
            try:
                return await self._exec_by_helper(channel, command, options, timeout_sec)
            except Fallback as exc:
                self.logger.debug(f"command helper: {exc}; this command is a docker exec")
        return await self._exec_by_api(command, options, timeout_sec)

    async def _exec_by_helper(self, channel: CommandChannel, command: str, options: dict[str, Any],
                              timeout_sec: int | None) -> ExecResult:
        """One command through the resident helper, run as ``docker exec`` would run it (user, folder,
        environment); a timeout or cancellation SIGKILLs the command's process group."""
        env = exec_environment(*self._config_env, options["environment"])
        request = {"argv": ["bash", "-c", command], "user": options["user"] or self._default_user,
                   "cwd": options["workdir"] or self._default_cwd, "env": list(env.items())}
        callback = self._output_callback()
        rid, queue = channel.open()
        kept = HeadTail(self.output_cap_bytes)   # streamed: the host never holds more than the cap

        async def collect() -> int:
            while True:
                kind, payload = await queue.get()
                if kind in (b"O", b"E"):   # stdout and stderr in arrival order, all in stdout
                    kept.feed(payload)
                    if callback is not None:
                        await callback(payload.decode(errors="replace"), "stdout")
                elif kind == b"X":
                    return int(loads(payload)["code"])
                elif kind == b"F":
                    raise Fallback(loads(payload)["error"])
                else:
                    raise RuntimeError("the command helper ended while the command ran "
                                       f"({channel.stderr_tail()[-300:].strip() or 'no message'})")

        try:
            await _blocking(channel.send, b"C", rid, dumps(request))
        except ChannelClosed as exc:
            channel.forget(rid)
            raise Fallback(str(exc)) from None
        try:
            code = await (asyncio.wait_for(collect(), timeout_sec) if timeout_sec else collect())
        except Fallback:
            channel.forget(rid)
            raise
        except BaseException as exc:
            _POOL.submit(channel.kill, rid)   # never blocks the loop, even while an upload holds the pipe
            if isinstance(exc, asyncio.TimeoutError):
                raise RuntimeError(f"Command timed out after {timeout_sec} seconds") from None
            raise
        channel.forget(rid)
        self.served["helper"] += 1
        return ExecResult(stdout=kept.text() or None, stderr=None, return_code=code)

    async def _exec_by_api(self, command: str, options: dict[str, Any], timeout_sec: int | None) -> ExecResult:
        container = self._running()
        self.served["docker"] += 1
        callback = self._output_callback()
        loop = asyncio.get_running_loop()
        attached: list = []

        def run() -> tuple[HeadTail, int | None]:
            from docker.utils.socket import frames_iter

            with _counting():
                api = container.client.api
                exec_id = api.exec_create(container.id, ["bash", "-c", command], **options)["Id"]
                sock = api.exec_start(exec_id, socket=True)
                attached.append(getattr(sock, "_sock", sock))
                kept = HeadTail(self.output_cap_bytes)   # streamed: the host never holds more than the cap
                try:
                    for _stream, data in frames_iter(sock, tty=False):   # stdout and stderr in arrival order
                        kept.feed(data)
                        if callback is not None:
                            text = data.decode(errors="replace")
                            asyncio.run_coroutine_threadsafe(callback(text, "stdout"), loop).result()
                finally:
                    sock.close()
                return kept, api.exec_inspect(exec_id)["ExitCode"]

        future = loop.run_in_executor(_POOL, run)
        try:
            out, code = await (asyncio.wait_for(future, timeout_sec) if timeout_sec else future)
        except BaseException as exc:
            # timed out or cancelled: detach so the worker thread ends now; as with Harbor's compose exec,
            # the command itself runs on until the container is removed
            for raw in attached:
                with contextlib.suppress(OSError):
                    raw.shutdown(socket.SHUT_RDWR)
            if isinstance(exc, asyncio.TimeoutError):
                raise RuntimeError(f"Command timed out after {timeout_sec} seconds") from None
            raise
        return ExecResult(stdout=out.text() or None, stderr=None, return_code=code or 0)

    # ------------------------------------------------------------------ files

    async def _put(self, archive) -> None:
        container = self._running()
        self.served["docker"] += 1
        try:
            await _blocking(container.put_archive, "/", archive)
        finally:
            archive.close()

    async def _upload(self, entries: list[tuple[Path, PurePosixPath]]) -> None:
        """Host paths to container paths, owner root: through the helper, or one ``put_archive`` tar."""
        channel = self._live_channel()
        if channel is not None:
            try:
                payload = await _blocking(_helper_entries, entries)
                await self._request(channel, b"P", payload)
                return
            except Fallback as exc:
                self.logger.debug(f"command helper: {exc}; this upload is a put_archive")
        await self._put(await _blocking(_tar, entries))

    async def _request(self, channel: CommandChannel, kind: bytes, payload: bytes,
                       sink: Callable[[bytes, bytes], None] | None = None) -> dict:
        """A file request through the helper: its data frames go to ``sink(kind, payload)``; the final reply."""
        rid, queue = channel.open()
        try:
            try:
                await _blocking(channel.send, kind, rid, payload)
            except ChannelClosed as exc:
                raise Fallback(str(exc)) from None
            while True:
                reply, data = await queue.get()
                if reply in (b"D", b"B") and sink is not None:
                    sink(reply, data)
                elif reply == b"K":
                    self.served["helper"] += 1
                    return loads(data)
                elif reply == b"N":
                    raise FileNotFoundError(loads(data)["error"])
                elif reply == b"F":
                    raise Fallback(loads(data)["error"])
                else:   # the helper is gone; the Docker API path still works
                    raise Fallback("the command helper ended")
        finally:
            channel.forget(rid)

    def _stat(self, path: PurePosixPath) -> dict | None:
        api = self._running().client.api
        res = api.head(api._url("/containers/{0}/archive", self._container.id), params={"path": str(path)})
        if res.status_code == 404:
            return None
        api._raise_for_status(res)
        return json.loads(base64.b64decode(res.headers["X-Docker-Container-Path-Stat"]))

    async def _kind(self, path: str, user: str | int | None, require_dir: bool) -> bool:
        ask = BaseEnvironment.is_dir if require_dir else BaseEnvironment.is_file   # `test -d/-f` in the container
        if self._resolve_user(user) not in (None, "root", 0, "0"):   # another user's view may differ: ask it
            return await ask(self, path, user=user)
        stat = await _blocking(self._stat, _abs(path))   # root's view: the archive stat, no process started
        if stat is None:
            return False
        if stat["mode"] & _GO_SYMLINK_BIT:   # the stat does not follow a final link; `test` does
            return await ask(self, path, user=user)
        is_dir = bool(stat["mode"] & _GO_DIR_BIT)
        return is_dir if require_dir else not is_dir and not stat["mode"] & _GO_NOT_REGULAR

    async def is_dir(self, path: str, user: str | int | None = None) -> bool:
        return await self._kind(path, user, True)

    async def is_file(self, path: str, user: str | int | None = None) -> bool:
        return await self._kind(path, user, False)

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        source, target = Path(source_path), _abs(target_path)
        into_folder = target_path.endswith("/") or await self.is_dir(str(target), user="root")
        await self._upload([(source, target / source.name if into_folder else target)])

    async def upload_dir(self, source_dir: Path | str, target_dir: str) -> None:
        source, target = Path(source_dir), _abs(target_dir)
        entries = [(p, target / p.relative_to(source).as_posix()) for p in sorted(source.rglob("*"))]
        await self._upload(entries)

    async def _fetch(self, source: str):
        """(the archive's root name, a spooled tar) of a container path; RuntimeError when it is absent."""
        channel = self._live_channel()
        if channel is not None:
            received = _Received()
            try:
                done = await self._request(channel, b"G", dumps({"path": str(_abs(source))}), received.add)
                return done["name"], await _blocking(received.tar)
            except FileNotFoundError:
                raise RuntimeError(f"{source!r} does not exist in the container") from None
            except Fallback as exc:
                self.logger.debug(f"command helper: {exc}; this download is a get_archive")
            finally:
                received.close()
        return await _blocking(self._fetch_by_api, source)

    def _fetch_by_api(self, source: str):
        import docker

        self.served["docker"] += 1
        try:
            stream, stat = self._running().get_archive(str(_abs(source)))
        except docker.errors.NotFound:
            raise RuntimeError(f"{source!r} does not exist in the container") from None
        buf = tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES)
        for chunk in stream:
            buf.write(chunk)
        buf.seek(0)
        return stat["name"], buf

    @staticmethod
    def _download_file(source: str, buf, target: Path) -> None:
        with buf, tarfile.open(fileobj=buf, mode="r:") as tar:
            member = next((m for m in tar if m.isfile()), None)
            if member is None:
                raise RuntimeError(f"{source!r} in the container is not a regular file")
            _write(tar, member, target)

    @staticmethod
    def _download_dir(root: str, buf, target: Path) -> None:
        target.mkdir(parents=True, exist_ok=True)
        with buf, tarfile.open(fileobj=buf, mode="r:") as tar:
            for member in tar:
                parts = PurePosixPath(member.name).parts
                rel = parts[1:] if parts and parts[0] == root else ()
                if not rel or any(p in ("", ".", "..") for p in rel):
                    continue
                dest = target.joinpath(*rel)
                if member.isdir():
                    dest.mkdir(parents=True, exist_ok=True)
                elif member.isfile():
                    _write(tar, member, dest)
                # links, devices and fifos written in the container are never recreated on the host

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        _, buf = await self._fetch(source_path)
        await _blocking(self._download_file, source_path, buf, Path(target_path))

    async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
        if not self._created:
            # start failed before any container existed (the trial records why): no logs to fetch, and a
            # second error with a traceback here would only hide the first one on the console
            return
        root, buf = await self._fetch(source_dir)
        await _blocking(self._download_dir, root, buf, Path(target_dir))


def _helper_entries(entries: list[tuple[Path, PurePosixPath]]) -> bytes:
    """The helper's upload request: what ``_tar`` would archive (mode, mtime, owner root), as plain data."""
    out, total = [], 0
    for source, dest in entries:
        st = source.lstat()
        mode = stat_mod.S_IMODE(st.st_mode)
        if stat_mod.S_ISDIR(st.st_mode):
            kind, data = "d", b""
        elif stat_mod.S_ISREG(st.st_mode):
            kind, data = "f", source.read_bytes()
        elif stat_mod.S_ISLNK(st.st_mode):
            kind, data = "l", os.readlink(source)
        else:
            raise Fallback(f"{source} is neither a file, a folder nor a link")
        total += len(data)
        if total > _HELPER_MAX_UPLOAD:
            raise Fallback(f"more than {_HELPER_MAX_UPLOAD} bytes")
        out.append((str(dest), kind, mode, 0, 0, st.st_mtime, data))
    return dumps(out)


class _Received:
    """A download's entries from the helper, turned into the same tar ``get_archive`` would stream."""

    def __init__(self) -> None:
        self.entries: list[tuple[tarfile.TarInfo, Any]] = []
        self.left = 0

    def add(self, kind: bytes, data: bytes) -> None:
        try:
            self._add(kind, data)
        except (ValueError, TypeError, IndexError, KeyError) as exc:   # malformed: get_archive instead
            raise Fallback(f"the command helper sent a malformed entry ({exc})") from None

    def _add(self, kind: bytes, data: bytes) -> None:
        if kind == b"D":
            name, what, mode, size = loads(data)
            info = tarfile.TarInfo(str(name))
            info.type = tarfile.DIRTYPE if what == "d" else tarfile.REGTYPE
            info.mode, info.size = int(mode), int(size) if what == "f" else 0
            body = tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES) if what == "f" else None
            self.entries.append((info, body))
            self.left = info.size
        else:
            info, body = self.entries[-1]
            if body is None or len(data) > self.left:
                raise Fallback("the command helper sent more bytes than the file has")
            body.write(data)
            self.left -= len(data)

    def tar(self):
        if self.left:
            raise Fallback("the command helper sent a file short")
        buf = tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES)
        with tarfile.open(fileobj=buf, mode="w") as tar:
            for info, body in self.entries:
                if body is not None:
                    body.seek(0)
                tar.addfile(info, body)
        buf.seek(0)
        return buf

    def close(self) -> None:
        for _, body in self.entries:
            if body is not None:
                body.close()


def _write(tar: tarfile.TarFile, member: tarfile.TarInfo, dest: Path) -> None:
    """Write one regular file of an archive to ``dest`` (never through a link there)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.is_symlink() or dest.is_dir():
        raise RuntimeError(f"{dest}: refusing to overwrite a link or folder with {member.name!r}")
    src = tar.extractfile(member)
    with src, open(dest, "wb") as out:
        shutil.copyfileobj(src, out)
    dest.chmod(0o644 | (member.mode & 0o111))


__all__ = ["DockerEnvironment", "SESSION_LABEL", "docker_client", "active_execs"]
