"""``oracle-guard check``: judge a change with the hooks (every check by default): the
index as ``git commit`` would record it, or a commit (``--head``), against the
revision it started from."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, List

from oracle_guard.check_run import check
from oracle_guard.commands.options import common, judged, resolve_outputs
from oracle_guard.errors import UsageError
from oracle_guard.findings import HOOKS
from oracle_guard.range_run import run_range

if TYPE_CHECKING:
    from oracle_guard.report.outputs import Output

if TYPE_CHECKING:
    from oracle_guard.commands.options import Subparsers


def hook_list(text: str) -> List[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in HOOKS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown hook {', '.join(unknown) or text!r}; choose from {', '.join(HOOKS)}"
        )
    return names


def add_parser(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "check", parents=[common(), judged()], help="run the hooks (every check by default)"
    )
    parser.add_argument(
        "--only",
        type=hook_list,
        metavar="ID[,ID...]",
        help=f"run only these hooks: {', '.join(HOOKS)}",
    )
    parser.add_argument("--base", metavar="REV", help="the revision the change started from")
    parser.add_argument("--head", metavar="REV", help="judge this commit instead of the index")
    parser.add_argument(
        "--target",
        metavar="BRANCH",
        help="the branch the change merges into: the rules come from its tip "
        "and, without --base, the change is compared with the merge-base "
        "(default: $ORACLE_GUARD_TARGET)",
    )
    parser.add_argument(
        "--range",
        metavar="A..B",
        help="judge each commit reachable from B and not from A against its first "
        "parent, one verdict a commit (text or json; not with --base, --head, --target)",
    )
    parser.set_defaults(run=run)


def run(options: argparse.Namespace) -> int:
    # deferred: cli imports this module for its parser; under 1 ms, for a run
    from oracle_guard import progress

    files = resolve_outputs(options)
    progress.started(sys.stderr, options.env)  # a terminal only: never in a report
    try:
        return _run(options, files)
    finally:
        progress.stopped()


def _run(options: argparse.Namespace, files: List[Output]) -> int:
    if options.range is not None:
        return _run_range(options, files)
    return check(
        options.C,
        options.only or HOOKS,
        options.base,
        options.head,
        options.target,
        now=options.now,
        env=options.env,
        output=options.format,
        color=options.color,
        use_cache=not options.no_cache,
        outputs=files,
    )


def _run_range(options: argparse.Namespace, files: List[Output]) -> int:
    named = [
        flag
        for flag, value in (
            ("--base", options.base),
            ("--head", options.head),
            ("--target", options.target),
            ("--output", files),
        )
        if value
    ]
    if named:
        raise UsageError(
            f"--range judges each commit against its first parent: drop {', '.join(named)}"
        )
    return run_range(
        options.C,
        options.range,
        options.only or HOOKS,
        now=options.now,
        env=options.env,
        output=options.format,
        color=options.color,
        use_cache=not options.no_cache,
    )
