"""Target Task-Flow files: the three vectors TFAS compares against, plus what defines the target.

A versioned JSON document. It carries aggregate vectors only (no message text), and the facts a
reader needs to judge it: population, session filter, sample size, classifier and its version,
measurement date, and whether it is a provisional stand-in for a production target. Some ship with
the package (``swe_taskflow/data/targets/``).

A *raw* target counts the classifier's labels as they are; a *corrected* one (``flow measure --confusion``,
:mod:`swe_taskflow.correction`) holds the expected flow of the true labels and says so in its ``correction``
record (which confusion matrix, by sha256, and how many labelled messages made it), so the two are never
confused. ``bootstrap``, when present, holds percentile intervals of the intent shares.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from .errors import ConfigError, InputError
from .flow import LENGTH_BINS, N_SIDE, RETAINED, TRANSITION_SOURCES, TRANSITION_TARGETS, Flow, FlowCounts
from .jsonl import check_format, write_json

FORMAT = "swe-taskflow/target"
FORMAT_VERSION = 1
#: The default target: long SpecStory sessions, a provisional public stand-in for a production target.
DEFAULT_TARGET = "specstory-long-v2"


def shipped_targets() -> list[str]:
    """Names of the target files shipped with the package."""
    folder = resources.files(__package__).joinpath("data/targets")
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".json"))


def target_path(name: str) -> Path:
    """Path of the shipped target ``name``; ConfigError listing the shipped ones if unknown."""
    path = Path(str(resources.files(__package__).joinpath(f"data/targets/{name}.json")))
    if not path.is_file():
        raise ConfigError("unknown shipped target", field="target", actual=name,
                          hint="known: " + ", ".join(shipped_targets()))
    return path


def default_target_path() -> Path:
    """Path of the packaged default target file (load it with :func:`load_target`)."""
    return target_path(DEFAULT_TARGET)


@dataclass(frozen=True)
class Target:
    """A target Task Flow and its definition."""

    name: str
    flow: Flow
    population: str
    min_messages: int = 3
    session_filter: Mapping[str, Any] = field(default_factory=dict)
    sample_size: Mapping[str, int] = field(default_factory=dict)
    classifier: Mapping[str, Any] = field(default_factory=dict)
    measured_on: str = ""
    provisional: bool = False
    description: str = ""
    correction: Mapping[str, Any] | None = None
    bootstrap: Mapping[str, Any] | None = None

    @property
    def corrected(self) -> bool:
        """True for a flow corrected for its classifier's errors, False for one counted from the labels as they are."""
        return self.correction is not None

    @staticmethod
    def from_counts(counts: FlowCounts, **meta: Any) -> "Target":
        flow = counts.normalized()
        meta.setdefault("sample_size", {"sessions": counts.n_sessions, "messages": counts.n_messages,
                                        "retained_messages": counts.n_retained})
        return Target(flow=flow, **meta)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT, "format_version": FORMAT_VERSION, "name": self.name,
            "description": self.description, "population": self.population,
            "provisional": self.provisional,
            "session_filter": {"min_messages": self.min_messages, **dict(self.session_filter)},
            "sample_size": dict(self.sample_size), "classifier": dict(self.classifier),
            "measured_on": self.measured_on,
            "length_bins": list(LENGTH_BINS), "intents": list(RETAINED),
            "transition_sources": list(TRANSITION_SOURCES), "transition_targets": list(TRANSITION_TARGETS),
            "P_L": [round(float(x), 12) for x in self.flow.length],
            "P_T": [round(float(x), 12) for x in self.flow.intent],
            "P_R": [[round(float(x), 12) for x in row] for row in self.flow.transition.reshape(N_SIDE, N_SIDE)],
            **{k: dict(v) for k, v in (("correction", self.correction), ("bootstrap", self.bootstrap)) if v is not None},
        }

    def save(self, path: str | Path) -> None:
        write_json(path, self.to_dict())


def bootstrap_record(intervals: Mapping[str, Any], *, n_resamples: int, seed: int, confidence: float,
                     method: str) -> dict[str, Any]:
    """A target's ``bootstrap`` block: each intent share (``swe_taskflow.bootstrap.Interval``) with its interval."""
    return {"n_resamples": n_resamples, "seed": seed, "confidence": confidence, "method": method,
            "P_T": {k: {f: round(float(x), 12) for f, x in iv.as_dict().items()} for k, iv in intervals.items()}}


def _vector(doc: Mapping[str, Any], key: str, n: int, path: str) -> np.ndarray:
    raw = doc.get(key)
    if raw is None:
        raise InputError("missing vector", path=path, field=key)
    try:
        arr = np.asarray(raw, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise InputError("not a numeric vector", path=path, field=key) from None
    if arr.size != n:
        raise InputError("wrong vector size", path=path, field=key, expected=n, actual=int(arr.size))
    if (arr < 0).any() or not np.isfinite(arr).all():
        raise InputError("negative or non-finite probability", path=path, field=key)
    if abs(arr.sum() - 1.0) > 1e-6:
        raise InputError("vector does not sum to 1", path=path, field=key, expected=1.0, actual=float(arr.sum()))
    return arr


def target_from_dict(doc: Mapping[str, Any], *, path: str = "<target>") -> Target:
    check_format(doc, FORMAT, FORMAT_VERSION, kind="target", name="target Task-Flow file", where=path)
    for key, expected in (("length_bins", list(LENGTH_BINS)), ("intents", list(RETAINED)),
                          ("transition_sources", list(TRANSITION_SOURCES)),
                          ("transition_targets", list(TRANSITION_TARGETS))):
        if doc.get(key) != expected:
            raise InputError("support differs from this version's taxonomy", path=path, field=key,
                             expected=expected, actual=doc.get(key))
    size = doc.get("sample_size", {})
    flow = Flow(_vector(doc, "P_L", len(LENGTH_BINS), path), _vector(doc, "P_T", len(RETAINED), path),
                _vector(doc, "P_R", N_SIDE * N_SIDE, path), n_sessions=int(size.get("sessions", 0)),
                n_messages=int(size.get("messages", 0)), n_retained=int(size.get("retained_messages", 0)))
    extra = {}
    for key in ("correction", "bootstrap"):
        if doc.get(key) is not None:
            if not isinstance(doc[key], dict):
                raise InputError("not a JSON object", path=path, field=key, actual=type(doc[key]).__name__)
            extra[key] = dict(doc[key])
    if "correction" in extra and not extra["correction"].get("confusion_sha256"):
        raise InputError("a corrected target names the confusion matrix it was corrected by", path=path,
                         field="correction.confusion_sha256")
    filt = dict(doc.get("session_filter") or {})
    min_messages = int(filt.pop("min_messages", 1))
    return Target(name=str(doc.get("name", "")), flow=flow, population=str(doc.get("population", "")),
                  min_messages=min_messages, session_filter=filt, sample_size=dict(size),
                  classifier=dict(doc.get("classifier", {})), measured_on=str(doc.get("measured_on", "")),
                  provisional=bool(doc.get("provisional", False)), description=str(doc.get("description", "")),
                  **extra)


def load_target(path: str | Path) -> Target:
    from .jsonl import read_json

    doc = read_json(path, "target file")
    if not isinstance(doc, dict):
        raise InputError("a target file is a JSON object", path=str(path), actual=type(doc).__name__)
    return target_from_dict(doc, path=str(path))

