"""The options several commands share, as argparse parent parsers.

Each command module defines ``add_parser(sub)``, which adds its subparser with
these parents and ``set_defaults(run=run)``, and ``run(options) -> int``;
``cli`` puts the environment the command reads in ``options.env``."""

from __future__ import annotations

import argparse
import os
import sys
from functools import cache
from typing import TYPE_CHECKING, Any, List

if TYPE_CHECKING:
    from oracle_guard.report.outputs import Output


def _columns() -> int:
    """``shutil.get_terminal_size().columns``, the width argparse's help is
    wrapped to, without importing shutil (and its compression modules) on every
    run: every parser's add_argument builds a formatter."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]  # None: AttributeError, caught
    except (AttributeError, ValueError, OSError):
        return 80


class Parser(argparse.ArgumentParser):
    """argparse's parser, its help as wide as argparse makes it; subparsers
    take their parent's class, so one at the top serves every command."""

    def _get_formatter(self) -> argparse.HelpFormatter:
        if sys.version_info >= (3, 14):  # colour comes in; leave argparse be
            return super()._get_formatter()
        # HelpFormatter's own default: the terminal's columns, less 2
        make: Any = self.formatter_class  # every HelpFormatter takes width
        return make(prog=self.prog, width=_columns() - 2)


if TYPE_CHECKING:
    # what cli hands each command's add_parser (argparse's class is private)
    Subparsers = argparse._SubParsersAction[Parser]


@cache
def common() -> Parser:
    """-C and --debug."""
    parser = Parser(add_help=False)
    parser.add_argument(
        "-C",
        metavar="DIR",
        default=".",
        help="run as if started in DIR (default: the current folder)",
    )
    parser.add_argument(
        "--debug", action="store_true", help="print a traceback on unexpected errors"
    )
    return parser


@cache
def debug_only() -> Parser:
    """--debug alone, for a command that builds its own repository (demo)."""
    parser = Parser(add_help=False)
    parser.add_argument(
        "--debug", action="store_true", help="print a traceback on unexpected errors"
    )
    return parser


@cache
def judged() -> Parser:
    """The clock, the output format and the cache, for a command that judges (check, lock)."""
    # deferred: cli imports this module for its parser; 6 ms, for a run
    from oracle_guard.report import formats as reporters
    from oracle_guard.report.outputs import output_spec

    parser = Parser(add_help=False)
    parser.add_argument(
        "--now",
        metavar="TIME",
        help="the clock: ISO-8601 date or date-time with offset "
        "(default: $ORACLE_GUARD_NOW, else the system clock in UTC)",
    )
    parser.add_argument(
        "--format",
        choices=reporters.FORMATS,
        default="text",
        help="the report on stdout: text (default), json, github (Actions annotations), "
        "sarif (SARIF 2.1.0), markdown (a job summary), junit (JUnit XML) or gitlab "
        "(GitLab Code Quality)",
    )
    parser.add_argument(
        "--output",
        action="append",
        type=output_spec,
        metavar="FORMAT=PATH",
        help="also write FORMAT's report to PATH (relative to -C DIR), whole or not at "
        "all; repeatable, one file a format; on an error each file gets the error",
    )
    parser.add_argument(
        "--color",
        choices=reporters.COLOR_CHOICES,
        default="auto",
        help="colour the text format (default auto: on a terminal, unless "
        "NO_COLOR; FORCE_COLOR and PRE_COMMIT_COLOR are honoured)",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor write the verdict cache in the git directory",
    )
    return parser


@cache
def host() -> Parser:
    """--host and --identity-env, for the server-side commands."""
    # deferred: cli imports this module for its parser; 1 ms, for a run
    from oracle_guard.hosts import HOSTS

    parser = Parser(add_help=False)
    parser.add_argument(
        "--host",
        choices=list(HOSTS),
        help="the server that runs the hook; the pusher is read only from the "
        "variable it sets (docs: how-to/server-install.md)",
    )
    parser.add_argument(
        "--identity-env",
        metavar="NAME",
        help="ssh and plain hosts: the variable your setup sets for the pusher "
        "(ssh: default REMOTE_USER, set per key in authorized_keys)",
    )
    return parser


def resolve_outputs(options: argparse.Namespace) -> List[Output]:
    """``--output``'s files, kept on ``options`` for the failure handler, which
    writes error documents to them."""
    # deferred: cli imports this module for its parser; 2 ms, for a run
    from oracle_guard.report import outputs

    options.outputs = outputs.resolve(options.output, options.C)
    return options.outputs
