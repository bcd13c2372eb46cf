"""Every command and subcommand of the whole CLI tree answers --help (walks whatever groups exist)."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from builder.cli import build_parser, main


def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _walk(sub, path + (name,))


COMMANDS = [path for path, _ in _walk(build_parser())]


def test_tree_has_the_flow_commands():
    for cmd in (("flow",), ("flow", "measure"), ("flow", "score"), ("flow", "gap"), ("flow", "plot")):
        assert cmd in COMMANDS


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "<root>")
def test_help(path, capsys):
    with pytest.raises(SystemExit) as exc:
        main([*path, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: swe-taskflow" + "".join(f" {p}" for p in path))


def test_every_leaf_command_has_a_function_and_a_help_line():
    for path, parser in _walk(build_parser()):
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            if path:
                assert callable(parser.get_default("func")), f"{' '.join(path)} has no function"
            continue
        for action in subs:
            helps = {c.dest: c.help for c in action._choices_actions}
            for name in action.choices:
                assert helps.get(name), f"{' '.join(path + (name,))} has no help line in its parent's listing"


def test_console_script_help():
    exe = shutil.which("swe-taskflow", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("console script not installed next to this interpreter")
    res = subprocess.run([exe, "flow", "--help"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and "measure" in res.stdout
