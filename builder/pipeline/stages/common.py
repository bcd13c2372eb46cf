"""Small helpers the stages share: reading upstream outputs, the shared label cache, the classifier."""

from __future__ import annotations

import importlib
from functools import lru_cache
from pathlib import Path
from typing import Any

from swe_taskflow.errors import ConfigError
from swe_taskflow.jsonl import read_jsonl, read_records
from swe_taskflow.schema import QAItem, SplitResult, Task


def need_module(name: str, issue: str):
    """Import a module another part of the project provides, or say plainly which part is missing."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and (name == exc.name or name.startswith(exc.name + ".")):
            raise ConfigError(f"this stage needs {name} ({issue}), which is not installed in this checkout") from None
        raise


def read_tasks(stage_dir: Path) -> list[Task]:
    path = stage_dir / "tasks.jsonl"
    return [Task.from_dict(obj, where=str(path), row=n) for n, obj in read_jsonl(path)]


def read_splits(stage_dir: Path) -> list[SplitResult]:
    path = stage_dir / "splits.jsonl"
    return [SplitResult.from_dict(obj, where=str(path), row=n) for n, obj in read_jsonl(path)]


def read_pool(path: Path) -> list[QAItem]:
    return read_records(path, QAItem, unique="question_id")


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [obj for _, obj in read_jsonl(path)]


def label_cache_dir(ctx) -> Path:
    """One label cache per build cache, shared by both classify stages (labels are keyed by classifier identity)."""
    return ctx.cache.root / "items" / "labels"


@lru_cache(maxsize=4)
def classifier(name: str, device: str, batch_size: int):
    """Load a classifier once per process (both classify stages use it)."""
    classify = need_module("builder.classify", "issue 8, classification")
    try:  # the build has one progress display: no model-loading bars of its own
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except ImportError:
        pass
    return classify.load_classifier(name, device=device, batch_size=batch_size)


def label(ctx, texts: list[str]) -> list[Any]:
    """Labels for ``texts`` through the build's label cache, in batches so progress moves."""
    classify = need_module("builder.classify", "issue 8, classification")
    sec = ctx.recipe.classifier
    clf = classifier(sec.name, sec.device, sec.batch_size)
    uniq = list(dict.fromkeys(texts))
    ctx.progress.set_total(len(uniq))
    got: dict[str, Any] = {}
    step = max(1, sec.batch_size)
    for i in range(0, len(uniq), step):
        batch = uniq[i:i + step]
        got.update(zip(batch, classify.label_texts(batch, clf, cache=str(label_cache_dir(ctx)))))
        ctx.progress.advance(len(batch))
    ctx.summary["classifier"] = dict(clf.info)
    return [got[t] for t in texts]
