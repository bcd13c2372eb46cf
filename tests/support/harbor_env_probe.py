"""Run in Harbor's venv by tests/container/test_harbor_environment.py: drive the project's DockerEnvironment
through Harbor's environment API on a real container and print what was observed as one JSON line.

    .harbor-venv/bin/python tests/support/harbor_env_probe.py IMAGE WORKDIR
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path


async def probe(image: str, work: Path) -> dict:
    from harbor.models.task.config import EnvironmentConfig, NetworkMode, NetworkPolicy
    from harbor.models.trial.paths import TrialPaths

    from swe_taskflow_harbor.environment import DockerEnvironment, active_execs, docker_client

    (work / "environment").mkdir(parents=True)
    cfg = EnvironmentConfig(docker_image=image, network_mode="no-network", workdir="/app")
    paths = TrialPaths(work / "trial")
    paths.mkdir()
    kw = dict(environment_dir=work / "environment", environment_name="probe", session_id="probe__env",
              trial_paths=paths, task_env_config=cfg)
    out: dict = {"pid": os.getpid()}
    try:
        DockerEnvironment(**kw, network_policy=NetworkPolicy(network_mode=NetworkMode.PUBLIC))
        out["public_refused"] = False
    except ValueError as exc:
        out["public_refused"] = "no network" in str(exc)
    no_net = NetworkPolicy(network_mode=NetworkMode.NO_NETWORK)
    try:
        DockerEnvironment(**kw, network_policy=no_net, mounts=[{"type": "bind", "source": str(work), "target": "/host"}])
        out["mounts_refused"] = False
    except ValueError as exc:
        out["mounts_refused"] = "/host" in str(exc)
    env = DockerEnvironment(**kw, network_policy=no_net)
    t0 = time.monotonic()
    await env.start(force_build=False)
    out["start_s"] = time.monotonic() - t0
    try:
        attrs = docker_client().api.inspect_container(env._container.id)
        out["container"] = {"id": attrs["Id"], "network_mode": attrs["HostConfig"]["NetworkMode"],
                            "security_opt": attrs["HostConfig"]["SecurityOpt"], "labels": attrs["Config"]["Labels"]}
        out["log_dirs"] = (await env.exec("stat -c '%a %U' /logs/agent /logs/verifier /logs/artifacts")).stdout
        with env.with_default_user("agent"):
            who = await env.exec("id -un; pwd; echo $GREETING; echo to-stderr >&2; exit 3", env={"GREETING": "hi"})
        out["agent_exec"] = {"stdout": who.stdout, "stderr": who.stderr, "code": who.return_code}
        out["root_exec"] = (await env.exec("id -u", user="root")).stdout
        out["interfaces"] = (await env.exec("cat /proc/net/dev")).stdout
        src = work / "upload"
        (src / "sub").mkdir(parents=True)
        (src / "run.sh").write_text("#!/bin/sh\necho ran\n")
        (src / "run.sh").chmod(0o755)
        (src / "sub" / "data.txt").write_text("data\n")
        await env.upload_dir(src, "/tests/deep")
        await env.upload_file(src / "sub" / "data.txt", "/tests/")                 # into an existing folder
        await env.upload_file(src / "sub" / "data.txt", "/tests/renamed.txt")      # as a file path
        out["uploaded"] = (await env.exec("cd /tests && find . | sort && stat -c '%a %U' deep/run.sh && "
                                          "deep/run.sh", user="root")).stdout
        await env.exec("mkdir -p /logs/agent/sub && echo log > /logs/agent/a.txt && echo nested > "
                       "/logs/agent/sub/b.txt && ln -s /etc/passwd /logs/agent/passwd-link && "
                       "mkfifo /logs/agent/fifo", user="root")
        await env.download_dir("/logs/agent", paths.agent_dir)
        out["downloaded"] = sorted(str(p.relative_to(paths.agent_dir)) + ("@" if p.is_symlink() else "")
                                   for p in paths.agent_dir.rglob("*"))
        await env.download_file("/logs/agent/sub/b.txt", work / "one.txt")
        out["one_file"] = (work / "one.txt").read_text()
        try:
            await env.download_file("/logs/agent/absent.txt", work / "absent.txt")
            out["absent"] = "no error"
        except RuntimeError as exc:
            out["absent"] = str(exc)
        out["kinds"] = [await env.is_dir("/tests/deep"), await env.is_file("/tests/deep"),
                        await env.is_file("/tests/deep/run.sh"), await env.is_dir("/nowhere"),
                        await env.is_file("/logs/agent/fifo")]
        t0 = time.monotonic()
        try:
            await env.exec("sleep 30", timeout_sec=1)
            out["timeout"] = "no error"
        except RuntimeError as exc:
            out["timeout"] = str(exc)
        out["timeout_s"] = time.monotonic() - t0
        await asyncio.sleep(0.5)
        out["attached_after_timeout"] = active_execs()      # the timed-out command holds no thread
        out["after_timeout"] = (await env.exec("echo still-usable")).stdout
    finally:
        t0 = time.monotonic()
        await env.stop(delete=True)
        out["stop_s"] = time.monotonic() - t0
    return out


if __name__ == "__main__":
    print(json.dumps(asyncio.run(probe(sys.argv[1], Path(sys.argv[2])))))
