"""Which commit of oracle-guard this is: what ``oracle-guard --version`` names, so a
user whose clone has no tag knows the commit id to pin.

A build from a git checkout records it in the package (setup.py writes BUILD_COMMIT);
an editable install reads it from the checkout's git. Unknown is said by saying
nothing: the version alone, never a guess."""

from __future__ import annotations

import os
import re
import subprocess
from typing import Optional

BUILD_COMMIT = "BUILD_COMMIT"  # the file setup.py writes beside this module
PACKAGE = os.path.dirname(os.path.abspath(__file__))
# a SHA-1 or SHA-256 object id, as git prints it
_OBJECT_ID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def recorded_commit(package: str = PACKAGE) -> Optional[str]:
    """The commit a build recorded in the package, when the file holds exactly one id."""
    try:
        with open(os.path.join(package, BUILD_COMMIT), encoding="ascii") as f:
            text = f.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text if _OBJECT_ID.fullmatch(text) else None


def checkout_commit(package: str = PACKAGE) -> Optional[str]:
    """An editable install's commit: HEAD of the checkout that holds ``package``, when
    that checkout is oracle-guard's own (its setup.cfg names the project), followed by
    ' with local changes' when the package's files differ from it. setup.py records
    it at build time when there are none."""
    top = os.path.dirname(package)
    try:
        with open(os.path.join(top, "setup.cfg"), encoding="utf-8") as f:
            if not re.search(r"^name = oracle-guard$", f.read(), re.M):
                return None
    except (OSError, UnicodeDecodeError):
        return None
    # the checkout's own git: never a repository some folder above it belongs to
    root = _git(top, "rev-parse", "--show-toplevel")
    if root is None or os.path.realpath(root) != os.path.realpath(top):
        return None
    head = _git(top, "rev-parse", "--verify", "-q", "HEAD")
    if head is None or not _OBJECT_ID.fullmatch(head):
        return None
    changes = _git(top, "status", "--porcelain", "--untracked-files=no", "--", package)
    if changes is None:
        return None
    return head + (" with local changes" if changes else "")


def _git(top: str, *args: str) -> Optional[str]:
    """git's output in ``top``, or None on any failure (no git, not a repository)."""
    try:
        done = subprocess.run(
            ["git", "-C", top, *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    try:
        return done.stdout.decode("ascii").strip()
    except UnicodeDecodeError:
        return None


def version_line(package: str = PACKAGE) -> str:
    """``oracle-guard X.Y.Z``, with ``(commit ID)`` when the commit is known."""
    from oracle_guard import __version__  # here: setup.py loads this file on its own

    commit = recorded_commit(package) or checkout_commit(package)
    return f"oracle-guard {__version__}" + (f" (commit {commit})" if commit else "")
