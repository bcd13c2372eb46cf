#!/usr/bin/env python3
"""swe-taskflow verifier state: the one place a task container's verifiers keep what outlives a step.

The verifiers run as root after a non-root agent has had the container to itself (and may have left
processes behind), so nothing the agent can touch is trusted:

* the state folder (default /var/lib/swe-taskflow) lies under folders that only root can change, checked
  from / down, as written and as resolved; root makes it fresh (mode 0700) and checks it is a real
  folder of its own before every use. An agent can neither make it first nor swap anything inside it.
  (The old place, /var/tmp/swe-taskflow, is world-creatable: the agent could make it first; a folder it
  made anywhere on the way is its own, and refused.)
* files in it are written by descriptor (O_EXCL, O_NOFOLLOW, then renamed in) and read only when they
  are root's own regular files of bounded size;
* the carried checkpoint gives only :data:`CARRY_KEYS`, each a number in [0, 1]: any other key is
  ignored and reported, never merged into a reward;
* trees are removed and copied without following a link (:func:`remove_tree`, ``cp -a -P``);
* outputs in /logs/verifier replace whatever was there without writing through a link, and the folder is
  closed to everyone but its owner first (Harbor makes it 0777);
* every process of the agent's uid is killed before a verifier reads anything (:func:`begin`), so nothing the
  agent left running can change the repository, the answer or the outputs while they are checked; the
  repository's tests run as the agent's user, never as root (:func:`run_as`), and what they leave outside the
  repository is removed after them (:func:`sweep_new`): the hidden tests they could read do not outlive the run.

Kept compatible with old python3 (3.6+): task images bring their own interpreter.
"""
import json
import math
import os
import shutil
import signal
import stat
import time

STATE_DIR = "/var/lib/swe-taskflow"
#: What a checkpoint carries to the answer steps after it (their reward repeats the task's resolve).
CARRY_KEYS = ("reward", "resolved", "f2p_pass_rate", "p2p_pass_rate")
MAX_CARRY = 1 << 16
MAX_STATE = 1 << 28


class StateError(RuntimeError):
    """The verifier's state cannot be trusted (a folder or file is not root's own): nothing is read from it."""


def _prefixes(path):
    """``/``, ``/a``, ``/a/b`` for ``/a/b/c``: the folders that hold ``path``."""
    parts = [p for p in os.path.abspath(path).split("/") if p][:-1]
    return ["/"] + ["/" + "/".join(parts[:n]) for n in range(1, len(parts) + 1)]


def _owner_ok(uid):
    return uid in (0, os.geteuid())


def check_parents(path, create=True):
    """Every folder that holds ``path``, as written and as resolved, is root's (a link on the way too) and
    writable by root only, or sticky (like /tmp: then no one else can rename or remove the root-owned entry
    below it, also checked here). A missing one is made (0755) when ``create``; else False is returned.
    What the agent made on the way fails here: it is the agent's own."""
    for p in _prefixes(path) + _prefixes(os.path.realpath(path)):
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            if not create:
                return False
            os.mkdir(p, 0o755)
            st = os.lstat(p)
        if stat.S_ISLNK(st.st_mode) and _owner_ok(st.st_uid):
            continue   # a link root made where only root can: where it leads is the resolved walk's
        mode = st.st_mode
        if not stat.S_ISDIR(mode) or not _owner_ok(st.st_uid) or (mode & 0o022 and not mode & stat.S_ISVTX):
            raise StateError("%s (holding %s) is not a folder of root's that only root can change (owner %d, "
                             "mode %o): refusing to keep verifier state under it"
                             % (p, path, st.st_uid, stat.S_IMODE(mode)))
    return True


def _check_own_dir(path):
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise StateError("%s is a link or not a folder: refusing to keep verifier state there" % path)
    if st.st_uid != os.geteuid() or stat.S_IMODE(st.st_mode) & 0o077:
        raise StateError("%s is not the verifier's own private folder (owner %d, mode %o): refusing to use it"
                         % (path, st.st_uid, stat.S_IMODE(st.st_mode)))


def state_dir(path=STATE_DIR, create=True):
    """``path`` checked (and made 0700 when missing and ``create``): the folder, or None when it does not exist."""
    if not check_parents(path, create):
        return None
    if create:
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
    elif not os.path.lexists(path):
        return None
    _check_own_dir(path)
    return path


def state_file(path, create=True):
    """``path``'s folder checked as :func:`state_dir` (None when it does not exist and not ``create``)."""
    return path if state_dir(os.path.dirname(os.path.abspath(path)), create=create) else None


def write_private(path, data):
    """``data`` (bytes) to ``path`` in a checked state folder: a fresh 0600 file renamed in."""
    state_file(path)
    tmp = path + ".tmp"
    remove_tree(tmp)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def read_private(path, limit=MAX_STATE):
    """The bytes of ``path`` when it is the verifier's own regular file in a checked state folder; None when
    absent. A link, another owner, a non-file or more than ``limit`` bytes raises StateError."""
    if state_file(path, create=False) is None or not os.path.lexists(path):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise StateError("%s cannot be opened without following a link: %s" % (path, exc))
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or stat.S_IMODE(st.st_mode) & 0o022:
            raise StateError("%s is not the verifier's own regular file" % path)
        if st.st_size > limit:
            raise StateError("%s holds %d bytes, more than %d" % (path, st.st_size, limit))
        return fh.read(limit + 1)[:limit]


def read_carry(path):
    """The carried checkpoint values: ``(values, report)``. Only :data:`CARRY_KEYS` with a number in [0, 1]
    are taken; every other key, a bad value or an untrusted file is named in ``report`` and ignored."""
    report = {"path": path, "accepted": [], "ignored": []}
    try:
        data = read_private(path, MAX_CARRY)
    except StateError as exc:
        report["problem"] = str(exc)
        return {}, report
    if data is None:
        report["problem"] = "no carried checkpoint (no checkpoint ran before this step)"
        return {}, report
    try:
        doc = json.loads(data.decode("utf-8"))
    except ValueError as exc:
        report["problem"] = "not JSON: %s" % exc
        return {}, report
    if not isinstance(doc, dict):
        report["problem"] = "not a JSON object"
        return {}, report
    values = {}
    for key in sorted(doc):
        v = doc[key]
        good = (key in CARRY_KEYS and isinstance(v, (int, float)) and not isinstance(v, bool)
                and math.isfinite(v) and 0.0 <= v <= 1.0)
        if good:
            values[key] = float(v)
            report["accepted"].append(key)
        else:
            report["ignored"].append(key if key in CARRY_KEYS else "%s (not a carried key)" % key)
    return values, report


def write_carry(path, reward):
    """The carried keys of ``reward`` to ``path`` (a checked state file)."""
    write_private(path, json.dumps({k: reward[k] for k in CARRY_KEYS if k in reward}, sort_keys=True).encode())


def remove_tree(path):
    """``path`` gone without following a link: a link or file is unlinked, a real folder removed entry by entry
    (shutil.rmtree refuses links and works by descriptor). Missing is fine."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path)
    else:
        os.unlink(path)


def logs_dir(path):
    """The verifier's output folder: made when missing; a link there is refused (outputs would land elsewhere).
    Harbor leaves it writable by everyone (0777): no one but its owner may write it from now on, so a process
    the agent left running cannot put its own reward there after this verifier's."""
    if os.path.islink(path):
        raise StateError("%s is a link: refusing to write verifier outputs through it" % path)
    os.makedirs(path, exist_ok=True)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise StateError("%s is not a folder" % path)
    if st.st_mode & 0o022:
        os.chmod(path, stat.S_IMODE(st.st_mode) & ~0o022)
    return path


def write_out(folder, name, data):
    """``data`` (str or bytes) as ``folder/name``, replacing whatever was there (never written through a link)."""
    path = os.path.join(logs_dir(folder), name)
    remove_tree(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)


def start_logs(folder):
    """The output folder checked, and any reward left there before this run removed: a verifier that stops
    half-way leaves no reward at all, never one someone else wrote."""
    for name in ("reward.json", "reward.txt"):
        remove_tree(os.path.join(logs_dir(folder), name))


def user_ids(user):
    """uid and gid of an agent user (a name or uid, optionally ``:group``), resolved in this container."""
    import grp
    import pwd
    name, _, group = user.partition(":")
    if name.isdigit():
        uid = int(name)
        try:
            gid = pwd.getpwuid(uid).pw_gid
        except KeyError:
            gid = uid
    else:
        pw = pwd.getpwnam(name)
        uid, gid = pw.pw_uid, pw.pw_gid
    if group:
        gid = int(group) if group.isdigit() else grp.getgrnam(group).gr_gid
    return uid, gid


def _agent_uid(user):
    uid = user_ids(user)[0]
    if uid == 0:
        raise StateError("the agent user %r is root: a verifier cannot tell its processes from its own" % user)
    return uid


def _live_pids_of(uid):
    """Processes with ``uid`` as any of their real, effective, saved or file-system uid (zombies left out: they
    run nothing)."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/status" % name) as fh:
                fields = dict(line.split(":", 1) for line in fh if ":" in line)
        except (OSError, ValueError):
            continue   # gone meanwhile
        if fields.get("State", "").strip().startswith("Z"):
            continue
        if str(uid) in fields.get("Uid", "").split():
            out.append(int(name))
    return out


def stop_agent(user, rounds=50):
    """Kill every process of the agent's uid (SIGKILL, until none is left): what it started in the background
    cannot act while a verifier checks. Returns how many were killed; StateError when some survive."""
    uid = _agent_uid(user)
    killed = 0
    for _ in range(rounds):
        pids = _live_pids_of(uid)
        if not pids:
            return killed
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except OSError:
                pass
        time.sleep(0.02)
    raise StateError("processes of uid %d survive SIGKILL: %s" % (uid, _live_pids_of(uid)[:10]))


def begin(cfg, logs):
    """A verifier's first act: the agent's processes stopped (when the config names its user), outputs checked."""
    if cfg.get("agent_user"):
        stop_agent(cfg["agent_user"])
    start_logs(logs)


def run_as(user):
    """``(preexec_fn, env)`` for a child that runs as the agent's user and group, with its home, never as root."""
    import pwd
    uid, gid = user_ids(user)
    if uid == 0:
        raise StateError("refusing to run the repository's tests as root (agent user %r)" % user)
    try:
        home = pwd.getpwuid(uid).pw_dir
    except KeyError:
        home = "/tmp"

    def drop():
        os.setgroups([gid])
        os.setgid(gid)
        os.setuid(uid)

    env = dict(os.environ, HOME=home, USER=user.partition(":")[0], LOGNAME=user.partition(":")[0])
    return drop, env


#: Never walked by :func:`owned_by`: kernel views and this verifier's own trees.
SWEEP_SKIP = ("/proc", "/sys", "/dev/pts", "/tests", "/logs/verifier", STATE_DIR)


def _walk_owned(uid, skip):
    """(path, lstat) of every entry owned by ``uid``, outside ``skip``; links are never followed."""
    skipped = set(SWEEP_SKIP) | set(skip)
    for top, dirs, files in os.walk("/", topdown=True):
        keep = []
        for name in dirs + files:
            path = os.path.join(top, name)
            if path in skipped:
                continue
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if st.st_uid == uid:
                yield path, st
            if name in dirs and stat.S_ISDIR(st.st_mode):
                keep.append(name)
        dirs[:] = keep


def owned_by(user, skip=()):
    """The paths the agent's uid owns outside ``skip`` (what :func:`sweep_new` compares with after a run)."""
    return {path for path, _ in _walk_owned(_agent_uid(user), skip)}


def sweep_new(user, before, since, skip=()):
    """Remove what the agent's uid made since ``owned_by`` gave ``before`` (a new folder goes whole) and every
    file or link of its own changed since ``since`` (a time.time()); its older folders stay. Returns the
    removed paths."""
    uid = _agent_uid(user)
    removed = []
    gone = ()
    for path, st in _walk_owned(uid, skip):
        if path.startswith(gone):
            continue
        if path not in before or (not stat.S_ISDIR(st.st_mode) and max(st.st_ctime, st.st_mtime) >= since):
            remove_tree(path)
            removed.append(path)
            gone = gone + (path + "/",)
    return removed
