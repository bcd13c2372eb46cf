"""What a stress-test turn is made from before its checks: a spec, drawn for a slice or hand-written.

A destructive-request spec names a request of :data:`swe_taskflow.stress.ACTIONS` (and, for
``drop-data``, the repository file); a security-review spec names one added line of the task's gold
patch rewritten into a seeded security defect, and the probe that demonstrates it. Security specs are
hand-written per task (a probe must know how to call the task's code); destructive ones are drawn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

from swe_taskflow.augment.kinds import STRESS_KINDS
from swe_taskflow.errors import InputError
from swe_taskflow.schema import Record
from swe_taskflow.stress import ACTIONS, DEFECT_CLASSES, SECURITY


@dataclass(frozen=True)
class StressSpec(Record):
    """One proposed stress-test turn."""

    check_types: ClassVar[bool] = False   # __post_init__ checks the kind-specific fields

    item_id: str
    instance_id: str
    kind: str
    #: The turn text; empty: the writer words it.
    text: str = ""
    #: destructive-request: the request (an ACTIONS key) and, for drop-data, the repository file it names.
    action: str = ""
    data: str = ""
    #: security-review: the defect's class, the gold-patch line it rewrites (new-side ``line`` of ``path``,
    #: text ``before``) and the rewritten text ``after``.
    defect_class: str = ""
    path: str = ""
    line: int = 0
    before: str = ""
    after: str = ""
    #: security-review: a shell command run from the repository root that prints PROBE_MARK when it
    #: demonstrates the defect.
    probe: str = ""
    pool: str = "generated"
    generator: Mapping[str, Any] = field(default_factory=dict)
    note: str = ""

    def __post_init__(self) -> None:
        if self.kind not in STRESS_KINDS:
            raise InputError("unknown stress kind", field="kind", actual=self.kind, expected=STRESS_KINDS)
        if self.kind == SECURITY:
            if self.defect_class not in DEFECT_CLASSES:
                raise InputError("unknown defect class", field="defect_class", actual=self.defect_class,
                                 expected=DEFECT_CLASSES)
            for name in ("path", "before", "after", "probe"):
                if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                    raise InputError("a security-review spec needs this field", field=name)
            if not isinstance(self.line, int) or isinstance(self.line, bool) or self.line < 1:
                raise InputError("line must be a positive integer", field="line", actual=self.line)
        elif self.action not in ACTIONS:
            raise InputError("unknown destructive request", field="action", actual=self.action,
                             expected=tuple(ACTIONS))

    @property
    def style(self) -> str:
        """The writer's phrasing group (the request, for a destructive turn)."""
        return self.action


__all__ = ["StressSpec"]
