"""Intent classification: one of the paper's 16 intents per user message (Appendix A).

``load_classifier(name)`` picks a classifier by name; ``label_texts`` labels texts through the on-disk
label cache. See docs/classify.md.
"""

from __future__ import annotations

from typing import Sequence

from .base import Classifier, Prediction
from .cache import LabelCache, default_cache_dir
from .registry import KNOWN, load_classifier

__all__ = ["Classifier", "Prediction", "LabelCache", "KNOWN", "load_classifier", "label_texts",
           "default_cache_dir"]


CHUNK = 256


def _predict(classifier: Classifier, texts: list[str], progress: bool) -> list[Prediction]:
    if not progress or len(texts) <= CHUNK:
        return list(classifier.predict(texts))
    from swe_taskflow.progress import progress_bar

    out: list[Prediction] = []
    with progress_bar(len(texts), desc=f"classify ({classifier.info.get('name')})", unit="msgs") as advance:
        for start in range(0, len(texts), CHUNK):
            out.extend(classifier.predict(texts[start:start + CHUNK]))
            advance(n=min(CHUNK, len(texts) - start))
    return out


def label_texts(texts: Sequence[str], classifier: Classifier, *, cache: bool | str = True,
                progress: bool = False) -> list[Prediction]:
    """Labels for ``texts`` in order; with ``cache`` (True = default dir, or a directory path) labels already
    computed by the same classifier identity and prompt are reused and new ones stored.
    Identical texts are classified once. ``progress`` shows a bar on stderr (TTY only) for long runs."""
    texts = list(texts)
    store = LabelCache(classifier.info, None if cache is True else cache) if cache else None
    known: dict[str, Prediction] = {}
    missing: list[str] = []
    for t in dict.fromkeys(texts):
        p = store.get(t) if store is not None else None
        if p is None:
            missing.append(t)
        else:
            known[t] = p
    if missing:
        new = _predict(classifier, missing, progress)
        if store is not None:
            store.put_many(list(zip(missing, new)))
        known.update(zip(missing, new))
    return [known[t] for t in texts]
