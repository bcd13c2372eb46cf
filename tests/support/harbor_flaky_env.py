"""A Harbor environment that behaves like a slow, flaky cloud on top of the local one (for tests and planning).

``SlowFlakyEnvironment`` is :class:`swe_taskflow_harbor.environment.DockerEnvironment` plus a start latency, a
latency per command and a start failure rate (``environment_kwargs = {start_latency_s = 20,
command_latency_s = 2, failure_rate = 0.05, seed = 0}``). Which starts fail is drawn from the seed, the
environment's name and how many starts of that name this process has made, so a rerun fails alike
whatever order the tasks start in. For 731 tasks without containers, see tests/support/harbor_sim.py.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import threading
from collections import Counter
from typing import Any

from swe_taskflow_harbor.environment import DockerEnvironment

_STARTS: Counter = Counter()
_LOCK = threading.Lock()


class SlowFlakyEnvironment(DockerEnvironment):
    def __init__(self, *args: Any, start_latency_s: float = 0.0, command_latency_s: float = 0.0,
                 failure_rate: float = 0.0, seed: int = 0, **kwargs: Any) -> None:
        self.start_latency_s, self.command_latency_s = float(start_latency_s), float(command_latency_s)
        self.failure_rate, self.seed = float(failure_rate), int(seed)
        super().__init__(*args, **kwargs)

    @staticmethod
    def type() -> str:
        return "swe-taskflow-slow-flaky"

    async def start(self, force_build: bool) -> None:
        with _LOCK:
            attempt = _STARTS[self.environment_name]
            _STARTS[self.environment_name] += 1
        await asyncio.sleep(self.start_latency_s)
        digest = hashlib.sha256(f"{self.seed}:{self.environment_name}:{attempt}".encode()).digest()
        if random.Random(digest).random() < self.failure_rate:
            raise RuntimeError(f"simulated start failure of {self.environment_name} (attempt {attempt + 1})")
        await super().start(force_build)

    async def exec(self, command: str, *args: Any, **kwargs: Any):
        await asyncio.sleep(self.command_latency_s)
        return await super().exec(command, *args, **kwargs)


__all__ = ["SlowFlakyEnvironment"]
