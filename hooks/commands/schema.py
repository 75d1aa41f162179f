"""``oracle-guard schema NAME | --list``: print a built-in JSON Schema."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, List, Optional

from oracle_guard.errors import UsageError

if TYPE_CHECKING:
    from oracle_guard.commands.options import Subparsers

SUFFIX = ".schema.json"


def schema_names() -> List[str]:
    # deferred: cli imports this module for its parser; 2 ms, for a run
    from oracle_guard.parsing.validation import schema_dir

    return sorted(n[: -len(SUFFIX)] for n in os.listdir(schema_dir()) if n.endswith(SUFFIX))


def print_schema(name: Optional[str], listing: bool = False) -> int:
    """Print the schema ``name``, or (``listing``) every name."""
    # deferred: cli imports this module for its parser; 1 ms, for a run
    from oracle_guard.parsing.validation import schema_path

    names = schema_names()
    if listing == (name is not None):
        raise UsageError("'oracle-guard schema' takes a NAME or --list")
    if listing:
        print("\n".join(names))
        return 0
    if name not in names:
        raise UsageError(f"unknown schema {name!r}; choose from {', '.join(names)}")
    with open(schema_path(name), encoding="utf-8") as f:
        text = f.read()
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def add_parser(sub: Subparsers) -> None:
    parser = sub.add_parser("schema", help="print a built-in JSON Schema")
    parser.add_argument(
        "name",
        metavar="NAME",
        nargs="?",
        help="contract, corpus-line, fixtures-lock, flake-budget, freeze, quarantine-entry, "
        "quarantine-list, replay-case or score-record",
    )
    parser.add_argument("--list", action="store_true", help="list the built-in schema names")
    parser.set_defaults(run=run)


def run(options: argparse.Namespace) -> int:
    return print_schema(options.name, options.list)
