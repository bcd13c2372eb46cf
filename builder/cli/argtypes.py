"""Types for command-line values: a number out of its sane range, or a file where a release folder belongs, is
refused before any work.

``--bootstrap 1000000000`` would allocate for hours, ``--seed -1`` fails deep inside numpy,
``--timeout nan`` never fires. Each type names its range in the one-line error argparse prints.
"""

from __future__ import annotations

import argparse
import math
import os

#: Largest seed numpy's SeedSequence takes from us (any non-negative int works; this keeps it readable).
MAX_SEED = 2**63 - 1


def int_range(lo: int, hi: int | None = None):
    """An integer in ``[lo, hi]``."""
    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < lo or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(f"{value} is out of range (expected {lo}..{hi if hi is not None else ''})")
        return value
    parse.__name__ = "integer"
    return parse


def float_range(lo: float, hi: float, *, lo_open: bool = False, hi_open: bool = False):
    """A finite number in ``[lo, hi]`` (ends excluded where ``*_open``)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not math.isfinite(value) or value < lo or value > hi or (lo_open and value == lo) \
                or (hi_open and value == hi):
            ends = f"{'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}"
            raise argparse.ArgumentTypeError(f"{text} is out of range (expected a finite number in {ends})")
        return value
    parse.__name__ = "number"
    return parse


seed = int_range(0, MAX_SEED)
positive = int_range(1)
non_negative = int_range(0)
#: Seconds for a wall-clock limit: a day at most.
seconds = float_range(0.0, 86400.0, lo_open=True)
#: A share or a probability.
share = float_range(0.0, 1.0)
#: A confidence level.
confidence = float_range(0.0, 1.0, lo_open=True, hi_open=True)
#: Bootstrap resamples: each costs a pass over the sessions; 100,000 is already hours on a large corpus.
resamples = int_range(0, 100_000)
#: Parallel workers (containers, requests).
workers = int_range(1, 256)
#: A model batch.
batch = int_range(1, 65_536)



def release_ref(value: str) -> str:
    """A release folder or a Hub id (``ORG/NAME``); an existing file is refused (exit 2, as a missing path is:
    ``verify build/example/release/README.md`` used to fail verification with exit 1)."""
    if os.path.isfile(value):
        raise argparse.ArgumentTypeError(f"{value} is a file, not a release folder (give the folder that holds "
                                         "manifests/, or ORG/NAME on the Hub)")
    return value


__all__ = ["release_ref",
           "int_range", "float_range", "seed", "positive", "non_negative", "seconds", "share", "confidence",
           "resamples", "workers", "batch", "MAX_SEED"]
