"""What an augmentation turn is made from before its checks: a spec (proposed or hand-written).

A spec names the kind and its parameters (command, test, requirement, seeded defect, claimed
locations); the creation-time checks (:mod:`.checks`) run it and return a
:class:`~swe_taskflow.schema.QAItem` with its reference, proof and status. Hand-written specs
(the example's deliberately broken items) are read from a JSONL file and carry
``"provenance": "hand-written"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Mapping

from swe_taskflow.augment.kinds import AUGMENT_KINDS
from swe_taskflow.augment.reference import EXECUTE_STYLES
from swe_taskflow.errors import InputError
from swe_taskflow.jsonl import read_jsonl
from swe_taskflow.schema import Record


@dataclass(frozen=True)
class AugmentSpec(Record):
    """One proposed augmentation turn."""

    check_types: ClassVar[bool] = False   # __post_init__ checks kind and style; other fields are free text

    item_id: str
    instance_id: str
    kind: str
    #: The turn text; empty: the writer words it once the reference is known.
    text: str = ""
    #: execute: the command to run (from the repository root) and what to report (EXECUTE_STYLES).
    command: str = ""
    style: str = ""
    #: debug: the FAIL_TO_PASS test to diagnose.
    test: str = ""
    #: planning: the split part holding the requirement, and the requirement's text.
    requirement_part: int = -1
    requirement: str = ""
    #: review: the seeded defect (a site of swe_taskflow.augment.mutate, as its dict).
    mutation: Mapping[str, Any] | None = None
    #: debug / planning: locations a hand-written spec claims (checked against the gold patch);
    #: empty: derived from the gold patch.
    locations: tuple[Mapping[str, Any], ...] = ()
    pool: str = "generated"
    generator: Mapping[str, Any] = field(default_factory=dict)
    note: str = ""

    def __post_init__(self) -> None:
        if self.kind not in AUGMENT_KINDS:
            raise InputError("unknown augmentation kind", field="kind", actual=self.kind, expected=AUGMENT_KINDS)
        if self.kind == "execute" and self.style not in EXECUTE_STYLES:
            raise InputError("unknown execute style", field="style", actual=self.style, expected=EXECUTE_STYLES)
        object.__setattr__(self, "locations", tuple(dict(x) for x in self.locations))



def read_specs(path, *, pool: str, cls=AugmentSpec) -> list:
    """Hand-written specs (``cls`` records) of a JSONL file; each row must say ``"provenance": "hand-written"``."""
    out = []
    for n, obj in read_jsonl(path):
        if obj.get("provenance") != "hand-written":
            raise InputError("a spec file row must be labelled hand-written", path=str(path), row=n,
                             field="provenance", expected="hand-written", actual=obj.get("provenance"))
        spec = cls.from_dict({**obj, "pool": pool, "generator": {"name": "hand-written",
                                                                          "provenance": "hand-written"}},
                                     where=str(path), row=n)
        out.append(spec)
    return out


def read_spec_files(files, resolve, *, cls=AugmentSpec) -> list:
    """The specs of a recipe's spec ``files`` (made absolute by ``resolve``), in order; a file's stem is its pool."""
    return [spec for f in files for spec in read_specs(resolve(f), pool=Path(f).stem, cls=cls)]


__all__ = ["AugmentSpec", "read_specs", "read_spec_files"]
