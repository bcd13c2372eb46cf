"""Propose augmentation specs for a task: which commands, tests, requirements and seeded defects.

Deterministic given the task, its split and the seed: execute runs the task's test command; debug
asks about the task's FAIL_TO_PASS tests that the agent's checkout holds as they fail (none in a file the
hidden test patch adds or changes), in their given order; planning takes, for each later issue
turn, the requirement item that points at the most gold-patch code; review tries catalogue
mutations of the gold patch in a seeded order (the checks keep the first one the tests catch, and
record the surviving ones as rejected). Where a kind cannot be proposed, :func:`propose` says why.

:func:`augment_tasks` (the ``augment`` stage and CLI call it) generates and checks the items of many tasks:
every proposed or hand-written spec ends as an item with a status (accepted, rejected, error) and a reason;
review specs are tried in their seeded order until ``per_kind`` are accepted (the rest are counted as not
needed). What could not be proposed for a task is reported per kind with why.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from swe_taskflow.turns import mutate as mut
from swe_taskflow.turns.attribute import attribute
from swe_taskflow.turns.kinds import AUGMENT_KINDS
from swe_taskflow.turns.visible import hidden_test_file
from swe_taskflow.schema import QAItem, SplitResult, Task

from ..split.structural import _items
from .checks import AugmentSpec, TaskContext


@dataclass(frozen=True)
class ProposeConfig:
    """How many specs of each kind a task gets."""

    kinds: tuple[str, ...] = AUGMENT_KINDS
    """Kinds to propose (any of execute, debug, planning, review)."""
    per_kind: int = 2
    """At most this many accepted items per kind and task (review: mutations tried until one is caught,
    at most ``review_attempts``)."""
    review_attempts: int = 4
    """Seeded mutations tried per task before review gives up."""
    execute_styles: tuple[str, ...] = ("counts",)
    """What execute turns ask about the test command's run."""
    seed: int = 0


def _rng(seed: int, instance_id: str) -> np.random.Generator:
    h = int.from_bytes(hashlib.sha256(instance_id.encode("utf-8")).digest()[:8], "big")
    return np.random.default_rng([int(seed), h, 16])


def _items_of(part: str) -> list[str]:
    """A split part's requirement items (an interface section is a specification, not a requirement)."""
    part = part.split("New interfaces introduced:\n", 1)[0].replace("Requirements:\n", "\n\n")
    return [x.strip() for x in _items(part) if len(x.strip()) >= 20] if part.strip() else []


def planning_requirements(ctx: TaskContext, limit: int) -> list[tuple[int, str]]:
    """(part, requirement item) pairs: per later split part, the item pointing at the most gold-patch code."""
    out = []
    for p in range(len(ctx.parts) - 1, 0, -1):           # later turns first: the plan comes well ahead
        best: tuple[int, str] | None = None
        for item in _items_of(ctx.parts[p]):
            n = len(attribute(item, ctx.task.patch, sources=ctx.sources))
            if n and (best is None or n > best[0]):
                best = (n, item)
        if best:
            out.append((p, best[1]))
        if len(out) >= limit:
            break
    return sorted(out)


Proposer = Callable[[TaskContext, "ProposeConfig", dict[str, Any]], tuple[list[AugmentSpec], str]]


def propose_execute(ctx: TaskContext, config: ProposeConfig, gen: dict[str, Any]) -> tuple[list[AugmentSpec], str]:
    """One execute spec per configured style: the task's test command, run in the sandbox."""
    task = ctx.task
    if why := ctx.no_sandbox_reason():
        return [], why
    return [AugmentSpec(f"{task.instance_id}::execute-{style}", task.instance_id, "execute", command=task.test_command,
                        style=style, generator=gen) for style in config.execute_styles[:config.per_kind]], ""


def propose_debug(ctx: TaskContext, config: ProposeConfig, gen: dict[str, Any]) -> tuple[list[AugmentSpec], str]:
    """The FAIL_TO_PASS tests the agent's checkout holds as they fail, in their given order."""
    task = ctx.task
    if (why := ctx.no_sandbox_reason()) or not task.fail_to_pass:
        return [], why or "the task has no FAIL_TO_PASS test"
    seen = [t for t in task.fail_to_pass if hidden_test_file(t, task.test_patch) is None]
    why = "" if seen else ("every FAIL_TO_PASS test sits in a file the hidden test patch adds or changes: the "
                           "agent could not see it fail")
    return [AugmentSpec(f"{task.instance_id}::debug-{i}", task.instance_id, "debug", test=test, generator=gen)
            for i, test in enumerate(seen[:config.per_kind])], why


def propose_planning(ctx: TaskContext, config: ProposeConfig, gen: dict[str, Any]) -> tuple[list[AugmentSpec], str]:
    """Per later issue turn, the requirement item pointing at the most gold-patch code."""
    if len(ctx.parts) < 2 or not ctx.task.patch:
        return [], "the task has no ok split" if len(ctx.parts) < 2 else "the task has no gold patch"
    reqs = planning_requirements(ctx, config.per_kind)
    iid = ctx.task.instance_id
    return ([AugmentSpec(f"{iid}::planning-{part}", iid, "planning", requirement_part=part, requirement=req,
                         generator=gen) for part, req in reqs],
            "" if reqs else "no requirement item of a later turn points at gold-patch code")


def propose_review(ctx: TaskContext, config: ProposeConfig, gen: dict[str, Any]) -> tuple[list[AugmentSpec], str]:
    """Catalogue mutations of the gold patch in a seeded order (at most ``review_attempts``)."""
    task = ctx.task
    sites = mut.sites(task.patch) if task.patch else []
    if (why := ctx.no_sandbox_reason()) or not sites:
        return [], why or ("the task has no gold patch" if not task.patch else
                           "no catalogue mutation applies to the gold patch")
    order = _rng(config.seed, task.instance_id).permutation(len(sites))[:config.review_attempts]
    return [AugmentSpec(f"{task.instance_id}::review-{n}", task.instance_id, "review", mutation=sites[int(i)].to_dict(),
                        generator=gen) for n, i in enumerate(order)], ""


def propose(ctx: TaskContext, config: ProposeConfig, proposers: Mapping[str, Proposer]) -> tuple[list[AugmentSpec],
                                                                                             dict[str, str]]:
    """Specs for ``ctx.task`` and, per kind not proposed, why (``{"review": "the task has no gold patch"}``).
    ``proposers``: each kind's proposal function (``builder.turns.registry.PROPOSERS``; handed in, so this loop
    never imports the table)."""
    gen = {"name": "propose", "provenance": "generated", "seed": config.seed}
    specs: list[AugmentSpec] = []
    why: dict[str, str] = {}
    for kind in config.kinds:
        got, reason = proposers[kind](ctx, config, gen)
        specs += got
        if reason:
            why[kind] = reason
    return specs, why


def augment_tasks(tasks: Sequence[Task], splits: Mapping[str, SplitResult], *, writer,
                  realize: Callable[[AugmentSpec, TaskContext, Any], QAItem], proposers: Mapping[str, Proposer],
                  sandbox=None,
                  repos: Mapping[str, Path] | None = None, images: Mapping[str, str] | None = None,
                  config: ProposeConfig = ProposeConfig(), hand_specs: Iterable[AugmentSpec] = (),
                  progress: Callable[[int], None] | None = None) -> tuple[list[QAItem], dict[str, Any]]:
    """Items for every task (generated, then hand-written ones), and a summary of what happened.

    ``realize``: the checks of a spec, ``proposers`` each kind's proposals (``builder.turns.registry``; handed in,
    so this module never imports the table that imports its checks)."""
    repos = dict(repos or {})
    by_task: dict[str, list[AugmentSpec]] = {}
    for s in hand_specs:
        by_task.setdefault(s.instance_id, []).append(s)
    known = {t.instance_id for t in tasks}
    items: list[QAItem] = []
    not_proposed: dict[str, Counter] = {}
    unknown = [s.item_id for specs in by_task.values() for s in specs if s.instance_id not in known]
    skipped = Counter()
    for task in tasks:
        split = splits.get(task.instance_id)
        parts = tuple(split.parts) if split is not None and split.status == "ok" else ()
        repo = repos.get(task.instance_id)
        ctx = TaskContext(task, parts, repo, sandbox if repo is not None else None,
                          image=(images or {}).get(task.instance_id))
        specs, why = propose(ctx, config, proposers)
        for kind, reason in why.items():
            not_proposed.setdefault(kind, Counter())[reason] += 1
        accepted = Counter()
        try:
            for spec in specs + by_task.get(task.instance_id, []):
                generated = spec.pool == "generated"
                if generated and accepted[spec.kind] >= config.per_kind:
                    skipped[spec.kind] += 1
                    continue
                item = realize(spec, ctx, writer)
                items.append(item)
                if generated and item.status == "accepted":
                    accepted[spec.kind] += 1
        finally:   # the task's checks are done: a sandbox that keeps an environment per task stops it
            if callable(release := getattr(sandbox, "release", None)):
                release()
        if progress is not None:
            progress(1)
    summary = {
        "items": len(items),
        "by_kind_status": {k: dict(sorted(Counter(i.status for i in items if i.kind == k).items()))
                           for k in sorted({i.kind for i in items})},
        "rejected": [{"question_id": i.question_id, "kind": i.kind, "pool": i.pool, "status": i.status,
                      "reason": i.reason} for i in items if i.status != "accepted"],
        "not_proposed": {k: dict(sorted(v.items())) for k, v in sorted(not_proposed.items())},
        "not_tried_after_acceptance": dict(sorted(skipped.items())),
        "unknown_task_specs": unknown,
        "sandbox": getattr(sandbox, "info", None),
    }
    return items, summary


__all__ = ["ProposeConfig", "Proposer", "propose", "propose_execute", "propose_debug", "propose_planning",
           "propose_review", "planning_requirements", "augment_tasks"]
