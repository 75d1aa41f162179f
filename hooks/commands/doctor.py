"""``oracle-guard doctor REPO``: is this repository guarded? Read-only.

Each line is ``ok: ...`` or ``problem: ...`` (a problem says how to fix it);
the last says ``guarded`` or ``not guarded``. A problem is anything through
which a push could get past the gate, or that rejects every push. The checks
themselves are hosts/setup.py's, which install-pre-receive shares."""

from __future__ import annotations

import argparse
import sys
from typing import IO, TYPE_CHECKING, Optional

from oracle_guard.commands.options import common
from oracle_guard.git.plumbing import Git
from oracle_guard.git.process import trust_repository_owner
from oracle_guard.hosts.probe import SSHD_CONFIG
from oracle_guard.hosts.setup import inspect
from oracle_guard.session import Session

if TYPE_CHECKING:
    from oracle_guard.commands.options import Subparsers


def diagnose(
    repo: str, directory: Optional[str], out: IO[str], sshd_config: str = SSHD_CONFIG
) -> int:
    """Write the lines to ``out``: 0 guarded, 1 not."""
    with Session(Git(repo)) as session:  # the run's state: its git, cache and contracts
        session.git.check_repository()
        lines = inspect(session, repo, directory, sshd_config)
    for line in lines:
        out.write(f"{line}\n")
    problems = sum(not line.ok for line in lines)
    if problems:
        out.write(f"not guarded: {repo}: {problems} problem{'s' if problems != 1 else ''}\n")
        return 1
    out.write(f"guarded: {repo}\n")
    return 0


def add_parser(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "doctor", parents=[common()], help="say whether a server repository is guarded (read-only)"
    )
    parser.add_argument("repo", metavar="REPO", help="the repository, e.g. /srv/git/app.git")
    parser.add_argument(
        "--dir", metavar="DIR", help="the hook is DIR/oracle-guard (as installed with --dir)"
    )
    parser.add_argument(
        "--sshd-config",
        metavar="FILE",
        default=SSHD_CONFIG,
        help="ssh and gitolite: the configuration of the sshd that serves "
        "the repository, read with sshd -T (default: %(default)s)",
    )
    parser.set_defaults(run=run)


def run(options: argparse.Namespace) -> int:
    trust_repository_owner()
    return diagnose(options.repo, options.dir, sys.stdout, options.sshd_config)
