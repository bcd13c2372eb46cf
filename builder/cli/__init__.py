"""The ``swe-taskflow`` command: a thin argparse front that parses and calls the library.

Each command group lives in its own module exposing ``register(subparsers)``; command functions
take the parsed ``argparse.Namespace`` and return an exit code. Every error becomes one line on
stderr instead of a traceback: a :class:`TaskflowError` names the file, row and field (exit 2); a
bad flag is argparse's one line (exit 2); an OS error names its file (exit 2); anything else is an
internal error (exit 70; ``SWE_TASKFLOW_DEBUG=1`` shows the traceback). SIGTERM and SIGHUP
interrupt like Ctrl-C, so every ``finally`` (containers, sandboxes, temporary folders) runs; what a
``kill -9`` left (owned temporary folders of dead processes) is swept before every command.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading

from swe_taskflow import __version__
from swe_taskflow.errors import TaskflowError

#: Command-group modules under builder.cli, in the order ``--help`` lists them.
GROUPS = ("build", "flow", "classify", "split", "qa", "augment", "proofs", "select", "release", "example",
          "evaluate")
#: Exit status of an unexpected exception (EX_SOFTWARE).
INTERNAL_ERROR = 70


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised in the main thread like Ctrl-C's KeyboardInterrupt."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):   # one line, not usage + message
        where = self.prog.removeprefix("swe-taskflow").strip()
        self.exit(2, f"swe-taskflow: error: {where + ': ' if where else ''}{message} (see --help)\n")


def build_parser(groups: tuple[str, ...] = GROUPS) -> argparse.ArgumentParser:
    """The whole command line, or only ``groups`` (``main`` registers just the group it runs: each group's
    module imports its own dependencies, and a command should not pay for the others' at start-up)."""
    parser = _Parser(
        prog="swe-taskflow",
        description="Build, verify and publish calibrated multi-turn coding-agent benchmarks.")
    parser.add_argument("--version", action="version", version=f"swe-taskflow {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in groups:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def _raise_interrupted(signum, frame) -> None:
    raise Interrupted(signum)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush into the closed pipe prints nothing."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):   # stdout already closed or not a real file (a test's capture)
        pass


def main(argv: list[str] | None = None) -> int:
    """Run one command; ``swe-taskflow ... | head`` ends quietly when ``head`` leaves (exit 141, as SIGPIPE would),
    never with "error: Broken pipe"."""
    try:
        return _run(argv)
    except BrokenPipeError:
        _silence_stdout()
        return 128 + int(signal.SIGPIPE)


def _run(argv: list[str] | None) -> int:
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser((words[0],) if words and words[0] in GROUPS else GROUPS)
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:  # a group given without its subcommand
        parser.parse_args([*(argv if argv is not None else sys.argv[1:]), "--help"])
        return 2
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            previous[sig] = signal.signal(sig, _raise_interrupted)
    try:
        from swe_taskflow.hygiene import sweep_folders, sweep_once

        sweep_once("folders", sweep_folders)   # what killed commands of any kind left (swe_taskflow.owned)
        from .guards import check_io

        check_io(args)
        return int(func(args) or 0)
    except TaskflowError as exc:
        print(f"swe-taskflow: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        signum = getattr(exc, "signum", signal.SIGINT)
        print(f"swe-taskflow: interrupted by {signal.Signals(signum).name}; sandboxes and temporary files were "
              "cleaned up", file=sys.stderr)
        return 128 + int(signum)
    except BrokenPipeError:          # the reader of stdout left: main() ends quietly
        raise
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"swe-taskflow: error: {where}{_one_line(exc.strerror or exc)}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - the last resort: one line, never a traceback
        if os.environ.get("SWE_TASKFLOW_DEBUG"):
            raise
        print(f"swe-taskflow: internal error: {type(exc).__name__}: {_one_line(exc)[:300]} "
              "(SWE_TASKFLOW_DEBUG=1 shows the traceback; please report it)", file=sys.stderr)
        return INTERNAL_ERROR
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


if __name__ == "__main__":
    sys.exit(main())
