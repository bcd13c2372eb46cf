"""The creation-time check of every checked answer-turn kind, one table keyed by kind.

Both the ``augment`` and the ``stress`` stage realize their specs through :func:`realize`: a kind's row
names its check (``check(spec, ctx, writer, record) -> what it derived``, in ``builder.turns.checks``
or ``builder.turns.stress_checks``) and the item fields known before the check runs. The table sits above
both check modules, and the stages hand :func:`realize` to the loops that run the specs
(``augment_tasks``, ``build_slices``), so no check module imports it back. A new kind adds its row
here, its check and its spec fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Mapping

from swe_taskflow.turns.kinds import AUGMENT_KINDS, KINDS
from swe_taskflow.schema import QAItem

from . import checks as aug, new_test
from .propose import Proposer, propose_debug, propose_execute, propose_planning, propose_review
from . import stress_checks as st

Check = Callable[..., Mapping[str, Any]]


def _no_fields(spec: Any) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class TurnCheck:
    """One kind's creation-time check and the item fields its spec gives before the check runs."""

    check: Check
    fields: Callable[[Any], dict[str, Any]] = _no_fields
    #: ``(ctx, config, generator) -> (specs, why none)``: the augment stage's proposals for one task; None: the
    #: kind is only drawn by the stress stage's slices.
    propose: Proposer | None = None


CHECKS: Mapping[str, TurnCheck] = MappingProxyType({
    "execute": TurnCheck(aug.check_execute, aug.item_fields, propose_execute),
    "debug": TurnCheck(aug.check_debug, aug.item_fields, propose_debug),
    "planning": TurnCheck(aug.check_planning, aug.item_fields, propose_planning),
    "review": TurnCheck(aug.check_review, aug.item_fields, propose_review),
    "tests": TurnCheck(new_test.check_tests, aug.item_fields, new_test.propose_tests),
    "destructive-request": TurnCheck(st.check_destructive),
    "security-review": TurnCheck(st.check_security),
})
assert tuple(CHECKS) == tuple(k for k in KINDS if k != "qa"), "every answer kind but qa has its check, in KINDS' order"
#: Each augmentation kind's proposals (``augment_tasks(..., proposers=PROPOSERS)``).
PROPOSERS: Mapping[str, Proposer] = MappingProxyType({k: r.propose for k, r in CHECKS.items() if r.propose})
assert set(PROPOSERS) == set(AUGMENT_KINDS), "every augmentation kind, and only those, is proposed"


def realize(spec: Any, ctx: aug.TaskContext, writer: Any) -> QAItem:
    """Run ``spec``'s checks; the item is ``accepted`` with its reference, or ``rejected``/``error`` with why."""
    row = CHECKS[spec.kind]
    return aug.checked_item(spec, ctx, writer, row.check, **row.fields(spec))


__all__ = ["TurnCheck", "CHECKS", "PROPOSERS", "realize"]
