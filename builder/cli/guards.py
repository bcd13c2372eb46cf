"""Checks every command gets before it runs: no output may overwrite an input or land inside a release.

``flow measure x.jsonl --out x.jsonl`` used to replace the sessions with a target file; an output
written into a release folder breaks its verification. Outputs are the ``--out``-like options;
inputs are every other option or argument naming an existing path.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from swe_taskflow.errors import ConfigError
from swe_taskflow.jsonl import check_output_dir, check_output_file
from swe_taskflow.release import release_containing

#: Option destinations that name something a command writes.
OUTPUT_DESTS = ("out", "labels_out", "json_out", "usage_out", "cache", "record")


def _flag(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def _paths(value) -> list[str]:
    values = value if isinstance(value, list) else [value]
    return [v for v in values if isinstance(v, str) and v]


def _same(a: Path, b: Path) -> bool:
    if os.path.abspath(a) == os.path.abspath(b):
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def check_io(args: argparse.Namespace) -> None:
    """ConfigError when an output is also an input, or lies inside a release folder; InputError when a file
    output names a folder or a folder output names a file (commands writing a folder set ``out_is_dir``)."""
    outputs = [(dest, Path(v)) for dest in OUTPUT_DESTS for v in _paths(getattr(args, dest, None))]
    if not outputs:
        return
    inputs = [Path(v) for dest, value in vars(args).items() if dest not in OUTPUT_DESTS and dest != "func"
              for v in _paths(value) if os.path.lexists(v)]
    folders = {"cache", "record"} | ({"out"} if getattr(args, "out_is_dir", False) else set())
    for dest, out in outputs:
        if dest in folders:
            check_output_dir(out, f"{_flag(dest)} folder")
        else:
            check_output_file(out, f"{_flag(dest)} file")
        for inp in inputs:
            if _same(out, inp):
                raise ConfigError("this output is also an input of the command; writing it would destroy the input",
                                  field=_flag(dest), actual=str(out), hint="write the output somewhere else")
        release = release_containing(out)
        if release is not None:
            raise ConfigError("this output lies inside a release folder; writing there would corrupt the release",
                              field=_flag(dest), actual=str(out), hint=f"{release} is a release; write elsewhere")


__all__ = ["check_io", "OUTPUT_DESTS"]
