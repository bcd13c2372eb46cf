"""Hand-written exemplar messages per intent (``builder/data/classifier/exemplars_v1.jsonl``).

Each row: ``{"intent", "text", "provenance": "hand-written", "version"}``. They are the project's own
writing (terse, multilingual, in the style of IDE chat), never copied from any session corpus, and never
drawn from the held-out sessions used for the hand-label agreement check."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from swe_taskflow.errors import InputError
from swe_taskflow.jsonl import read_jsonl
from swe_taskflow.taxonomy import check_intent
from builder.resources import builder_path

DATA_DIR = builder_path("data", "classifier")
DEFAULT_EXEMPLARS = DATA_DIR / "exemplars_v1.jsonl"


@dataclass(frozen=True)
class Exemplars:
    texts: tuple[str, ...]
    """Exemplar messages."""
    intents: tuple[str, ...]
    """Their intents, one of the 16 each."""
    sha256: str
    """sha256 of the file's bytes: part of the classifier's version, hence of the label cache key."""
    version: str
    """The file's declared version (e.g. ``v1``)."""


def load_exemplars(path: str | Path = DEFAULT_EXEMPLARS) -> Exemplars:
    path = Path(path)
    if not path.is_file():
        raise InputError("exemplar file not found", path=str(path))
    texts, intents, versions = [], [], set()
    for line, row in read_jsonl(path):
        if row.get("provenance") != "hand-written":
            raise InputError("exemplar rows must be hand-written", path=str(path), row=line,
                             field="provenance", expected="hand-written", actual=row.get("provenance"))
        text = row.get("text")
        if not isinstance(text, str) or not text.strip():
            raise InputError("empty exemplar text", path=str(path), row=line, field="text")
        intents.append(check_intent(row.get("intent"), path=str(path), row=line))
        texts.append(text)
        versions.add(str(row.get("version", "")))
    if len(versions) != 1:
        raise InputError("exemplar rows carry mixed versions", path=str(path), field="version",
                         actual=sorted(versions))
    return Exemplars(tuple(texts), tuple(intents), hashlib.sha256(path.read_bytes()).hexdigest(),
                     versions.pop())
