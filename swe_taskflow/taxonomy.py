"""The 16 intents of the paper's Appendix A, kept as data (``data/taxonomy.json``).

Order matters: it is the index order of every count vector in :mod:`swe_taskflow.flow`.
"""

from __future__ import annotations

import json
from importlib import resources
from types import MappingProxyType

import numpy as np

from .errors import InputError

_DOC = json.loads(resources.files(__package__).joinpath("data/taxonomy.json").read_text(encoding="utf-8"))

INTENTS: tuple[str, ...] = tuple(i["name"] for i in _DOC["intents"])
DEFINITIONS = MappingProxyType({i["name"]: i["definition"] for i in _DOC["intents"]})
EXCLUDED: tuple[str, ...] = tuple(_DOC["excluded_from_tfas"])
RETAINED: tuple[str, ...] = tuple(i for i in INTENTS if i not in EXCLUDED)
AUGMENTATION = MappingProxyType({k: tuple(v) for k, v in _DOC["augmentation"].items()})

INTENT_INDEX = MappingProxyType({name: i for i, name in enumerate(INTENTS)})
RETAINED_INDEX = MappingProxyType({name: i for i, name in enumerate(RETAINED)})
#: For each of the 16 intent indexes, its index among the 13 retained ones, or -1 if excluded.
RETAINED_POSITION = np.array([RETAINED_INDEX.get(name, -1) for name in INTENTS], dtype=np.int64)
RETAINED_POSITION.setflags(write=False)


def check_intent(label: object, *, path: str | None = None, row: int | None = None,
                 field: str = "intent") -> str:
    """Return ``label`` if it is one of the 16 intents, else raise an error naming where it came from."""
    if isinstance(label, str) and label in INTENT_INDEX:
        return label
    raise InputError("unknown intent label", path=path, row=row, field=field, actual=label,
                     hint="allowed: " + ", ".join(INTENTS))


def encode(labels: list[str] | tuple[str, ...]) -> np.ndarray:
    """Intent names -> int8 indexes into INTENTS (raises on an unknown label)."""
    try:
        return np.fromiter((INTENT_INDEX[x] for x in labels), dtype=np.int8, count=len(labels))
    except KeyError as exc:
        raise InputError("unknown intent label", field="intent", actual=exc.args[0],
                         hint="allowed: " + ", ".join(INTENTS)) from None
