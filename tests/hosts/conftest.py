"""Real-server tier: accounts, a hook venv, sshd and gitolite3 on 127.0.0.1.
Needs root and the Debian packages openssh-server gitolite3 (.ci/run installs them)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from testing.hosts import SHARED_HOSTS, hook_venv, shared_hook_venv, world_base


@pytest.fixture(scope="session")
def hosts_base():
    """One 0755 folder under /var/tmp for the session: every account can traverse it."""
    from testing.processes import stop_survivors

    base = world_base()
    yield base
    left = stop_survivors(str(base))
    shutil.rmtree(base, ignore_errors=True)
    assert not left, f"processes outlived the host tier: {left}"


@pytest.fixture(scope="session")
def hook_python(request, hosts_base) -> Path:
    """The python of a venv made with /usr/bin/python3 with this project installed
    (once a run: xdist's workers share one, tests/conftest.py): hooks run by other
    accounts cannot run /root/.pyenv's."""
    shared = getattr(request.config, "workerinput", {}).get(SHARED_HOSTS)
    if shared:
        return shared_hook_venv(Path(shared))
    return hook_venv(hosts_base)
