"""Generate and check the augmentation items of many tasks (the ``augment`` stage and CLI call this).

Every proposed or hand-written spec ends as an item with a status (accepted, rejected, error) and a
reason; review specs are tried in their seeded order until ``per_kind`` are accepted (the rest are
counted as not needed). What could not be proposed for a task is reported per kind with why.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from swe_taskflow.schema import QAItem, SplitResult, Task

from .checks import TaskContext, realize
from .propose import ProposeConfig, propose
from .spec import AugmentSpec


def augment_tasks(tasks: Sequence[Task], splits: Mapping[str, SplitResult], *, writer, sandbox=None,
                  repos: Mapping[str, Path] | None = None, images: Mapping[str, str] | None = None,
                  config: ProposeConfig = ProposeConfig(), hand_specs: Iterable[AugmentSpec] = (),
                  progress: Callable[[int], None] | None = None) -> tuple[list[QAItem], dict[str, Any]]:
    """Items for every task (generated, then hand-written ones), and a summary of what happened."""
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
        specs, why = propose(ctx, config)
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


__all__ = ["augment_tasks"]
