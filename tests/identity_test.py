"""Owners by a host variable: only the one variable the contract names counts."""
from __future__ import annotations

import pytest

from testing.git import commit, git, run_guard
from testing.server import make_client, make_server, push, push_env, rev

OWNERS = """\
version: 1
seeds:
  - {paths: ["seeds/*.json"], format: json-array}
write_set:
  allow: ["src/**"]
  owners: [alice]
"""
NOW = "2026-09-25"


def test_owners_without_identity_env_is_a_contract_error_naming_the_fix(tmp_path, capsys):
    repo = tmp_path / "r"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    commit(repo, {".oracle-guard.yaml": OWNERS, "seeds/a.json": "[1]\n"})
    rc, out, err = run_guard(capsys, repo, "check", "--now", NOW, "--head", "HEAD", env={})
    assert (rc, out) == (2, "")
    assert err == ("oracle-guard: error: .oracle-guard.yaml:6: write_set.owners names server "
                   "accounts, but no identity_env names the variable your server sets for the "
                   "pusher: add identity_env: GL_USERNAME (GitLab), GITEA_PUSHER_NAME (Gitea, "
                   "Forgejo), GL_USER (gitolite), GITHUB_USER_LOGIN (GitHub Enterprise Server) "
                   "or REMOTE_USER (git http-backend) (the contract in HEAD)\n")


def test_owners_with_identity_env_load(tmp_path, capsys):
    repo = tmp_path / "r"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    commit(repo, {".oracle-guard.yaml": OWNERS + "identity_env: GL_USER\n",
                  "seeds/a.json": "[1]\n"})
    rc, out, _ = run_guard(capsys, repo, "check", "--now", NOW, "--head", "HEAD", env={})
    assert rc == 0, out


@pytest.fixture
def gitolite_like(tmp_path):
    """A server whose contract names gitolite's GL_USER."""
    server = make_server(tmp_path / "srv.git")
    client = make_client(tmp_path / "work", server)
    commit(client, {".oracle-guard.yaml": OWNERS + "identity_env: GL_USER\n",
                    "seeds/a.json": "[1]\n", "src/app.py": ""}, "the oracle")
    assert push(client, "main").rc == 0
    commit(client, {"seeds/a.json": "[1, 2]\n"}, "append a seed")
    return server, client


@pytest.mark.parametrize("spoofed", ["GL_USERNAME", "GITEA_PUSHER_NAME", "GITHUB_USER_LOGIN",
                                     "REMOTE_USER"])
def test_another_hosts_variable_naming_an_owner_does_not_count(gitolite_like, spoofed):
    server, client = gitolite_like
    before = rev(server, "refs/heads/main")
    p = push(client, "main", env=push_env(GL_USER="bot", **{spoofed: "alice"}))
    assert p.rc != 0 and "refs/heads/main: seeds/a.json: write-denied" in p.findings(), p.stderr
    assert rev(server, "refs/heads/main") == before


def test_the_named_variable_naming_an_owner_counts(gitolite_like):
    server, client = gitolite_like
    p = push(client, "main", env=push_env(GL_USER="alice", GL_USERNAME="bot"))
    assert p.rc == 0, p.stderr
