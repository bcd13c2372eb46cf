"""The resident command helper: runs INSIDE a task container, one per Harbor environment.

Why: a Harbor trial makes about 11 container commands and 7 file transfers per step, most of them
Harbor's own bookkeeping (``pwd``, ``chmod +x``, emptying log folders). Through the Docker API each is a
runc exec or an archive re-exec of dockerd, 50-100 ms on a loaded 2-core machine; through this helper
each is a fork in the container and a round trip over one long-lived ``docker exec -i`` pipe.

:class:`swe_taskflow_harbor.command_channel.CommandChannel` starts it as root with ``python3 -I -S -B``
(no site packages, no module from the working folder or the environment, no bytecode written into the
image) and sends this file's source on stdin; the host imports it only in tests. It imports only
modules built into the interpreter or frozen in it (no ``subprocess``, ``json``, ``tarfile``: the
task images ship no bytecode, and compiling those took 0.4 s per start). Requests and replies are
frames: a 13-byte header (kind, request id, payload length) and a ``marshal`` payload.

Each command runs as ``docker exec`` runs it (user and groups from the container's passwd and group
files, a new session, stdin ``/dev/null``, output relayed for up to ``GRACE_S`` after it exits; docs/evaluate.md
lists every property). Anything the helper would do differently (a user it cannot resolve, a user spec
with a group, a working folder that is not a folder, a failed exec) is answered ``F`` (fall back) before
the command starts, and the host runs that command with a plain exec. Uploads are written as
``put_archive`` writes them; downloads list folders and regular files without following links.
"""

import _signal
import errno
import marshal
import os
import select
import stat
import sys
import time

GRACE_S = 2.0
CHUNK = 65536
HEADER = 13
PASSWD, GROUP = "/etc/passwd", "/etc/group"
_RESET = ("SIGPIPE", "SIGXFSZ", "SIGTERM", "SIGINT", "SIGHUP", "SIGCHLD", "SIGQUIT")


def send(kind, rid, data=b""):
    buf = memoryview(kind + rid.to_bytes(4, "big") + len(data).to_bytes(8, "big") + data)
    while buf:
        buf = buf[os.write(1, buf):]


def reply(kind, rid, obj):
    send(kind, rid, marshal.dumps(obj, 2))


def _entries(path):
    try:
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8", "surrogateescape")
    except OSError:
        return []
    return [line.split(":") for line in text.splitlines() if line.strip() and not line.startswith("#")]


def resolve_user(spec):
    """(uid, gid, groups, home) as libcontainer resolves ``spec``; None where the helper should not guess.

    An empty spec (no user asked, none in the image) is uid 0 with only its primary group, as Docker
    gives it; a named or numeric user also gets every group of /etc/group that lists it."""
    default = spec in (None, "")
    spec = "0" if default else str(spec)
    if ":" in spec:
        return None
    for row in _entries(PASSWD):
        if len(row) >= 7 and (row[0] == spec or (spec.isdigit() and row[2] == spec)):
            if not (row[2].isdigit() and row[3].isdigit()):
                return None
            name, uid, gid, home = row[0], int(row[2]), int(row[3]), row[5]
            groups = {gid}
            for g in _entries(GROUP) if not default else ():
                if len(g) >= 4 and name in g[3].split(",") and g[2].isdigit():
                    groups.add(int(g[2]))
            return uid, gid, sorted(groups), home or "/"
    return None


def spawn(argv, env, cwd, uid, gid, groups):
    """fork + exec as ``uid``; (pid, stdout fd, stderr fd); OSError (nothing started) when exec fails."""
    out_r, out_w = os.pipe()   # Python's fds are close-on-exec: the child keeps only 0, 1 and 2
    err_r, err_w = os.pipe()
    ex_r, ex_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            _signal.set_wakeup_fd(-1)
            for name in _RESET:
                _signal.signal(getattr(_signal, name), _signal.SIG_DFL)
            null = os.open("/dev/null", os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            os.chdir(cwd)
            os.setgroups(groups)
            os.setgid(gid)
            os.setuid(uid)
            os.chdir(cwd)   # again as the user, as runc finally does
            os.execvpe(argv[0], argv, env)
        except BaseException as exc:  # noqa: BLE001 - reported to the parent, which falls back
            try:
                os.write(ex_w, ("%s: %s" % (type(exc).__name__, exc)).encode("utf-8", "replace")[:1000])
            finally:
                os._exit(127)
    for fd in (out_w, err_w, ex_w):
        os.close(fd)
    failure = b""
    while True:
        chunk = os.read(ex_r, 4096)
        if not chunk:
            break
        failure += chunk
    os.close(ex_r)
    if failure:
        os.waitpid(pid, 0)
        os.close(out_r)
        os.close(err_r)
        raise OSError(failure.decode("utf-8", "replace"))
    return pid, out_r, err_r


class Command:
    def __init__(self, rid, pid):
        self.rid, self.pid = rid, pid
        self.open = 2
        self.code = None
        self.exited_at = None
        self.replied = False


class Helper:
    def __init__(self):
        self.poll = select.poll()
        self.fds = {}          # fd -> (command, reply kind)
        self.commands = {}
        self.inbuf = bytearray()
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        _signal.set_wakeup_fd(self.wake_w)
        _signal.signal(_signal.SIGCHLD, lambda *_: None)
        for name in ("SIGTERM", "SIGINT", "SIGHUP"):   # a `pkill python3` must not cut the channel
            _signal.signal(getattr(_signal, name), _signal.SIG_IGN)
        os.umask(0o022)
        os.set_blocking(0, False)
        self.poll.register(0, select.POLLIN)
        self.poll.register(self.wake_r, select.POLLIN)

    # -------------------------------------------------------------- requests

    def on_request(self, kind, rid, payload):
        try:
            if kind == b"C":
                self.run(rid, marshal.loads(payload))
            elif kind == b"T":
                cmd = self.commands.get(rid)
                if cmd is not None and cmd.code is None:
                    try:
                        os.killpg(cmd.pid, _signal.SIGKILL)
                    except OSError:
                        pass
            elif kind == b"P":
                put(marshal.loads(payload))
                reply(b"K", rid, {})
            elif kind == b"G":
                get(rid, marshal.loads(payload)["path"])
        except NotFound as exc:
            reply(b"N", rid, {"error": str(exc)})
        except Exception as exc:   # noqa: BLE001 - the host falls back to the Docker API for this request
            reply(b"F", rid, {"error": "%s: %s" % (type(exc).__name__, exc)})

    def run(self, rid, req):
        who = resolve_user(req.get("user"))
        if who is None:
            raise LookupError("user %r is left to docker exec" % (req.get("user"),))
        uid, gid, groups, home = who
        cwd = req.get("cwd") or "/"
        if not os.path.isdir(cwd):
            raise FileNotFoundError("working folder %r is left to docker exec" % cwd)
        env = dict(req["env"])
        env.setdefault("HOME", home)
        pid, out_r, err_r = spawn(req["argv"], env, cwd, uid, gid, groups)
        cmd = self.commands[rid] = Command(rid, pid)
        for fd, kind in ((out_r, b"O"), (err_r, b"E")):
            os.set_blocking(fd, False)
            self.fds[fd] = (cmd, kind)
            self.poll.register(fd, select.POLLIN)

    # -------------------------------------------------------------- commands

    def on_output(self, fd):
        cmd, kind = self.fds[fd]
        try:
            data = os.read(fd, CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            if not cmd.replied:
                send(kind, cmd.rid, data)
            return
        self.poll.unregister(fd)
        del self.fds[fd]
        os.close(fd)
        cmd.open -= 1
        self.finish(cmd)

    def reap(self):
        for cmd in list(self.commands.values()):
            if cmd.code is None:
                try:
                    pid, status = os.waitpid(cmd.pid, os.WNOHANG)
                except ChildProcessError:
                    pid, status = cmd.pid, 255 << 8
                if pid:
                    cmd.code = 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
                    cmd.exited_at = time.monotonic()
            self.finish(cmd)

    def finish(self, cmd):
        if cmd.code is None:
            return
        if not cmd.replied and (cmd.open == 0 or time.monotonic() - cmd.exited_at >= GRACE_S):
            cmd.replied = True
            reply(b"X", cmd.rid, {"code": cmd.code})
        if cmd.replied and cmd.open == 0:
            self.commands.pop(cmd.rid, None)

    def timeout_ms(self):
        waits = [cmd.exited_at + GRACE_S - time.monotonic() for cmd in self.commands.values()
                 if cmd.code is not None and not cmd.replied]
        return int(max(0.0, min(waits)) * 1000) + 1 if waits else None

    # -------------------------------------------------------------- loop

    def on_stdin(self):
        try:
            data = os.read(0, 1 << 20)
        except BlockingIOError:
            return True
        if not data:
            return False
        self.inbuf += data
        while len(self.inbuf) >= HEADER:
            kind, rid = bytes(self.inbuf[:1]), int.from_bytes(self.inbuf[1:5], "big")
            size = int.from_bytes(self.inbuf[5:13], "big")
            if len(self.inbuf) < HEADER + size:
                break
            payload = bytes(self.inbuf[HEADER:HEADER + size])
            del self.inbuf[:HEADER + size]
            self.on_request(kind, rid, payload)
        return True

    def loop(self):
        reply(b"R", 0, {"python": list(sys.version_info[:3]), "pid": os.getpid()})
        while True:
            try:
                events = self.poll.poll(self.timeout_ms())
            except InterruptedError:
                events = []
            for fd, _ in events:
                if fd == 0:
                    if not self.on_stdin():
                        return
                elif fd == self.wake_r:
                    try:
                        while os.read(self.wake_r, 512):
                            pass
                    except BlockingIOError:
                        pass
                elif fd in self.fds:
                    self.on_output(fd)
            self.reap()


# ------------------------------------------------------------------ files


class NotFound(Exception):
    pass


def _clear(path, keep_dir):
    """Remove what is at ``path`` unless it is a folder and a folder is wanted (never follows a link);
    True when a folder is kept."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    if keep_dir and stat.S_ISDIR(st.st_mode):
        return True
    if stat.S_ISDIR(st.st_mode):
        _rmtree(path)
    else:
        os.unlink(path)
    return False


def _rmtree(path):
    for entry in os.scandir(path):
        if entry.is_dir(follow_symlinks=False):
            _rmtree(entry.path)
        else:
            os.unlink(entry.path)
    os.rmdir(path)


def put(entries):
    """Write ``(path, kind, mode, uid, gid, mtime, data)`` entries (kind d, f or l; data: the bytes or the
    link target) as dockerd's put_archive extracts an archive at ``/``."""
    dirs = []
    for path, kind, mode, uid, gid, mtime, data in entries:
        parts = [p for p in path.split("/") if p not in ("", ".")]
        if not parts or ".." in parts:
            raise ValueError("unsafe path %r" % path)
        path = "/" + "/".join(parts)
        parent = os.path.dirname(path)
        if not os.path.lexists(parent):
            os.makedirs(parent, 0o755)
        if kind == "d":
            if not _clear(path, keep_dir=True):
                os.mkdir(path, 0o700)
            dirs.append((path, mtime))
        elif kind == "f":
            _clear(path, keep_dir=False)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
        elif kind == "l":
            _clear(path, keep_dir=False)
            os.symlink(data, path)
        else:
            raise ValueError("entry kind %r is left to put_archive" % kind)
        os.lchown(path, uid, gid)
        if kind != "l":
            os.chmod(path, mode & 0o7777)
            os.utime(path, (mtime, mtime))
    for path, mtime in reversed(dirs):
        os.utime(path, (mtime, mtime))


def get(rid, path):
    """Stream ``(name, kind, mode, size)`` entries (``D`` frames, each regular file's bytes after it in
    ``B`` frames) of the folders and regular files at ``path``, links not followed; then ``K``."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            raise NotFound(path)
        raise
    name = os.path.basename(path.rstrip("/"))
    if not name:
        raise ValueError("the root folder is left to get_archive")
    _send_entry(rid, path, name, st)
    reply(b"K", rid, {"name": name})


def _send_entry(rid, path, name, st):
    if stat.S_ISDIR(st.st_mode):
        reply(b"D", rid, (name, "d", stat.S_IMODE(st.st_mode), 0))
        for entry in sorted(os.listdir(path)):
            child = path.rstrip("/") + "/" + entry
            _send_entry(rid, child, name + "/" + entry, os.lstat(child))
    elif stat.S_ISREG(st.st_mode):
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            size = os.fstat(fd).st_size
            reply(b"D", rid, (name, "f", stat.S_IMODE(st.st_mode), size))
            left = size
            while left:
                chunk = os.read(fd, min(CHUNK, left))
                if not chunk:
                    raise OSError("%s shrank while it was read" % path)
                send(b"B", rid, chunk)
                left -= len(chunk)
        finally:
            os.close(fd)
    # links, fifos, devices and sockets: never written on the host, so not sent


if __name__ == "__main__":
    Helper().loop()
