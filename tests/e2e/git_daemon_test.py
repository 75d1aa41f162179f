"""pre-receive over the network: a real `git daemon --enable=receive-pack` on
127.0.0.1, started and stopped by the test."""

from __future__ import annotations

import subprocess

import pytest

from testing.git import commit, git, init_repo
from testing.oracle import OWNED_SEEDS as CONTRACT
from testing.server import git_daemon, make_server, push, push_env, rev


@pytest.fixture
def daemon(tmp_path):
    """srv.git with the hook, served by git daemon; the daemon is killed on teardown.
    Its environment is what the hook sees: the pusher's never crosses the wire."""
    served = tmp_path / "served"
    make_server(served / "srv.git")
    with git_daemon(served, push_env()) as running:
        yield running, served / "srv.git"
    assert running.process.poll() is not None  # really stopped


@pytest.fixture
def client(tmp_path, daemon):
    running, server = daemon
    client = init_repo(tmp_path / "work")
    git(client, "remote", "add", "origin", running.url("srv.git"))
    commit(
        client,
        {".oracle-guard.yaml": CONTRACT, "seeds/a.json": [1, 2], "src/app.py": "v1\n"},
        "oracle",
    )
    p = push(client, "main")
    assert p.rc == 0, p.stderr
    return client


def test_legitimate_push_over_git_daemon_is_accepted(daemon, client):
    _, server = daemon
    new = commit(client, {"src/app.py": "v2\n"}, "src")
    p = push(client, "main")
    assert p.rc == 0, p.stderr
    assert rev(server, "refs/heads/main") == new


def test_bad_push_over_git_daemon_is_rejected_with_the_reason(daemon, client):
    _, server = daemon
    old = rev(server, "refs/heads/main")
    bad = commit(client, {"seeds/a.json": [1, 9]}, "rewrite a seed")
    p = push(client, "main")
    assert p.rc != 0
    assert "! [remote rejected] main -> main (pre-receive hook declined)" in p.stderr, p.stderr
    assert f"remote: oracle-guard: refs/heads/main ({bad[:12]}): seeds/a.json:" in p.stderr
    assert p.findings() == [
        "refs/heads/main: seeds/a.json: seed-rewritten",
        "refs/heads/main: seeds/a.json: write-denied",
    ], p.stderr
    assert (
        "remote: oracle-guard: push rejected: 2 problems in 1 of 1 judged ref; "
        "no ref was updated" in p.stderr
    )
    assert rev(server, "refs/heads/main") == old
    missing = subprocess.run(["git", "-C", str(server), "cat-file", "-e", bad])
    assert missing.returncode != 0  # the quarantined objects went with the push


def test_two_refs_over_git_daemon_one_bad_nothing_moves(daemon, client):
    _, server = daemon
    old = rev(server, "refs/heads/main")
    commit(client, {"src/app.py": "v2\n"}, "src")
    git(client, "checkout", "-q", "-b", "feature")
    commit(client, {"README.md": "x\n"}, "outside")
    p = push(client, "main", "feature")
    assert p.rc != 0
    assert p.findings() == ["refs/heads/feature: README.md: write-outside-set"], p.stderr
    assert rev(server, "refs/heads/main") == old
    assert rev(server, "refs/heads/feature") is None


def test_pushers_environment_does_not_cross_the_wire(daemon, client):
    # over git:// the hook sees the daemon's environment: GL_USERNAME set by the
    # pusher names nobody, so an owner-only change is still denied
    _, server = daemon
    old = rev(server, "refs/heads/main")
    commit(client, {"seeds/a.json": [1, 2, 3]}, "append a seed")
    p = push(client, "main", env=push_env(GL_USERNAME="alice"))
    assert p.rc != 0
    assert p.findings() == ["refs/heads/main: seeds/a.json: write-denied"], p.stderr
    assert rev(server, "refs/heads/main") == old


def test_the_daemon_is_stopped_by_its_own_pid(tmp_path):
    """The pid the tests stop is the server's: no git-daemon outlives the block."""
    import os

    served = tmp_path / "served"
    served.mkdir()
    with git_daemon(served, push_env()) as daemon:
        pid = daemon.process.pid
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            assert f.read().split(b"\0")[0].endswith(b"git-daemon")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return
    raise AssertionError(f"git-daemon {pid} is still running")
