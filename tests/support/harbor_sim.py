"""A simulated Harbor environment backend: the harbor sandbox's scheduling measured as a cloud would behave.

It starts no container: an environment takes ``start_s`` to start and ``command_s`` per proof run (slept for
real, multiplied by ``time_scale``: benchmarks/scale_bench.py runs 1/1000 of real time and reports its
measurements scaled back up), and fails to start with probability ``failure_rate``; with ``die_rate`` a
started environment dies during a run. Which attempts fail is drawn from a numpy Generator seeded by
(seed, task, attempt), never by arrival order, so every concurrency sees the same failures and the same
results. A run's output is a pure function of the script and the patch.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import threading
import time
from collections import defaultdict
from typing import Any

import numpy as np

from builder.proofs.config import ProofConfig
from builder.proofs.harbor_runner import EnvironmentFailed, HarborTask


def _draw(seed: int, *parts: object) -> float:
    """A uniform [0, 1) draw that depends only on ``seed`` and ``parts``."""
    digest = hashlib.sha256(repr((seed, *parts)).encode()).digest()
    return float(np.random.default_rng(int.from_bytes(digest[:8], "big")).random())


class SimulatedBackend:
    """See the module docstring. ``stats`` counts starts, failures and the simulated seconds of work."""

    def __init__(self, *, start_s: float = 20.0, command_s: float = 2.0, failure_rate: float = 0.0,
                 die_rate: float = 0.0, seed: int = 0, time_scale: float = 1e-3) -> None:
        self.start_s, self.command_s = float(start_s), float(command_s)
        self.failure_rate, self.die_rate = float(failure_rate), float(die_rate)
        self.seed, self.time_scale = int(seed), float(time_scale)
        self._lock = threading.Lock()
        self._attempts: dict[str, int] = defaultdict(int)
        self._runs: dict[str, int] = defaultdict(int)
        self._ids = itertools.count(1)
        self.running: dict[str, str] = {}
        self.stats = {"starts": 0, "start_failures": 0, "deaths": 0, "runs": 0, "work_s": 0.0, "max_running": 0}

    def _spend(self, seconds: float) -> None:
        with self._lock:
            self.stats["work_s"] += seconds
        time.sleep(seconds * self.time_scale)

    def start(self, task: HarborTask) -> tuple[str, str, str]:
        with self._lock:
            attempt = self._attempts[task.key]
            self._attempts[task.key] += 1
            self.stats["starts"] += 1
        self._spend(self.start_s)
        if _draw(self.seed, "start", task.key, attempt) < self.failure_rate:
            with self._lock:
                self.stats["start_failures"] += 1
            raise EnvironmentFailed(f"simulated start failure ({task.key}, attempt {attempt + 1})")
        env = f"sim-{next(self._ids)}"
        with self._lock:
            self.running[env] = task.key
            self.stats["max_running"] = max(self.stats["max_running"], len(self.running))
        return env, hashlib.sha1(task.key.encode()).hexdigest(), task.base_commit

    def run(self, env: str, script: str, patch: str, config: ProofConfig) -> dict[str, Any]:
        with self._lock:
            key = self.running[env]
            n = self._runs[key]
            self._runs[key] += 1
            self.stats["runs"] += 1
        self._spend(self.command_s)
        if self.die_rate and _draw(self.seed, "die", key, n) < self.die_rate:
            with self._lock:
                self.stats["deaths"] += 1
            raise EnvironmentFailed(f"simulated environment death ({key})")
        tree = hashlib.sha1(f"{key}:{patch}".encode()).hexdigest()
        out = f"evidence of {hashlib.sha256(script.encode()).hexdigest()[:16]}\n".encode()
        return {"stdout": base64.b64encode(out).decode(), "stderr": "", "exit_code": 0, "timed_out": False,
                "duration_s": self.command_s, "tree_before": tree, "tree_after": tree}

    def stop(self, env: str) -> None:
        with self._lock:
            self.running.pop(env, None)


__all__ = ["SimulatedBackend"]
