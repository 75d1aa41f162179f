"""Command line: ``oracle-guard check | lock | init | freeze | seeds | signers | explain
| schema | demo | pre-receive | install-pre-receive | doctor``.

Each command is a module of ``oracle_guard.commands`` with ``add_parser(sub)`` and
``run(options)``; this module only assembles them and handles what they raise."""
from __future__ import annotations

import argparse
import os
import sys
import traceback
from typing import Mapping, Optional, Sequence

from oracle_guard import __version__
from oracle_guard.commands import (check, demo, doctor, explain, freeze, install_pre_receive,
                                   lock, options, pre_receive, schema, seeds, signers)
from oracle_guard.errors import UsageError, failure
from oracle_guard.findings import inert, show_text


# -- init, as before: until commands/init has add_parser(sub) and run(options); then
# -- _Init becomes init in COMMANDS and this block goes ----------------------------
def cmd_init(args, env: Mapping[str, str]) -> int:
    from oracle_guard.commands import init

    try:
        return init.main(args, env)
    except init.InitError as exc:
        raise UsageError(str(exc)) from None


def _run_init(args) -> int:
    return cmd_init(args, args.env)


def _add_init_parser(sub) -> None:
    init = sub.add_parser("init", parents=[options.common()],
                          help="write a contract, fixture lock and pre-commit hooks for this "
                               "repository's layout")
    init.add_argument("--layout", metavar="NAME",
                      help="harness, merge-contract, oracle-dir or replay-queue "
                           "(default: the one recognised)")
    init.add_argument("--force", action="store_true",
                      help="overwrite files that differ from what init would write")
    init.add_argument("--dry-run", action="store_true",
                      help="print what would be written; write nothing")
    init.add_argument("--repo", metavar="URL",
                      default="https://your.git.server/mirrors/oracle-guard",
                      help="where pre-commit installs oracle-guard from: a URL or a local clone "
                           "(default: a placeholder to fill in)")
    init.add_argument("--rev", metavar="REV",
                      help="the tag or commit of --repo to pin (default: a local clone's HEAD, "
                           "else a placeholder)")
    init.add_argument("--allow", metavar="PATTERN", action="append",
                      help="a pattern the write set allows (repeat it for more; default: the "
                           "layout example's allow patterns that match a path here)")
    init.add_argument("--ci", choices=("github", "gitlab"),
                      help="also write the CI recipe, installing oracle-guard from --repo at "
                           "--rev (default: none)")
    init.add_argument("--now", metavar="TIME",
                      help="the clock for the budget check of what is staged "
                           "(default: $ORACLE_GUARD_NOW, else the system clock in UTC)")
    init.set_defaults(run=_run_init)


class _Init:
    """Stands in for the init command module."""
    add_parser = staticmethod(_add_init_parser)
# -- end of init ---------------------------------------------------------------------


# in the order `oracle-guard --help` lists them
COMMANDS = (check, lock, freeze, seeds, signers, pre_receive, install_pre_receive, doctor,
            demo, _Init, explain, schema)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="oracle-guard",
        description="Keep a repository's test oracle out of reach of the patches it judges.")
    parser.add_argument("--version", action="version", version=f"oracle-guard {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: Optional[Sequence[str]] = None, env: Optional[Mapping[str, str]] = None) -> int:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")
        except AttributeError:  # replaced by a test harness
            pass
    parsed = build_parser().parse_args(argv)
    parsed.env = os.environ if env is None else env
    try:
        code = parsed.run(parsed)
        sys.stdout.flush()  # a closed pipe surfaces here, not at interpreter exit
        return code
    except BrokenPipeError:  # the reader went away (`| head`): quiet, but not a pass
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except OSError:
            pass
        return 2
    except Exception as exc:  # fail closed: nothing unexpected exits 0
        return report_failure(parsed, exc)


def report_failure(parsed, exc: BaseException) -> int:
    """The one line (and, for json, github and sarif, the document) a failed run prints."""
    from oracle_guard.report import formats as reporters

    failed = failure(exc)
    message = failed.message if failed.expected else f"{failed.message} (rerun with --debug)"
    if getattr(parsed, "debug", False):
        traceback.print_exc()
    # json, github and sarif readers get the failure in their own format too
    sys.stdout.write(reporters.render_error(getattr(parsed, "format", "text"), message))
    # one line, whatever names the message quotes (a contract key, a file name)
    print(inert(f"oracle-guard: error: {show_text(message)}"), file=sys.stderr)
    return failed.exit_code
