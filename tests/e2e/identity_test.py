"""Owners by a host variable: only the one variable the contract names counts."""

from __future__ import annotations

import pytest

from testing.git import commit, git, run_guard
from testing.oracle import NOW
from testing.server import make_client, make_server, push, push_env, rev

OWNERS = """\
version: 1
seeds:
  - {paths: ["seeds/*.json"], format: json-array}
write_set:
  allow: ["src/**"]
  owners: [alice]
"""


def test_owners_without_identity_env_is_a_contract_error_naming_the_fix(tmp_path, capsys):
    repo = tmp_path / "r"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    commit(repo, {".oracle-guard.yaml": OWNERS, "seeds/a.json": "[1]\n"})
    rc, out, err = run_guard(capsys, repo, "check", "--now", NOW, "--head", "HEAD", env={})
    assert (rc, out) == (2, "")
    assert err == (
        "oracle-guard: error: .oracle-guard.yaml:6: write_set.owners names server "
        "accounts, but no identity_env names the variable your server sets for the "
        "pusher: add identity_env: GL_USERNAME (GitLab), GITEA_PUSHER_NAME (Gitea, "
        "Forgejo), GL_USER (gitolite), GITHUB_USER_LOGIN (GitHub Enterprise Server) "
        "or REMOTE_USER (git http-backend) (the contract in HEAD)\n"
    )


def test_owners_with_identity_env_load(tmp_path, capsys):
    repo = tmp_path / "r"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    commit(
        repo, {".oracle-guard.yaml": OWNERS + "identity_env: GL_USER\n", "seeds/a.json": "[1]\n"}
    )
    rc, out, _ = run_guard(capsys, repo, "check", "--now", NOW, "--head", "HEAD", env={})
    assert rc == 0, out


@pytest.fixture
def gitolite_like(tmp_path):
    """A server whose contract names gitolite's GL_USER."""
    server = make_server(tmp_path / "srv.git")
    client = make_client(tmp_path / "work", server)
    commit(
        client,
        {
            ".oracle-guard.yaml": OWNERS + "identity_env: GL_USER\n",
            "seeds/a.json": "[1]\n",
            "src/app.py": "",
        },
        "the oracle",
    )
    assert push(client, "main").rc == 0
    commit(client, {"seeds/a.json": "[1, 2]\n"}, "append a seed")
    return server, client


@pytest.mark.parametrize(
    "spoofed", ["GL_USERNAME", "GITEA_PUSHER_NAME", "GITHUB_USER_LOGIN", "REMOTE_USER"]
)
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


# -- a hook installed for a host reads that host's variable alone -----------------------
def pinned_server(tmp_path, host: str, identity_env: str):
    from testing.server import install_hook

    server = make_server(tmp_path / "srv.git", hook=False)
    said = install_hook(server, "--host", host)
    assert said.startswith(f"host: {host} (from --host)\n"), said
    client = make_client(tmp_path / "work", server)
    commit(
        client,
        {
            ".oracle-guard.yaml": OWNERS + f"identity_env: {identity_env}\n",
            "seeds/a.json": "[1]\n",
            "src/app.py": "",
        },
        "the oracle",
    )
    assert push(client, "main").rc == 0
    commit(client, {"seeds/a.json": "[1, 2]\n"}, "append a seed")
    return server, client


# hosts whose hook git itself runs from hooks/pre-receive (gitolite's installer needs
# gitolite, and GitLab's and Gitea's folders need their runner: tests/hosts/)
@pytest.mark.parametrize("host, variable", [("http", "REMOTE_USER"), ("ssh", "REMOTE_USER")])
def test_the_hosts_own_variable_names_an_owner(tmp_path, host, variable):
    server, client = pinned_server(tmp_path, host, variable)
    p = push(client, "main", env=push_env(**{variable: "alice"}))
    assert p.rc == 0, p.stderr
    assert "oracle-guard: push accepted: 1 judged ref passed" in p.guard  # it ran
    assert rev(server, "refs/heads/main") == rev(client, "HEAD")


@pytest.mark.parametrize(
    "host, variable",
    [
        ("gitolite", "GL_USER"),
        ("gitlab", "GL_USERNAME"),
        ("gitea", "GITEA_PUSHER_NAME"),
        ("ghes", "GITHUB_USER_LOGIN"),
    ],
)
def test_pre_receive_for_a_host_reads_the_variable_that_host_sets(tmp_path, host, variable):
    """git's protocol on stdin of `oracle-guard pre-receive --host HOST` in the
    server repository, as each host's hook runs it."""
    import subprocess
    import sys

    server = make_server(tmp_path / "srv.git", hook=False)
    client = make_client(tmp_path / "work", server)
    commit(
        client,
        {
            ".oracle-guard.yaml": OWNERS + f"identity_env: {variable}\n",
            "seeds/a.json": "[1]\n",
            "src/app.py": "",
        },
        "the oracle",
    )
    assert push(client, "main").rc == 0
    old = rev(server, "refs/heads/main")
    new = commit(client, {"seeds/a.json": "[1, 2]\n"}, "append a seed")
    git(client, "push", "-q", "origin", "main:refs/heads/incoming")  # the objects, no hook
    line = f"{old} {new} refs/heads/main\n"

    def judged(**variables):
        return subprocess.run(
            [sys.executable, "-m", "oracle_guard", "pre-receive", "--host", host],
            cwd=server,
            input=line,
            text=True,
            env=push_env(**variables),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    owner = judged(**{variable: "alice"})
    assert owner.returncode == 0, owner.stderr
    assert "alice is an owner" in owner.stderr
    stranger = judged(**{variable: "bob"})
    assert stranger.returncode == 1 and "write-denied" in stranger.stderr, stranger.stderr


def test_a_contract_naming_another_hosts_variable_makes_no_owner(tmp_path):
    """A variable the host does not set reaches the hook from whoever can set it
    (a client's SetEnv under sshd's AcceptEnv, a --receive-pack wrapper): on a
    host pinned by the installer only the host's own variable counts, whatever
    the contract names."""
    server, client = pinned_server(tmp_path, "http", "GL_USERNAME")
    old = rev(server, "refs/heads/main")
    p = push(client, "main", env=push_env(GL_USERNAME="alice", REMOTE_USER="bob"))
    assert p.rc != 0
    assert "seeds/a.json: write-denied" in p.stderr, p.stderr
    assert (
        "identity_env GL_USERNAME is not the variable this server sets for the pusher "
        "(REMOTE_USER): nobody is an owner by variable; owners' signatures still count"
    ) in p.stderr
    assert rev(server, "refs/heads/main") == old


def test_ssh_identity_env_can_name_the_variable_the_keys_set(tmp_path):
    from testing.server import install_hook

    server = make_server(tmp_path / "srv.git", hook=False)
    install_hook(server, "--host", "ssh", "--identity-env", "OG_PUSHER")
    assert (
        "pre-receive --host ssh --identity-env OG_PUSHER\n"
        in (server / "hooks" / "pre-receive").read_text()
    )
    client = make_client(tmp_path / "work", server)
    commit(
        client,
        {
            ".oracle-guard.yaml": OWNERS + "identity_env: OG_PUSHER\n",
            "seeds/a.json": "[1]\n",
            "src/app.py": "",
        },
        "the oracle",
    )
    assert push(client, "main").rc == 0
    commit(client, {"seeds/a.json": "[1, 2]\n"}, "append a seed")
    assert push(client, "main", env=push_env(REMOTE_USER="alice")).rc != 0
    assert push(client, "main", env=push_env(OG_PUSHER="alice")).rc == 0


def test_identity_env_is_refused_for_a_host_that_sets_its_own(tmp_path, capsys):
    from oracle_guard.cli import main

    server = make_server(tmp_path / "srv.git", hook=False)
    assert (
        main(
            ["install-pre-receive", str(server), "--host", "gitolite", "--identity-env", "X"],
            env={},
        )
        == 2
    )
    assert capsys.readouterr().err == (
        "oracle-guard: error: --identity-env is for ssh and "
        "plain hosts: gitolite sets GL_USER itself\n"
    )
    assert not (server / "hooks" / "pre-receive").exists()


# -- the clock on a named host is the server's ----------------------------------------
FROZEN = """\
version: 1
freeze:
  - {paths: ["freeze.json"], schema: freeze}
budget:
  max_frozen: 3
  max_days: 30
write_set:
  allow: ["src/**"]
"""


@pytest.mark.parametrize(
    "host, rejected",
    [("ssh", True), ("gitlab", True), ("plain", False)],
    ids=[
        "ssh-reads-the-servers-clock",
        "gitlab-reads-the-servers-clock",
        "plain-reads-the-variable",
    ],
)
def test_oracle_guard_now_from_the_pushers_environment_moves_no_expiry_on_a_host(
    tmp_path, host, rejected
):
    """sshd's AcceptEnv hands a client's ORACLE_GUARD_NOW to the hook: on a named
    host it is ignored, so an entry that expired in 2020 stays expired."""
    import json

    from testing.scenarios import freeze_json
    from testing.server import install_hook

    server = make_server(tmp_path / "srv.git", hook=False)
    # git runs hooks/pre-receive; gitlab's own runner would call the folder's script
    install_hook(server, "--host", host, *(["--dir", "hooks"] if host == "gitlab" else []))
    if host == "gitlab":
        (server / "hooks" / "oracle-guard").rename(server / "hooks" / "pre-receive")
    client = make_client(tmp_path / "work", server)
    commit(
        client,
        {
            ".oracle-guard.yaml": FROZEN,
            "src/app.py": "",
            "freeze.json": json.dumps(freeze_json(expires="2020-01-01")),
        },
    )
    git(server, "fetch", "-q", str(client), "main:main")  # the admin's: no hook runs
    git(client, "fetch", "-q", "origin")
    commit(client, {"src/app.py": "v2\n"}, "honest")
    p = push(client, "main", env=push_env(ORACLE_GUARD_NOW="2019-12-25"))
    assert (p.rc != 0) == rejected, p.stderr
    assert ("budget-expired" in p.stderr) == rejected, p.stderr


def test_pre_receive_now_replays_a_push_at_a_chosen_time(tmp_path):
    import json
    import subprocess
    import sys

    from testing.scenarios import freeze_json

    server = make_server(tmp_path / "srv.git", hook=False)
    client = make_client(tmp_path / "work", server)
    first = commit(
        client,
        {
            ".oracle-guard.yaml": FROZEN,
            "src/app.py": "",
            "freeze.json": json.dumps(freeze_json(expires="2020-01-01")),
        },
    )
    git(server, "fetch", "-q", str(client), "main:main")  # the admin's: no hook runs
    new = commit(client, {"src/app.py": "v2\n"}, "honest")
    git(client, "push", "-q", "origin", "main:refs/heads/incoming")
    line = f"{first} {new} refs/heads/main\n"
    for now, rc in (("2019-12-25", 0), ("2020-06-01", 1)):
        proc = subprocess.run(
            [sys.executable, "-m", "oracle_guard", "pre-receive", "--host", "ssh", "--now", now],
            cwd=server,
            input=line,
            text=True,
            env=push_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert proc.returncode == rc, proc.stderr
