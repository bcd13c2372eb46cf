"""Run in Harbor's venv by tests/container/test_harbor_command_helper.py: compare what a command sees and
does through DockerEnvironment's resident command helper with the same command through a plain Docker
API exec of the same container, and check what only the helper does (timeouts kill the process group,
a killed helper leaves plain execs, no python3 leaves plain execs). Prints one JSON line.

    .harbor-venv/bin/python tests/support/harbor_helper_probe.py IMAGE WORKDIR
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from pathlib import Path

#: What a process can see of how it was started: environment, user, groups, capabilities, umask,
#: folder, session, stdin and the two output pipes, signal dispositions; stderr and the exit code too.
SEEN = ("env | grep -v '^_=' | sort; id; grep -E '^(Groups|Cap|NoNewPrivs|Seccomp)' /proc/self/status; umask; pwd; "
        "[ \"$(awk '{print $6}' /proc/$$/stat)\" = \"$$\" ] && echo session-leader; readlink /proc/self/fd/0; "
        "[ \"$(readlink /proc/self/fd/1)\" != \"$(readlink /proc/self/fd/2)\" ] && echo two-pipes; "
        "grep -E '^Sig(Ign|Blk)' /proc/self/status; echo to-stderr >&2; exit 7")
CASES = [  # (user, cwd, env); the last five are answered by docker exec (the helper falls back)
    ("root", None, None), ("agent", None, {"GREETING": "hi", "PATH": "/usr/bin:/bin"}), (None, "/tmp", None),
    ("1000", "/", {"HOME": "/custom"}), ("nobody", None, None), ("agent", "/app", {"LANG": "C"}),
    ("4242", None, None), ("agent:root", None, None), ("ghost", None, None), ("root", "/nowhere", None),
    ("agent", "/root", None),
]


@contextlib.contextmanager
def plain(env):
    """The same environment with its helper set aside: every call goes through the Docker API."""
    channel, env._channel = env._channel, None
    try:
        yield
    finally:
        env._channel = channel


async def outcome(environment, command, **kw):
    try:
        r = await environment.exec(command, **kw)
        return {"stdout": sorted((r.stdout or "").splitlines()), "code": r.return_code}
    except Exception as exc:  # noqa: BLE001 - compared as text
        return {"error": f"{type(exc).__name__}: {exc}"}


def listing(root: Path) -> list:
    return sorted((str(p.relative_to(root)), oct(p.stat().st_mode & 0o777) if p.is_file() else "dir",
                   p.read_text() if p.is_file() else "") for p in root.rglob("*"))


async def probe(image: str, work: Path) -> dict:
    from harbor.models.task.config import EnvironmentConfig, NetworkMode, NetworkPolicy
    from harbor.models.trial.paths import TrialPaths

    from swe_taskflow_harbor.environment import DockerEnvironment

    def make(name: str, **extra) -> DockerEnvironment:
        (work / name / "environment").mkdir(parents=True)
        paths = TrialPaths(work / name / "trial")
        paths.mkdir()
        cfg = EnvironmentConfig(docker_image=image, network_mode="no-network", workdir="/app")
        return DockerEnvironment(environment_dir=work / name / "environment", environment_name="probe",
                                 session_id=f"{name}__env", trial_paths=paths, task_env_config=cfg,
                                 network_policy=NetworkPolicy(network_mode=NetworkMode.NO_NETWORK), **extra)

    out: dict = {}
    env = make("main")
    await env.start(force_build=False)
    try:
        out["helper_started"] = env._channel is not None and env._channel.alive
        await env.exec("printf 'audio:x:29:agent\\nvideo:x:44:root,agent\\n' >> /etc/group", user="root")
        before = dict(env.served)
        helper = [await outcome(env, SEEN, user=u, cwd=c, env=e) for u, c, e in CASES]
        mid = dict(env.served)
        with plain(env):
            docker = [await outcome(env, SEEN, user=u, cwd=c, env=e) for u, c, e in CASES]
        # where the helper falls back, docker exec answers both times (compared by exit code: dockerd's
        # own error text for an unknown user does not always reach the stream)
        same = [h == d if i < 6 else h.get("code") == d.get("code") for i, (h, d) in enumerate(zip(helper, docker))]
        out["same_as_docker_exec"] = same
        out["differences"] = [(case, h, d) for case, h, d, ok in zip(CASES, helper, docker, same) if not ok]
        out["served_by_helper"] = mid["helper"] - before["helper"]
        out["agent_seen"] = helper[1]

        big = await env.exec("head -c 3000000 /dev/zero | tr '\\0' a")
        out["big_output"] = len(big.stdout or "")
        chunks: list = []

        async def collect(text, stream):
            chunks.append((text, stream))

        with env.scoped_output_callback(collect):
            streamed = await env.exec("echo one; sleep 0.2; echo two")
        out["streamed"] = ["".join(t for t, _ in chunks), streamed.stdout, sorted({s for _, s in chunks})]
        together = await asyncio.gather(*(env.exec(f"sleep 0.{4 - i}; echo {i}", user="agent") for i in range(4)))
        out["concurrent"] = [r.stdout for r in together]
        out["signal_code"] = (await env.exec("kill -9 $$")).return_code

        t0 = time.monotonic()
        out["late_output"] = (await env.exec("(sleep 0.5; echo late) & echo now")).stdout
        out["late_output_s"] = time.monotonic() - t0
        t0 = time.monotonic()
        out["detached"] = (await env.exec("sleep 30 >/dev/null 2>&1 & echo quick")).stdout
        out["detached_s"] = time.monotonic() - t0

        t0 = time.monotonic()
        try:
            await env.exec("sleep 60 & echo $! > /tmp/bg; exec sleep 61", timeout_sec=1, user="agent")
            out["timeout"] = "no error"
        except RuntimeError as exc:
            out["timeout"] = str(exc)
        out["timeout_s"] = time.monotonic() - t0
        await asyncio.sleep(0.5)
        out["after_timeout"] = (await env.exec(   # killed: gone, or a zombie nobody reaps (pid 1 is `sleep`)
            "for p in $(cat /tmp/bg) $(ps -o pid,args | awk '$2 == \"sleep\" && $3 == \"61\" {print $1}'); do "
            "s=$(awk '{print $3}' /proc/$p/stat 2>/dev/null); "
            "[ -n \"$s\" ] && [ \"$s\" != Z ] && echo alive; done; echo checked", user="root")).stdout

        # uploads through a link the agent planted: replaced, never written through (as put_archive does)
        src = work / "src"
        (src / "tree" / "sub").mkdir(parents=True)
        (src / "tree" / "run.sh").write_text("#!/bin/sh\necho ran\n")
        (src / "tree" / "run.sh").chmod(0o750)
        (src / "tree" / "sub" / "x.txt").write_text("x\n")
        planted = {}
        for label, ctx in (("helper", contextlib.nullcontext()), ("docker", plain(env))):
            await env.exec(f"mkdir -p /srv/{label} && chmod 777 /srv/{label}", user="root")
            await env.exec(f"echo precious > /tmp/precious-{label}; ln -s /tmp/precious-{label} /srv/{label}/x.txt; "
                           f"ln -s /etc /srv/{label}/sub", user="agent")
            with ctx:
                await env.upload_file(src / "tree" / "sub" / "x.txt", f"/srv/{label}/x.txt")
                await env.upload_dir(src / "tree", f"/srv/{label}")
            planted[label] = (await env.exec(
                f"cat /tmp/precious-{label}; cd /srv/{label} && find . | sort && stat -c '%a %U %F' x.txt sub run.sh "
                f"sub/x.txt && ./run.sh && ls /etc/x.txt 2>&1 | head -c 0", user="root")).stdout
        out["uploads"] = planted

        await env.exec("rm -rf /logs/agent/* && mkdir -p /logs/agent/d/e && echo a > /logs/agent/d/a.txt && "
                       "printf b > /logs/agent/d/e/b.sh && chmod 755 /logs/agent/d/e/b.sh && "
                       "ln -s /etc/passwd /logs/agent/d/link && mkfifo /logs/agent/d/fifo && "
                       "head -c 200000 /dev/urandom | base64 > /logs/agent/d/big.txt", user="root")
        served = env.served["helper"]
        await env.download_dir("/logs/agent", work / "dl-helper")
        await env.download_file("/logs/agent/d/e/b.sh", work / "one-helper.sh")
        out["downloads_by_helper"] = env.served["helper"] - served
        with plain(env):
            await env.download_dir("/logs/agent", work / "dl-docker")
            await env.download_file("/logs/agent/d/e/b.sh", work / "one-docker.sh")
        out["downloads_same"] = (listing(work / "dl-helper") == listing(work / "dl-docker")
                                 and (work / "one-helper.sh").read_bytes() == (work / "one-docker.sh").read_bytes())
        out["download_listing"] = [row[:2] for row in listing(work / "dl-helper")]

        # SIGTERM (a `pkill python3`) leaves the helper; SIGKILL ends it and later calls are plain execs
        pid = env._channel._hello["pid"]
        with plain(env):
            await env.exec(f"kill -TERM {pid}", user="root")
        await asyncio.sleep(0.3)
        out["after_sigterm"] = [env._channel.alive, (await env.exec("echo ok")).stdout]
        with plain(env):
            await env.exec(f"kill -KILL {pid}", user="root")
        for _ in range(50):
            if not env._channel.alive:
                break
            await asyncio.sleep(0.1)
        docker_before = env.served["docker"]
        out["after_sigkill"] = [env._channel.alive, (await env.exec("echo ok")).stdout,
                                env.served["docker"] - docker_before]
    finally:
        await env.stop(delete=True)

    # an image without python3: no helper, every command a docker exec
    bare = make("bare", command_helper=False)
    await bare.start(force_build=False)
    try:
        await bare.exec("rm -f /usr/bin/python3*", user="root")
        await bare._start_helper()
        out["no_python"] = [bare._channel, (await bare.exec("echo ok")).stdout]
    finally:
        await bare.stop(delete=True)
    off = make("off", command_helper=False)
    await off.start(force_build=False)
    try:
        out["helper_off"] = [off._channel, (await off.exec("echo ok")).stdout, off.served["helper"]]
    finally:
        await off.stop(delete=True)
    return out


if __name__ == "__main__":
    print(json.dumps(asyncio.run(probe(sys.argv[1], Path(sys.argv[2]))), default=str))
