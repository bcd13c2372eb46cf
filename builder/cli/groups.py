"""The one way a command with subcommands (``swe-taskflow proofs run``) is declared."""

from __future__ import annotations

import argparse


def command_group(sub, name: str, *, dest: str, metavar: str = "SUBCOMMAND", required: bool = False,
                  **parser_kw) -> argparse._SubParsersAction:
    """Add command ``name`` to ``sub`` and return the action its subcommands are added to."""
    return sub.add_parser(name, **parser_kw).add_subparsers(dest=dest, metavar=metavar, required=required)
