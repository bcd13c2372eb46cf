"""Intent classification: one of the paper's 16 intents per user message (Appendix A).

``load_classifier(name)`` picks a classifier by name; ``label_texts`` labels texts through the on-disk
label cache, keyed by (classifier name, version/revision, prompt hash, message sha256). One JSON file per key
prefix shard would be overkill: labels are tiny, so each classifier identity gets one JSONL file
(``<dir>/<identity-hash>.jsonl``) that is appended to and read into a dict once. Re-running a corpus then
costs one file read. See docs/classify.md.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Mapping, Sequence

from .base import Classifier, Prediction
from .registry import KNOWN, load_classifier

__all__ = ["Classifier", "Prediction", "LabelCache", "KNOWN", "load_classifier", "label_texts",
           "default_cache_dir"]


CHUNK = 256


def default_cache_dir() -> Path:
    """``$SWE_TASKFLOW_CACHE/labels`` if set, else ``~/.cache/swe-taskflow/labels``."""
    root = os.environ.get("SWE_TASKFLOW_CACHE")
    return Path(root) / "labels" if root else Path.home() / ".cache" / "swe-taskflow" / "labels"


def message_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class LabelCache:
    """Labels of one classifier identity; ``get``/``put`` by message text (stored by its sha256 only)."""

    def __init__(self, info: Mapping, directory: str | Path | None = None):
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        # the fields that determine a label besides the message; their hash names the file
        self.identity = {k: str(info.get(k, "")) for k in ("name", "version", "revision", "prompt_sha256")}
        key = hashlib.sha256(json.dumps(self.identity, sort_keys=True).encode()).hexdigest()[:24]
        self.path = self.directory / f"{key}.jsonl"
        self._data: dict[str, Prediction] | None = None

    def _load(self) -> dict[str, Prediction]:
        if self._data is None:
            self._data = {}
            if self.path.exists():
                with self.path.open(encoding="utf-8") as fh:
                    for line in fh:
                        try:
                            row = json.loads(line)
                            self._data[row["sha256"]] = Prediction.from_dict(row)
                        except (ValueError, KeyError, TypeError):
                            continue  # a torn last line from an interrupted run: recomputed next time
        return self._data

    def get(self, text: str) -> Prediction | None:
        return self._load().get(message_sha256(text))

    def put_many(self, items: list[tuple[str, Prediction]]) -> None:
        if not items:
            return
        data = self._load()
        self.directory.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            for text, pred in items:
                key = message_sha256(text)
                data[key] = pred
                fh.write(json.dumps({"sha256": key, **pred.to_dict(), **self.identity}, sort_keys=True) + "\n")


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
