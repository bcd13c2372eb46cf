"""The classifier both classify stages share: loaded once per process, labels through the stage's item cache."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from builder import classify


@lru_cache(maxsize=4)
def classifier(name: str, device: str, batch_size: int):
    """Load a classifier once per process (both classify stages use it)."""
    try:  # the build has one progress display: no model-loading bars of its own
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except ImportError:
        pass
    return classify.load_classifier(name, device=device, batch_size=batch_size)


def label(ctx, texts: list[str]) -> tuple[list[Any], dict[str, Any]]:
    """Labels for ``texts`` through the stage's label cache (``items/labels``), in batches so progress
    moves; and the classifier's identity."""
    sec = ctx.recipe.classifier
    clf = classifier(sec.name, sec.device, sec.batch_size)
    uniq = list(dict.fromkeys(texts))
    ctx.progress.set_total(len(uniq))
    got: dict[str, Any] = {}
    step = max(1, sec.batch_size)
    for i in range(0, len(uniq), step):
        batch = uniq[i:i + step]
        got.update(zip(batch, classify.label_texts(batch, clf, cache=str(ctx.items.root))))
        ctx.progress.advance(len(batch))
    return [got[t] for t in texts], dict(clf.info)
