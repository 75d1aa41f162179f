"""Command line: ``oracle-guard check | score | lock | init | freeze | seeds | signers | explain
| schema | demo | pre-receive | install-pre-receive | doctor``.

Each command is a module of ``oracle_guard.commands`` with ``add_parser(sub)`` and
``run(options)``; this module only assembles them and handles what they raise."""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from typing import Mapping, Optional, Sequence

# command: module of oracle_guard.commands, in the order `oracle-guard --help` lists them
COMMANDS = {
    "check": "check",
    "score": "score",
    "lock": "lock",
    "freeze": "freeze",
    "seeds": "seeds",
    "signers": "signers",
    "pre-receive": "pre_receive",
    "install-pre-receive": "install_pre_receive",
    "doctor": "doctor",
    "demo": "demo",
    "init": "init",
    "explain": "explain",
    "schema": "schema",
}


class VersionAction(argparse.Action):
    """--version: the version, and the commit it was built from when that is known
    (asked only when --version is given: it may run git)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: Optional[str] = None,
    ) -> None:
        # deferred: 5 ms to import, only for __call__()
        from oracle_guard.build_info import version_line

        print(version_line())
        parser.exit()


def build_parser(command: Optional[str] = None) -> argparse.ArgumentParser:
    """Every command's parser, or only ``command``'s: a run imports only the
    command it runs (help, errors and the rest of argv read the same)."""
    # deferred: under 1 ms to import, only for build_parser()
    from oracle_guard.commands.options import Parser

    parser = Parser(
        prog="oracle-guard",
        description="Keep a repository's test oracle out of reach of the patches it judges.",
    )
    parser.add_argument(
        "--version", action=VersionAction, nargs=0, help="show the version and commit, and exit"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, module in COMMANDS.items():
        if command is None or name == command:
            importlib.import_module(f"oracle_guard.commands.{module}").add_parser(sub)
    return parser


def main(argv: Optional[Sequence[str]] = None, env: Optional[Mapping[str, str]] = None) -> int:
    collecting = gc.isenabled()
    # one short run: what it makes lives till it ends, and cycles are few, so the
    # collector would only walk 100,000 paths over and over
    gc.disable()
    try:
        return _main(argv, env)
    finally:
        if collecting:
            gc.enable()


def _main(argv: Optional[Sequence[str]], env: Optional[Mapping[str, str]]) -> int:
    for stream in (sys.stdout, sys.stderr):
        try:
            # a TextIOWrapper's; a test harness's stand-in may lack it (caught)
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
        except AttributeError:  # replaced by a test harness
            pass
    args = sys.argv[1:] if argv is None else list(argv)
    # the command first: no top-level option (--help, --version) needs the others
    command = args[0] if args and args[0] in COMMANDS else None
    parsed = build_parser(command).parse_args(args)
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


def report_failure(parsed: argparse.Namespace, exc: BaseException) -> int:
    """The one line (and, for the machine formats, the document) a failed run
    prints; every --output file gets its format's error document."""
    # deferred: traceback: 2 ms to import, only for report_failure()
    import traceback

    # deferred: 8 ms to import, only for report_failure()
    from oracle_guard.errors import failure
    from oracle_guard.report import formats as reporters

    failed = failure(exc)
    message = failed.message if failed.expected else f"{failed.message} (rerun with --debug)"
    if getattr(parsed, "debug", False):
        traceback.print_exc()
    outputs = getattr(parsed, "outputs", None)
    if outputs:  # resolved: no file is left holding an earlier run's pass
        # deferred: 2 ms to import, only for report_failure()
        from oracle_guard.report.outputs import write_errors

        write_errors(outputs, message)
    # the machine formats' readers get the failure in their own format too
    sys.stdout.write(reporters.render_error(getattr(parsed, "format", "text"), message))
    # one line, whatever names the message quotes (a contract key, a file name)
    print(reporters.error_line(message), file=sys.stderr)
    return failed.exit_code
