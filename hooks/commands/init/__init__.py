"""``oracle-guard init``: recognise the repository's layout and write the contract,
the fixture lock, editor schemas and the pre-commit hooks for it.

It never stages anything and never overwrites a file without ``--force``; a second
run with nothing new to write changes nothing and says so. This module is the
command's entry; the work is in the modules beside it, which see plain values.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from oracle_guard.commands import options as shared  # run's parameter is called options
from oracle_guard.commands.init.files import REPO_PLACEHOLDER
from oracle_guard.errors import InitError

if TYPE_CHECKING:
    from oracle_guard.commands.options import Subparsers

__all__ = ["InitError", "add_parser", "run"]


def add_parser(sub: Subparsers) -> argparse.ArgumentParser:
    init = sub.add_parser(
        "init",
        parents=[shared.common()],
        help="write a contract, fixture lock and pre-commit (or prek) hooks for this "
        "repository's layout",
    )
    init.add_argument(
        "--layout",
        metavar="NAME",
        help="harness, merge-contract, oracle-dir, pytest or replay-queue (default: the one "
        "recognised)",
    )
    init.add_argument(
        "--force",
        action="store_true",
        help="overwrite files that differ from what init would write",
    )
    init.add_argument(
        "--dry-run", action="store_true", help="print what would be written; write nothing"
    )
    init.add_argument(
        "--repo",
        metavar="URL",
        default=REPO_PLACEHOLDER,
        help="where pre-commit or prek installs oracle-guard from: a URL or a local clone "
        "(default: a placeholder to fill in)",
    )
    init.add_argument(
        "--rev",
        metavar="REV",
        help="the tag or commit of --repo to pin; a local clone must hold it (default: "
        "a local clone's HEAD commit id, else a placeholder)",
    )
    init.add_argument(
        "--allow",
        metavar="PATTERN",
        action="append",
        help="a pattern the write set allows (repeat it for more; default: the "
        "layout example's allow patterns that match a path here)",
    )
    init.add_argument(
        "--ci",
        choices=("github", "gitlab"),
        help="also write the CI recipe, installing oracle-guard from --repo at "
        "--rev (default: none)",
    )
    init.add_argument(
        "--now",
        metavar="TIME",
        help="the clock for the budget check of what is staged "
        "(default: $ORACLE_GUARD_NOW, else the system clock in UTC)",
    )
    init.set_defaults(run=run)
    return init


def run(options: argparse.Namespace) -> int:
    # deferred: cli imports this module for its parser; 41 ms, for a run
    from oracle_guard.commands.init.command import init
    from oracle_guard.commands.init.plan import Settings

    settings = Settings(
        directory=options.C,
        layout=options.layout,
        force=options.force,
        dry_run=options.dry_run,
        repo=options.repo,
        rev=options.rev,
        allow=options.allow,
        ci=options.ci,
        now=options.now,
    )
    return init(settings, options.env)
