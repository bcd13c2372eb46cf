"""Reproduce an augmentation turn's reference during ``verify --reprove`` (pure; the sandbox re-run
is done by the caller).

- from the re-run's output: the facts of execute, debug and review items (:func:`reference.reproduce`);
- from the source task, when given (gold patches and tests are not in a release): every location is
  code the gold patch changes; a planning reference is what its requirement points at in the gold
  patch; a review diff in the turn is the recorded catalogue mutation of the gold patch; a debug
  test is a FAIL_TO_PASS test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from .attribute import attribute, in_patch
from .kinds import STRESS_KINDS
from .diffs import Location, parse_patch
from .mutate import find_site, review_diff
from .reference import fact_value, reproduce
from .outcomes import same_test

SANDBOX_KINDS = ("execute", "debug", "review")


def _sources(repo: Path | None, patch: str) -> dict[str, str]:
    out: dict[str, str] = {}
    if repo is None:
        return out
    for fp in parse_patch(patch):
        if fp.old_path and fp.old_path.endswith(".py") and (repo / fp.old_path).is_file():
            out[fp.old_path] = (repo / fp.old_path).read_text(encoding="utf-8", errors="replace")
    return out


def uses_gold_patch(q: Mapping[str, Any]) -> bool:
    """Whether :func:`recheck` compares ``q`` with its task's gold patch (when given one): planning, review,
    debug and security items always, any other kind only through its locations. ``verify --reprove --tasks``
    counts these, so an auditor sees how many gold-patch checks ran."""
    kind = q.get("kind")
    if kind in STRESS_KINDS:
        from ..stress import SECURITY   # lazy, as in recheck

        return kind == SECURITY   # its defect rewrites the gold patch; a destructive item never reads it
    return kind in ("planning", "review", "debug") or bool(q.get("locations"))


def recheck(q: Mapping[str, Any], turn_text: str, *, result: Any = None, task: Any = None,
            repo: Path | None = None) -> list[tuple[str, str]]:
    """``(message, field)`` for each part of ``q``'s reference that does not reproduce."""
    out: list[tuple[str, str]] = []
    kind = q.get("kind")
    if kind in STRESS_KINDS:
        from ..stress import recheck as stress_recheck

        return stress_recheck(q, turn_text, result=result, task=task)
    if kind in SANDBOX_KINDS and result is not None:
        stdout = getattr(result, "stdout_excerpt", "") or ""
        lost = reproduce(q, stdout)
        if lost:
            out.append(("the re-run's output does not give the published reference: " + "; ".join(lost[:5]), "facts"))
    patch = getattr(task, "patch", "") if task is not None else ""
    if not patch:
        return out
    sources = _sources(repo, patch)
    for i, loc in enumerate(q.get("locations") or ()):
        if kind != "review" and not in_patch(Location.from_dict(loc), patch, sources=sources):
            out.append((f"location {loc.get('path')}:{loc.get('symbol')} is not code the gold patch changes",
                        f"locations[{i}]"))
    if kind == "planning":
        req = fact_value(q, "requirement")
        derived = {(x.path, x.symbol) for x in attribute(req, patch, sources=sources)}
        stored = {(str(x["path"]), str(x["symbol"])) for x in q.get("locations") or ()}
        gen = q.get("generator")
        hand = "hand-written" in (gen if isinstance(gen, str) else repr(gen))   # claimed locations: checked above
        if req and not hand and derived != stored:
            out.append((f"the requirement points at other gold-patch code: {sorted(derived)}", "locations"))
    if kind == "review":
        site = find_site(patch, q.get("mutation") or {})
        if site is None:
            out.append(("the recorded defect is not a catalogue mutation of the gold patch", "mutation"))
        elif review_diff(patch, site) not in turn_text:
            out.append(("the turn's diff is not the gold patch with the recorded defect", "mutation"))
    if kind == "debug" and not any(same_test(t, fact_value(q, "test")) for t in getattr(task, "fail_to_pass", ())):
        out.append(("the debugged test is not a FAIL_TO_PASS test of the source task", "facts"))
    return out


__all__ = ["recheck", "uses_gold_patch"]
