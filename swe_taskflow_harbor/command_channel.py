"""The host side of the resident command helper (:mod:`swe_taskflow_harbor.container_helper`).

One ``docker exec -i`` per container, started as root when the environment starts, carries every later
command, upload and download as frames over its stdin and stdout: a pipe round trip and a fork in the
container instead of a runc exec (or an archive re-exec of dockerd) each. A reader thread splits the
helper's output into replies and hands them to the waiting coroutine's event loop.

Nothing here decides *what* runs: the environment builds each command exactly as its plain exec path
would (user, working folder, the environment Docker would give the process) and falls back to that
path when the helper answers ``F`` or cannot be started (no ``python3`` in the image, a handshake that
does not come). When the helper's stream ends while commands run, those commands fail with
:class:`ChannelClosed` and the environment uses plain execs from then on.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import marshal
import socket
import struct
import threading
from pathlib import Path
from typing import Any

HEADER = struct.Struct(">cIQ")   # kind, request id, payload length (as in container_helper.py)
MARSHAL_VERSION = 2              # plain dicts, lists, str, bytes, int: every Python 3 reads it
_DOCKER_FRAME = struct.Struct(">BxxxL")
_BOOT = ("#swe-taskflow command helper\nimport os,sys\nn=int(sys.argv[1]);b=b''\nwhile len(b)<n:\n"
         " c=os.read(0,n-len(b))\n if not c:raise SystemExit(3)\n b+=c\n"
         "exec(compile(b,'swe-taskflow-helper','exec'))")
HANDSHAKE_S = 30.0
#: The helper's source, sent on the exec's stdin (the image needs no copy of it).
_SOURCE = Path(__file__).with_name("container_helper.py").read_bytes()


class ChannelClosed(RuntimeError):
    """The helper's stream ended (the container was removed, or the helper was killed)."""


class Fallback(Exception):
    """The helper declined a request; the caller uses the Docker API for it."""


class CommandChannel:
    """A started helper in one container; thread-safe; requests may overlap."""

    def __init__(self, api: Any, container_id: str) -> None:
        self._ids = itertools.count(1)
        self._waiting: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Queue]] = {}
        self._lock = threading.Lock()        # _waiting and _closed
        self._send_lock = threading.Lock()   # whole frames on the socket
        self._closed = False
        self._stderr = bytearray()
        self._ready = threading.Event()
        self._hello: dict = {}
        exec_id = api.exec_create(container_id, ["python3", "-I", "-S", "-B", "-c", _BOOT, str(len(_SOURCE))],
                                  stdin=True, user="root", workdir="/")["Id"]
        self._sock_obj = sock = api.exec_start(exec_id, socket=True)
        self._sock: socket.socket = getattr(sock, "_sock", sock)
        threading.Thread(target=self._read_loop, name="swe-taskflow-helper-reader", daemon=True).start()
        self._sock.sendall(_SOURCE)
        if not self._ready.wait(HANDSHAKE_S) or self._closed:
            reason = bytes(self._stderr[-500:]).decode(errors="replace").strip() or "no handshake"
            self.close()
            raise ChannelClosed(f"the command helper did not start ({reason})")

    @property
    def alive(self) -> bool:
        return not self._closed

    # ------------------------------------------------------------------ host -> helper

    def _send(self, kind: bytes, rid: int, payload: bytes = b"") -> None:
        with self._send_lock:
            if self._closed:
                raise ChannelClosed("the command helper is gone")
            self._sock.sendall(HEADER.pack(kind, rid, len(payload)) + payload)

    def open(self) -> tuple[int, asyncio.Queue]:
        """Register a request: its replies go to a queue on the running loop; then :meth:`send` it."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()
        with self._lock:
            if self._closed:
                raise ChannelClosed("the command helper is gone")
            rid = next(self._ids)
            self._waiting[rid] = (loop, queue)
        return rid, queue

    def send(self, kind: bytes, rid: int, payload: bytes = b"") -> None:
        """Send a request (blocking: run it in a worker thread); ChannelClosed when the helper is gone."""
        try:
            self._send(kind, rid, payload)
        except OSError as exc:
            self.close()
            raise ChannelClosed(f"the command helper's stream broke: {exc}") from None

    def forget(self, rid: int) -> None:
        with self._lock:
            self._waiting.pop(rid, None)

    def kill(self, rid: int) -> None:
        """SIGKILL the process group of command ``rid`` (best effort: a gone helper has nothing to kill)."""
        self.forget(rid)
        with contextlib.suppress(OSError, ChannelClosed):
            self._send(b"T", rid)

    # ------------------------------------------------------------------ helper -> host

    def _read_loop(self) -> None:
        buf = bytearray()
        raw = bytearray()
        try:
            while True:
                chunk = self._sock.recv(1 << 20)
                if not chunk:
                    break
                raw += chunk
                while len(raw) >= _DOCKER_FRAME.size:   # Docker's stdout/stderr multiplexing
                    stream, size = _DOCKER_FRAME.unpack_from(raw)
                    if len(raw) < _DOCKER_FRAME.size + size:
                        break
                    data = bytes(raw[_DOCKER_FRAME.size:_DOCKER_FRAME.size + size])
                    del raw[:_DOCKER_FRAME.size + size]
                    if stream == 2:
                        self._stderr = (self._stderr + data)[-4000:]
                        continue
                    buf += data
                    while len(buf) >= HEADER.size:
                        kind, rid, n = HEADER.unpack_from(buf)
                        if len(buf) < HEADER.size + n:
                            break
                        payload = bytes(buf[HEADER.size:HEADER.size + n])
                        del buf[:HEADER.size + n]
                        self._dispatch(kind, rid, payload)
        except OSError:
            pass
        finally:
            self.close()

    def _dispatch(self, kind: bytes, rid: int, payload: bytes) -> None:
        if kind == b"R":
            self._hello = loads(payload)
            self._ready.set()
            return
        with self._lock:
            target = self._waiting.get(rid)
        if target is not None:
            loop, queue = target
            try:
                loop.call_soon_threadsafe(queue.put_nowait, (kind, payload))
            except RuntimeError:   # the loop is closed: nobody waits any more
                self.forget(rid)

    def close(self) -> None:
        """End the channel: the helper sees EOF and exits; every waiting request gets ChannelClosed."""
        with self._lock:
            if self._closed:
                waiting = {}
            else:
                self._closed = True
                waiting, self._waiting = self._waiting, {}
        self._ready.set()
        for loop, queue in waiting.values():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(queue.put_nowait, (b"", b""))
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self._sock_obj.close()

    def stderr_tail(self) -> str:
        return bytes(self._stderr).decode(errors="replace")


DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"   # dockerd's, for Linux


def exec_environment(hostname: str, container_env: list[str], exec_env: dict[str, str] | None) -> dict[str, str]:
    """The environment dockerd gives an exec'd process, in its order: PATH and HOSTNAME, then the
    container's ``Env`` (replacing in place or appended; a bare ``KEY`` unsets), then the exec's own.
    HOME is left to the helper (from passwd, as runc adds it when absent)."""
    env = {"PATH": DEFAULT_PATH, "HOSTNAME": hostname}
    exec_entries = [k if v is None else f"{k}={v}" for k, v in (exec_env or {}).items()]   # as docker-py sends them
    for entry in [*container_env, *exec_entries]:
        key, sep, value = entry.partition("=")
        if sep:
            env[key] = value
        else:
            env.pop(key, None)
    return env


def dumps(obj: Any) -> bytes:
    return marshal.dumps(obj, MARSHAL_VERSION)


def loads(payload: bytes) -> Any:
    """A reply's value: only plain data (a code object or anything else is refused, never run)."""
    value = marshal.loads(payload)
    if not isinstance(value, (dict, tuple, list)):
        raise ValueError(f"unexpected reply from the command helper: {type(value).__name__}")
    return value


__all__ = ["CommandChannel", "ChannelClosed", "Fallback", "HEADER", "dumps", "exec_environment", "loads"]
