"""The classifier both classify stages share: named once per process, loaded only when a label is missing from
the stage's item cache."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ... import classify


@lru_cache(maxsize=4)
def classifier(name: str, device: str, batch_size: int, cache_dir: str):
    """One classifier per process (both classify stages use it); its model loads on its first missing label."""
    try:  # the build has one progress display: no model-loading bars of its own
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except ImportError:
        pass
    return classify.load_classifier(name, device=device, batch_size=batch_size, lazy=cache_dir)


def label(ctx, texts: list[str]) -> tuple[list[Any], dict[str, Any]]:
    """Labels for ``texts`` through the stage's label cache (``items/labels``), the stage's progress moving as
    they come; and the classifier's identity."""
    sec = ctx.recipe.classifier
    clf = classifier(sec.name, sec.device, sec.batch_size, str(ctx.items.root))
    ctx.progress.set_total(len(set(texts)))
    preds = classify.label_texts(texts, clf, cache=str(ctx.items.root), progress=ctx.progress.advance)
    return preds, dict(clf.info)
