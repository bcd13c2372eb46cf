"""Options of a Harbor export: light (no release I/O), so the CLI reads its defaults from here."""

from __future__ import annotations

import re
from dataclasses import dataclass

from swe_taskflow.errors import ConfigError


@dataclass(frozen=True)
class ExportOptions:
    """How a release condition becomes Harbor tasks; the CLI's defaults are these."""

    #: Harbor org of the task names (``<org>/<release>-<condition>-<instance>``).
    org: str = "swe-taskflow"
    #: Users inside the task environment: the agent never runs as root; the verifier does.
    agent_user: str = "agent"
    verifier_user: str = "root"
    #: Where the source repository lies in the task image.
    app_dir: str = "/app"
    #: Per-step limits in seconds: the agent's turn, the verifier, and the tests inside the verifier.
    agent_timeout_s: float = 3600.0
    verifier_timeout_s: float = 1800.0
    test_timeout_s: float = 1500.0
    #: Resources per task environment (None: Harbor's default).
    cpus: float | None = None
    memory_mb: int | None = None
    #: Ship the oracle's solutions; reset the carried checkpoint values between steps.
    with_solution: bool = True
    clean_checkpoint: bool = True

    def __post_init__(self) -> None:
        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", self.org):
            raise ConfigError("org must be a Harbor name (letters, digits, '.', '_', '-')", field="org",
                              actual=self.org)


__all__ = ["ExportOptions"]
