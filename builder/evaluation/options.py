"""Options of a Harbor export: light (no release I/O), so the CLI reads its defaults from here."""

from __future__ import annotations

import re
from dataclasses import dataclass

from swe_taskflow.errors import ConfigError


#: Where each source benchmark's images hold the task's repository: SWE-Bench Pro's (and the project's own
#: example task's) at /app, SWE-bench's (Verified, Lite: ``swebench/sweb.eval.*``) at /testbed.
REPO_DIRS = {"swe-bench-pro": "/app", "swe-bench-verified": "/testbed", "swe-bench-lite": "/testbed",
             "swe-bench": "/testbed"}
DEFAULT_REPO_DIR = "/app"


@dataclass(frozen=True)
class ExportOptions:
    """How a release condition becomes Harbor tasks; the CLI's defaults are these."""

    #: Harbor org of the task names (``<org>/<release>-<condition>-<instance>``).
    org: str = "swe-taskflow"
    #: Users inside the task environment: the agent never runs as root; the verifier does.
    agent_user: str = "agent"
    verifier_user: str = "root"
    #: Where the source repository lies in the task image; empty: where the row's source benchmark puts it
    #: (:data:`REPO_DIRS`).
    app_dir: str = ""
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

    def repo_dir(self, source: str) -> str:
        """The repository's folder in the image of a task from ``source``."""
        return self.app_dir or REPO_DIRS.get(source, DEFAULT_REPO_DIR)

    def __post_init__(self) -> None:
        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", self.org):
            raise ConfigError("org must be a Harbor name (letters, digits, '.', '_', '-')", field="org",
                              actual=self.org)
        check_agent_user(self.agent_user)
        if self.app_dir and (not self.app_dir.startswith("/") or any(c in self.app_dir for c in "\n\0\"'$`")):
            raise ConfigError("app_dir must be an absolute path in the image, without quotes or control characters",
                              field="app_dir", actual=self.app_dir)


#: A user name or a numeric uid, optionally with ``:group`` (as ``docker exec --user`` takes it).
_USER_RE = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_.-]{0,31}|[0-9]{1,10})(?::(?:[A-Za-z_][A-Za-z0-9_.-]{0,31}|[0-9]{1,10}))?$")


def check_agent_user(user: object) -> str:
    """The agent's user when it is a plain name or uid that is not root; a ConfigError naming ``--agent-user``.

    The agent must never run as root: root could read the verifier's snapshot and carried checkpoint
    values, and change files the checkpoint relies on.
    """
    if not isinstance(user, str) or not _USER_RE.match(user):
        raise ConfigError("agent user must be a user name or uid (optionally :group)", field="--agent-user",
                          actual=user)
    name = user.split(":", 1)[0]
    if name == "root" or (name.isdigit() and int(name) == 0):
        raise ConfigError("the agent must not run as root (uid 0)", field="--agent-user", actual=user,
                          hint="use the image's unprivileged user (the example's image has 'agent')")
    return user


__all__ = ["ExportOptions", "check_agent_user", "REPO_DIRS", "DEFAULT_REPO_DIR"]
