"""Tests that need something this checkout cannot carry: the public suites' data,
root, the Debian packages of the server tier. Such a test is marked
``@pytest.mark.needs("NAME")`` (or its module's ``pytestmark``).

Without it the test is not run: it is deselected, never skipped or passed, and the
run's summary names each missing prerequisite in one line, with how to get it.
With ``ORACLE_GUARD_REQUIRE_ALL=1`` (.ci/run sets it) a missing prerequisite ends the
run before any test, exit 4: CI runs every test or fails."""

from __future__ import annotations

import os
import shutil
from typing import Callable, Dict, Optional

from testing import conformance

REQUIRE_ALL = "ORACLE_GUARD_REQUIRE_ALL"
SERVER_PROGRAMS = ("/usr/sbin/sshd", "gitolite", "lighttpd", "htpasswd", "/usr/bin/python3")


def _root() -> Optional[str]:
    if os.geteuid() == 0:
        return None
    return "root: the server tier adds Unix accounts and runs sshd; run the suite as root"


def _servers() -> Optional[str]:
    absent = [name for name in SERVER_PROGRAMS if shutil.which(name) is None]
    if not absent:
        return None
    return (
        f"the server tier's Debian packages: {', '.join(absent)} not found; "
        "install the packages .ci/run names"
    )


# name: why it is missing, or None
PREREQUISITES: Dict[str, Callable[[], Optional[str]]] = {
    "conformance": conformance.missing,
    "root": _root,
    "servers": _servers,
}


def unmet() -> Dict[str, str]:
    """Each missing prerequisite with its one-line reason."""
    reasons = {name: why() for name, why in PREREQUISITES.items()}
    return {name: reason for name, reason in reasons.items() if reason}
