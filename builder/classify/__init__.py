"""Intent classification: one of the paper's 16 intents per user message (Appendix A).

``load_classifier(name)`` picks a classifier by name: ``embedded`` (the CPU default), ``embedded-v1`` (the
previous default, for comparison), ``zero-shot`` (the naive MiniLM baseline), ``llm:<model>`` or a path to a
local model folder (causal-LM label scoring), or a model id already in the local Hugging Face cache. Nothing is
ever downloaded. ``label_texts`` labels texts through the on-disk label cache, keyed by (classifier name,
version/revision, prompt hash, message sha256). One JSON file per key prefix shard would be overkill: labels
are tiny, so each classifier identity gets one JSONL file (``<dir>/<identity-hash>.jsonl``) that is appended
to and read into a dict once. Re-running a corpus then costs one file read. See docs/classify.md.

A model is loaded only when a label is missing from the cache: the LLM scorer loads its weights on its first
pass, and ``load_classifier(..., lazy=DIR)`` gives an embedded classifier whose identity comes from a memo
written the first time it was built (keyed by the bytes of the code and data it is built from), so a run
whose labels are all cached loads no model.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache, partial
from pathlib import Path
from typing import Callable, Mapping, Sequence

from swe_taskflow.errors import ConfigError, ModelError

from .base import Classifier, Prediction

__all__ = ["Classifier", "Prediction", "LabelCache", "LazyClassifier", "KNOWN", "load_classifier", "label_texts",
           "default_cache_dir"]

CHUNK = 256
#: Names load_classifier accepts besides a model folder / cached model id.
KNOWN = ("embedded", "embedded-v1", "zero-shot", "llm:<model folder or cached HF id>")


def _cached_hf_model(model_id: str) -> str | None:
    """Local snapshot folder of a model id in the HF cache, or None (never downloads)."""
    try:
        from huggingface_hub import snapshot_download

        return snapshot_download(model_id, local_files_only=True)
    except Exception:  # not cached / not a valid id
        return None


@lru_cache(maxsize=4)
def _embedded(kind: str, device: str, batch_size: int) -> Classifier:
    """Embedded classifiers are immutable once built: one per (kind, device, batch size) per process."""
    from .embedded import EmbeddedClassifier, ZeroShotClassifier

    if kind == "zero-shot":
        return ZeroShotClassifier(device=device, batch_size=batch_size)
    if kind == "embedded-v1":  # the previous default: hand-set weights, no heads
        return EmbeddedClassifier(device=device, batch_size=batch_size, heads_path=None)
    return EmbeddedClassifier(device=device, batch_size=batch_size)


def resolve_classifier(name: str) -> tuple[str, str, str]:
    """(kind, model folder, model id) that ``name`` names, without loading anything; kind is ``embedded``,
    ``embedded-v1``, ``zero-shot`` or ``llm``. An unknown name raises ConfigError listing the known ones."""
    if name in ("embedded", "embedded-v1", "zero-shot"):
        return name, "", ""
    model = name[4:] if name.startswith("llm:") else name
    folder = Path(model).expanduser()
    if folder.is_dir():
        return "llm", str(folder), ""
    if "/" in model and not model.startswith((".", "/", "~")):
        snap = _cached_hf_model(model)
        if snap is not None:
            return "llm", snap, model
    raise ConfigError("unknown classifier (not a known name, a model folder, or a cached HF model id)",
                      field="classifier", actual=name, hint="known: " + ", ".join(KNOWN))


def load_classifier(name: str = "embedded", *, device: str = "auto", batch_size: int = 64,
                    lazy: str | Path | None = None) -> Classifier:
    """Build the classifier ``name`` names; an unknown name raises ConfigError listing the known ones.
    ``lazy`` (a label cache directory): an embedded classifier is built only when it first predicts."""
    if device not in ("auto", "cpu", "cuda") and not device.startswith("cuda:"):
        raise ConfigError("unknown device", field="device", actual=device, expected="auto|cpu|cuda")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ConfigError("batch size must be a positive integer", field="batch_size", actual=batch_size)
    kind, folder, model_id = resolve_classifier(name)
    if kind != "llm":
        return LazyClassifier(kind, device, batch_size, lazy) if lazy is not None else _embedded(kind, device,
                                                                                              batch_size)
    from .llm import LLMLabelScorer

    return LLMLabelScorer(folder, device=device, batch_size=batch_size, model_id=model_id or None)


def _build_fingerprint(kind: str) -> str:
    """What an embedded classifier is built from: the bytes of this package's code and data files and the
    MiniLM package version. Its identity (``info``) cannot change while this stays the same."""
    from ..resources import builder_path

    from .embedded import minilm_revision

    h = hashlib.sha256(f"{kind}\0{minilm_revision()}".encode())
    for root in (builder_path("classify"), builder_path("data", "classifier")):
        for f in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix != ".pyc"):
            h.update(f"\0{f.relative_to(root)}\0".encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:24]


class LazyClassifier:
    """An embedded classifier that is built only when it first predicts (MiniLM and the exemplar encoding take
    seconds to tens of seconds). ``info`` comes from a memo under ``<cache dir>/classifiers/`` written when it was
    last built from the same code and data (``_build_fingerprint``), so a run whose labels are all in the cache
    builds nothing; without a memo, ``info`` builds it."""

    def __init__(self, kind: str, device: str, batch_size: int, cache_dir: str | Path | None = None):
        self.kind, self.device, self.batch_size = kind, device, batch_size
        directory = Path(cache_dir) if cache_dir not in (None, True) else default_cache_dir()
        self.memo = directory / "classifiers" / f"{_build_fingerprint(kind)}.json"
        self._clf: Classifier | None = None
        self._info: dict | None = None

    @property
    def info(self) -> dict:
        if self._info is None:
            try:
                self._info = json.loads(self.memo.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                self._info = dict(self.load().info)
        return self._info

    def load(self) -> Classifier:
        if self._clf is None:
            self._clf = _embedded(self.kind, self.device, self.batch_size)
            if self._info is not None and self._info != self._clf.info:   # the fingerprint missed a change
                raise ModelError("classifier identity differs from its memo; delete the memo", path=str(self.memo))
            from swe_taskflow.jsonl import write_json

            self.memo.parent.mkdir(parents=True, exist_ok=True)
            write_json(self.memo, self._clf.info)
        return self._clf

    def predict(self, texts: Sequence[str]) -> list[Prediction]:
        return list(self.load().predict(texts))


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


def _predict(classifier: Classifier, texts: list[str], advance: Callable[[int], None]) -> list[Prediction]:
    """Predictions in order, ``advance(k)`` as each k are done: per pass for a scorer that reports its own
    progress (``predict(texts, advance=...)``, the LLM scorer), else per chunk of CHUNK texts."""
    import inspect

    if "advance" in inspect.signature(classifier.predict).parameters:
        return list(classifier.predict(texts, advance=advance))
    out: list[Prediction] = []
    for start in range(0, len(texts), CHUNK):
        out.extend(classifier.predict(texts[start:start + CHUNK]))
        advance(min(CHUNK, len(texts) - start))
    return out


def label_texts(texts: Sequence[str], classifier: Classifier, *, cache: bool | str | LabelCache = True,
                progress: bool | Callable[[int], None] = False,
                predict: Callable[[list[str], Callable[[int], None]], list[Prediction]] | None = None
                ) -> list[Prediction]:
    """Labels for ``texts`` in order; with ``cache`` (True = default dir, or a directory path) labels already
    computed by the same classifier identity and prompt are reused and new ones stored; the classifier predicts
    (and so loads its model) only when some label is missing. Identical texts are classified once.
    ``progress``: True shows a bar on stderr (TTY only) with msg/s and ETA; a callable gets ``advance(k)``
    for every k distinct texts done (cached ones first). ``predict(missing, advance)`` replaces the classifier's
    own prediction (``--ray`` scores the missing texts on a cluster)."""
    texts = list(texts)
    store = cache if isinstance(cache, LabelCache) else LabelCache(classifier.info, None if cache is True else cache) \
        if cache else None
    known: dict[str, Prediction] = {}
    missing: list[str] = []
    uniq = list(dict.fromkeys(texts))
    for t in uniq:
        p = store.get(t) if store is not None else None
        if p is None:
            missing.append(t)
        else:
            known[t] = p
    if missing:
        from swe_taskflow.progress import progress_bar

        with progress_bar(len(uniq), desc=f"classify ({classifier.info.get('name')})", unit="msgs", rate=True,
                          enabled=progress is True and len(missing) > CHUNK) as bar:
            step = progress if callable(progress) else (lambda k: bar(n=k))
            step(len(known))
            new = (predict or partial(_predict, classifier))(missing, step)
        if store is not None:
            store.put_many(list(zip(missing, new)))
        known.update(zip(missing, new))
    elif callable(progress):
        progress(len(uniq))
    return [known[t] for t in texts]
