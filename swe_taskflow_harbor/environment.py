"""A Harbor environment for local containers that never have a network, through docker-compose 1.29.

Harbor 0.25's stock ``-e docker`` cannot run on an offline host: it needs the ``docker compose`` v2
plugin (Debian bookworm ships docker-compose 1.29 only) and, for ``network_mode = "no-network"``, first
runs a probe container from a registry image. This class keeps Harbor's Docker orchestration and changes
only what that needs: the compose front end (``docker-compose``, which has no ``cp`` or ``up --wait``),
no probe, Harbor's own no-network compose file on every start, and an owner label on every container so
a sweep can tell whose leftovers are whose. Commands inside the running container go through
``docker exec`` on the compose project's container (compose 1.29 is a Python program that takes about a
second to start; an agent runs hundreds of commands), files go in as tar streams. It declares that it can
disable the network (every container runs with ``network_mode: none``) and refuses any other policy.
Compose creates no network for a service whose ``network_mode`` is set.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from harbor.environments.docker import COMPOSE_NO_NETWORK_PATH
from harbor.environments.docker.docker import DockerEnvironment, _sanitize_docker_compose_project_name
from harbor.environments.docker.runtime import ContainerRuntime
from harbor.models.task.config import NetworkMode, NetworkPolicy

COMPOSE = os.environ.get("SWE_TASKFLOW_COMPOSE", "docker-compose")
OWNER_LABEL = "swe-taskflow.owner"


def owner_label() -> str:
    """``<pid>@<boot id>``: the process that owns a container, on this boot of this host."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        boot = "unknown-boot"
    return f"{os.getpid()}@{boot}"


class ComposeEnvironment(DockerEnvironment):
    """``harbor run -e swe_taskflow_harbor.environment:ComposeEnvironment``."""

    @classmethod
    def runtime(cls) -> ContainerRuntime:
        return ContainerRuntime(engine=("docker",), compose=(COMPOSE,), supports_compose_wait=False,
                                supports_compose_cp=False, supports_compose_project_directory=True)

    @classmethod
    def _egress_control_kernel_support(cls) -> bool:
        return False   # Harbor's probe runs a registry image; this environment needs no egress sidecar

    @classmethod
    def preflight(cls) -> None:
        for argv, what in ((["docker", "info"], "a Docker daemon"), ([COMPOSE, "version"], COMPOSE)):
            if shutil.which(argv[0]) is None:
                raise SystemExit(f"{what} is needed: {argv[0]} is not on PATH (.ci/harbor-setup.sh installs it)")
            try:
                subprocess.run(argv, capture_output=True, timeout=20, check=True)
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
                raise SystemExit(f"{what} does not answer ({' '.join(argv)} failed)") from None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._overlay_dir = tempfile.TemporaryDirectory(prefix="swe-taskflow-compose-")
        self._overlay = Path(self._overlay_dir.name) / "docker-compose-swe-taskflow.json"
        self._overlay.write_text(json.dumps({"services": {"main": {
            "network_mode": "none", "labels": {OWNER_LABEL: owner_label()}}}}, indent=2))

    @property
    def capabilities(self):
        return super().capabilities.model_copy(update={"disable_internet": True, "stream": False})

    @property
    def _docker_compose_paths(self) -> list[Path]:
        return [*super()._docker_compose_paths, COMPOSE_NO_NETWORK_PATH, self._overlay]

    def validate_network_policy_support(self, network_policy: NetworkPolicy | None = None) -> None:
        policy = network_policy or self.network_policy
        if policy.network_mode != NetworkMode.NO_NETWORK:
            raise ValueError(f"network_mode={policy.network_mode.value!r} is not supported by {type(self).__name__}: "
                             "every container runs with no network (export tasks with network_mode = 'no-network')")

    async def _apply_network_policy(self, network_policy: NetworkPolicy) -> None:
        self.validate_network_policy_support(network_policy)   # already network none since start

    async def start(self, force_build: bool):
        self._containers: dict[str, str] = {}
        await super().start(force_build)

    async def upload_file(self, source_path, target_path: str):
        await self._platform._upload_file_with_tar(source_path, target_path)   # compose 1.29 has no cp

    async def upload_dir(self, source_dir, target_dir: str):
        await self._platform._upload_dir_with_tar(source_dir, target_dir)

    async def _container_id(self, service: str) -> str:
        cache = self.__dict__.setdefault("_containers", {})
        if service not in cache:
            project = _sanitize_docker_compose_project_name(self.session_id)
            proc = await asyncio.create_subprocess_exec(
                "docker", "ps", "-q", "--filter", f"label=com.docker.compose.project={project}",
                "--filter", f"label=com.docker.compose.service={service}",
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
            out, _ = await proc.communicate()
            ids = out.decode().split()
            if len(ids) != 1:
                raise RuntimeError(f"expected one running container for service {service!r} of {project}, "
                                   f"found {len(ids)}")
            cache[service] = ids[0]
        return cache[service]

    async def _run_docker_compose_command(self, command: list[str], check: bool = True,
                                          timeout_sec: int | None = None, stdin_data: bytes | None = None,
                                          on_output=None):
        if not command or command[0] != "exec":
            return await super()._run_docker_compose_command(command, check=check, timeout_sec=timeout_sec,
                                                             stdin_data=stdin_data, on_output=on_output)
        args, opts, i = command[1:], [], 0
        while i < len(args) and args[i].startswith("-"):
            if args[i] in ("-T", "--no-TTY"):
                i += 1
            elif args[i] in ("-w", "-e", "-u", "--workdir", "--env", "--user"):
                opts += args[i:i + 2]
                i += 2
            else:
                raise ValueError(f"unsupported compose exec option {args[i]!r}")
        container = await self._container_id(args[i])
        full = ["docker", "exec", *(["-i"] if stdin_data is not None else []), *opts, container, *args[i + 1:]]
        process = await asyncio.create_subprocess_exec(
            *full, stdin=asyncio.subprocess.PIPE if stdin_data is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        if on_output is not None:
            result = await self._collect_streamed_output(process, timeout_sec=timeout_sec, stdin_data=stdin_data,
                                                         on_output=on_output)
        else:
            result = await self._collect_buffered_output(process, timeout_sec=timeout_sec, stdin_data=stdin_data)
        if check and result.return_code != 0:
            raise RuntimeError(f"docker exec failed in {self.environment_name}: {' '.join(full[:6])}... "
                               f"(exit {result.return_code}): {(result.stdout or '')[-2000:]}")
        return result

    async def stop(self, delete: bool):
        try:
            await super().stop(delete)
        finally:
            self._overlay_dir.cleanup()


__all__ = ["ComposeEnvironment", "owner_label", "OWNER_LABEL"]
