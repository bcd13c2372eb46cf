"""Build every stress-test slice of a recipe: a seeded draw of tasks, then one checked turn per task.

Decided before selection (paper Appendix C, step 7): a slice's tasks are drawn with
``numpy.random.default_rng(seed)`` from the tasks where its kind can be checked, in that order, until
``tasks`` of them hold an accepted item; nothing here reads a Task Flow or a target. A destructive
request is drawn per task among the requests that apply to it; a security defect comes from the
task's hand-written specs, in file order. Every spec of the spec files is checked and reported, used
by a slice or not, and every task not eligible is counted with why.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from swe_taskflow.schema import QAItem, SplitResult, Task
from swe_taskflow.turns.stress import ACTIONS, DATA_SUFFIXES, DESTRUCTIVE, SECURITY, split_name

from .checks import TaskContext
from .stress_checks import StressSpec

RULE = ("drawn before selection with numpy.random.default_rng(seed) from the tasks where the slice's kind can be "
        "checked (a checkout of the repository and a sandbox; for security-review a hand-written defect with its "
        "probe), in the draw's order until the slice holds its task count of accepted items")


def data_files(repo: Path) -> list[str]:
    """Repository files a drop-data request may name: data (DATA_SUFFIXES) outside tests and .git, sorted."""
    out = []
    for top, dirs, files in os.walk(repo):
        dirs[:] = sorted(d for d in dirs if d not in (".git", "node_modules") and "test" not in d.lower())
        out += [os.path.relpath(os.path.join(top, f), repo) for f in files if f.lower().endswith(DATA_SUFFIXES)]
    return sorted(out)


def _actions(ctx: TaskContext, data: list[str]) -> list[str]:
    """The requests that apply to a task: a reset needs an earlier change, drop-data a data file (``data``)."""
    out = [a for a in ACTIONS if a != "drop-data" and (a != "reset-hard" or ctx.task.patch)]
    return out + (["drop-data"] if data else [])


def _ineligible(kind: str, ctx: TaskContext, specs: Sequence[StressSpec]) -> str:
    if ctx.task.status != "ok":
        return "task not ok"
    no_defect = kind == SECURITY and not specs
    return ctx.no_sandbox_reason(tests=False) or (
        "no security defect written for the task (a probe is written per task)" if no_defect else "")


class SliceBuilder:
    """Checks specs once each (a spec shared by two slices is run once) and keeps every item."""

    def __init__(self, tasks: Sequence[Task], splits: Mapping[str, SplitResult], *, writer, sandbox,
                 repos: Mapping[str, Path], images: Mapping[str, str], hand_specs: Iterable[StressSpec],
                 realize: Callable[[StressSpec, TaskContext, Any], QAItem]) -> None:
        self.tasks = {t.instance_id: t for t in tasks}
        self.writer = writer
        self.realize = realize
        self.items: dict[str, QAItem] = {}
        self.hand = list(hand_specs)
        self.ctx: dict[str, TaskContext] = {}
        for t in tasks:
            s = splits.get(t.instance_id)
            parts = tuple(s.parts) if s is not None and s.status == "ok" else ()
            repo = repos.get(t.instance_id)
            self.ctx[t.instance_id] = TaskContext(t, parts, repo, sandbox if repo is not None else None,
                                                  image=images.get(t.instance_id))

    def check(self, spec: StressSpec) -> QAItem:
        if spec.item_id not in self.items:
            ctx = self.ctx[spec.instance_id]
            self.items[spec.item_id] = self.realize(spec, ctx, self.writer)
            release = getattr(ctx.sandbox, "release", None)
            if release is not None:   # harbor: the task's environment is stopped until its next check
                release()
        return self.items[spec.item_id]

    def build(self, sl) -> dict[str, Any]:
        """One slice: its draw, the items tried, the rows chosen (instance id, question id)."""
        kind = sl.kind
        by_task = {}
        for s in self.hand:
            if s.kind == kind and s.instance_id in self.tasks:
                by_task.setdefault(s.instance_id, []).append(s)
        why = Counter()
        eligible = []
        for iid in sorted(self.tasks):
            reason = _ineligible(kind, self.ctx[iid], by_task.get(iid, []))
            if reason:
                why[reason] += 1
            else:
                eligible.append(iid)
        rng = np.random.default_rng(sl.seed)
        order = [eligible[i] for i in rng.permutation(len(eligible))]
        chosen, tried = [], []
        for iid in order:
            if len(chosen) >= sl.tasks:
                break
            if kind == DESTRUCTIVE:
                files = data_files(self.ctx[iid].repo)
                options = _actions(self.ctx[iid], files)
                act = options[int(rng.integers(len(options)))]
                data = files[0] if act == "drop-data" else ""
                specs = [StressSpec(f"{iid}::stress::{sl.name}::{act}", iid, kind, action=act, data=data,
                                    generator={"name": "stress-draw", "provenance": "generated", "seed": sl.seed})]
            else:
                specs = by_task[iid]
            for spec in specs:
                item = self.check(spec)
                tried.append(item.question_id)
                if item.status == "accepted":
                    chosen.append({"instance_id": iid, "question_id": item.question_id})
                    break
        return {"name": sl.name, "split": split_name(sl.name), "kind": kind, "tasks_asked": sl.tasks,
                "seed": sl.seed, "eligible": len(eligible), "not_eligible": dict(sorted(why.items())),
                "draw": order, "tried": tried, "chosen": chosen, "rule": RULE}


def build_slices(slices, tasks: Sequence[Task], splits: Mapping[str, SplitResult], *, writer,
                 realize: Callable[[StressSpec, TaskContext, Any], QAItem], sandbox=None,
                 repos: Mapping[str, Path] | None = None, images: Mapping[str, str] | None = None,
                 hand_specs: Iterable[StressSpec] = (),
                 progress: Callable[[int], None] | None = None
                 ) -> tuple[list[QAItem], list[dict[str, Any]], list[str]]:
    """Every item checked (slices' draws, then the spec files' remaining rows), each slice's record, and the
    spec ids that name a task the source does not hold. ``realize``: the checks of a spec
    (``builder.turns.registry.realize``, handed in by the stage)."""
    b = SliceBuilder(tasks, splits, writer=writer, sandbox=sandbox, repos=dict(repos or {}),
                     images=dict(images or {}), hand_specs=hand_specs, realize=realize)
    records = []
    for sl in slices:
        records.append(b.build(sl))
        if progress is not None:
            progress(1)
    unknown = [s.item_id for s in b.hand if s.instance_id not in b.tasks]
    for s in b.hand:   # every hand-written spec ends with a status, used by a slice or not
        if s.instance_id in b.tasks:
            b.check(s)
    items = sorted(b.items.values(), key=lambda q: q.question_id)
    return items, records, unknown


__all__ = ["build_slices", "SliceBuilder", "data_files", "RULE"]
