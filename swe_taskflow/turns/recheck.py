"""Reproduce an augmentation turn's reference during ``verify --reprove`` (pure; the sandbox re-run
is done by the caller). One function per kind; :mod:`swe_taskflow.turns.registry` dispatches by kind.

- from the re-run's output: the facts of every kind that runs in the sandbox (``KINDS[k].sandbox``:
  execute, debug and review; :func:`reference.reproduce`);
- from the source task, when given (gold patches and tests are not in a release): every location is
  code the gold patch changes; a planning reference is what its requirement points at in the gold
  patch; a review diff in the turn is the recorded catalogue mutation of the gold patch; a debug
  test is a FAIL_TO_PASS test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

from .attribute import attribute, in_patch
from .diffs import Location, parse_patch
from .kinds import kind as kind_of
from .mutate import find_site, review_diff
from .reference import fact_value, reproduce
from .outcomes import same_test

Findings = list[tuple[str, str]]
#: A kind's own part of the re-check: (item, turn text, gold patch, base sources, source task) -> findings.
_Specific = Callable[[Mapping[str, Any], str, str, Mapping[str, str], Any], Findings]


def _sources(repo: Path | None, patch: str) -> dict[str, str]:
    out: dict[str, str] = {}
    if repo is None:
        return out
    for fp in parse_patch(patch):
        if fp.old_path and fp.old_path.endswith(".py") and (repo / fp.old_path).is_file():
            out[fp.old_path] = (repo / fp.old_path).read_text(encoding="utf-8", errors="replace")
    return out


def _rechecker(specific: _Specific | None = None, *, locations: bool = True):
    """A kind's re-check: the re-run's facts (a sandbox kind), then, with the source task's gold patch, its
    locations in the patch (``locations``) and the kind's ``specific`` part."""
    def recheck(q: Mapping[str, Any], turn_text: str, *, result: Any = None, task: Any = None,
                repo: Path | None = None) -> Findings:
        """``(message, field)`` for each part of ``q``'s reference that does not reproduce."""
        out: Findings = []
        if kind_of(str(q.get("kind"))).sandbox and result is not None:
            stdout = getattr(result, "stdout_excerpt", "") or ""
            lost = reproduce(q, stdout)
            if lost:
                out.append(("the re-run's output does not give the published reference: " + "; ".join(lost[:5]),
                            "facts"))
        patch = getattr(task, "patch", "") if task is not None else ""
        if not patch:
            return out
        sources = _sources(repo, patch)
        if locations:
            for i, loc in enumerate(q.get("locations") or ()):
                if not in_patch(Location.from_dict(loc), patch, sources=sources):
                    out.append((f"location {loc.get('path')}:{loc.get('symbol')} is not code the gold patch changes",
                                f"locations[{i}]"))
        if specific is not None:
            out += specific(q, turn_text, patch, sources, task)
        return out
    return recheck


def _planning(q: Mapping[str, Any], turn_text: str, patch: str, sources: Mapping[str, str], task: Any) -> Findings:
    req = fact_value(q, "requirement")
    derived = {(x.path, x.symbol) for x in attribute(req, patch, sources=dict(sources))}
    stored = {(str(x["path"]), str(x["symbol"])) for x in q.get("locations") or ()}
    gen = q.get("generator")
    hand = "hand-written" in (gen if isinstance(gen, str) else repr(gen))   # claimed locations: checked above
    if req and not hand and derived != stored:
        return [(f"the requirement points at other gold-patch code: {sorted(derived)}", "locations")]
    return []


def _review(q: Mapping[str, Any], turn_text: str, patch: str, sources: Mapping[str, str], task: Any) -> Findings:
    site = find_site(patch, q.get("mutation") or {})
    if site is None:
        return [("the recorded defect is not a catalogue mutation of the gold patch", "mutation")]
    if review_diff(patch, site) not in turn_text:
        return [("the turn's diff is not the gold patch with the recorded defect", "mutation")]
    return []


def _debug(q: Mapping[str, Any], turn_text: str, patch: str, sources: Mapping[str, str], task: Any) -> Findings:
    if not any(same_test(t, fact_value(q, "test")) for t in getattr(task, "fail_to_pass", ())):
        return [("the debugged test is not a FAIL_TO_PASS test of the source task", "facts")]
    return []


recheck_execute = _rechecker()
recheck_debug = _rechecker(_debug)
recheck_planning = _rechecker(_planning)
#: A review item's location is the seeded defect's line (checked as the recorded mutation), not gold-patch code.
recheck_review = _rechecker(_review, locations=False)


__all__ = ["recheck_execute", "recheck_debug", "recheck_planning", "recheck_review"]
