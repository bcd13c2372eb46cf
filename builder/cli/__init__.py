"""The ``swe-taskflow`` command: a thin argparse front that parses and calls the library.

Each command group lives in its own module exposing ``register(subparsers)``; command functions
take the parsed ``argparse.Namespace`` and return an exit code. Every :class:`TaskflowError`
becomes one precise line on stderr (exit 2) instead of a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from swe_taskflow import __version__
from swe_taskflow.errors import TaskflowError

#: Command-group modules under builder.cli, in the order ``--help`` lists them.
GROUPS = ("build", "flow", "classify", "split", "qa", "augment", "proofs", "select", "release", "example",
          "evaluate")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="swe-taskflow",
        description="Build, verify and publish calibrated multi-turn coding-agent benchmarks.")
    parser.add_argument("--version", action="version", version=f"swe-taskflow {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in GROUPS:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:  # a group given without its subcommand
        parser.parse_args([*(argv if argv is not None else sys.argv[1:]), "--help"])
        return 2
    try:
        return int(func(args) or 0)
    except TaskflowError as exc:
        print(f"swe-taskflow: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("swe-taskflow: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
