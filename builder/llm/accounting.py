"""Token and cost accounting per pipeline stage (thread-safe)."""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class StageUsage:
    """Totals of one stage. ``calls`` counts live calls; ``replayed`` counts store hits."""

    calls: int = 0
    replayed: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


class Ledger:
    """Adds up usage by stage; replayed responses count their recorded tokens but cost nothing."""

    def __init__(self, input_cost_per_mtok: float = 0.0, output_cost_per_mtok: float = 0.0) -> None:
        self.input_cost = input_cost_per_mtok
        self.output_cost = output_cost_per_mtok
        self._stages: dict[str, StageUsage] = {}
        self._lock = threading.Lock()

    def add(self, stage: str, prompt_tokens: int, completion_tokens: int, *, replayed: bool = False,
            retries: int = 0) -> None:
        with self._lock:
            u = self._stages.setdefault(stage, StageUsage())
            u.prompt_tokens += prompt_tokens
            u.completion_tokens += completion_tokens
            u.retries += retries
            if replayed:
                u.replayed += 1
            else:
                u.calls += 1
                u.cost_usd += (prompt_tokens * self.input_cost + completion_tokens * self.output_cost) / 1e6

    def stage(self, name: str) -> StageUsage:
        with self._lock:
            return StageUsage(**asdict(self._stages.get(name, StageUsage())))

    def to_dict(self) -> dict[str, Any]:
        """``{stage: {calls, replayed, retries, prompt_tokens, completion_tokens, cost_usd}}``, stages sorted."""
        with self._lock:
            return {k: asdict(v) for k, v in sorted(self._stages.items())}
