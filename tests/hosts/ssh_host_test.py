"""Plain git over a real sshd on 127.0.0.1 with ONE shared account: login shell
git-shell, bare repositories in its home, the hook installed by root with
`install-pre-receive REPO --host ssh`, and the pusher named per key in
authorized_keys (`restrict,environment="REMOTE_USER=alice" ...`)."""

from __future__ import annotations

import itertools
import sys

import pytest

from testing.git import clean_environment, commit, git, init_repo
from testing.hosts import (
    CATALOGUE,
    IDENTITY_VARIABLES,
    SEEDS,
    SPOOF_ACCEPT_ENV,
    SharedSshHost,
    Templates,
    authorize,
    doctor_verdict,
    gone,
    judge_case,
    keygen,
    public,
    run_as,
    spoof_rejected,
    sshd,
    system_account,
)

# real accounts and servers (testing/prerequisites.py)
pytestmark = pytest.mark.needs("root", "servers")

numbers = itertools.count()


def key_lines(keys, options="restrict,"):
    return [
        f'{options}environment="REMOTE_USER={name}" {public(key)}' for name, key in keys.items()
    ]


def assert_guarded(host, repo):
    doctor_verdict(host.doctor(repo), repo, True)


def assert_not_guarded(host, repo, *problems):
    return doctor_verdict(host.doctor(repo), repo, False, *problems)


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ssh-keys")
    return {name: keygen(folder, name) for name in ("alice", "bob")}


@pytest.fixture(scope="module")
def host(hosts_base, hook_python, keys):
    """The good setup: git-shell, a restricted key per person naming them."""
    with (
        clean_environment(),
        system_account("ogs", shell="/usr/bin/git-shell", base=hosts_base) as account,
    ):
        authorize(account, key_lines(keys))
        with sshd(hosts_base / f"sshd-{account.name}", [account.name]) as server:
            yield SharedSshHost(account, server, keys, hook_python)
            pid = server.process.pid
    assert gone(pid)


@pytest.fixture
def broken(hosts_base, hook_python, keys):
    """The broken setup: login shell /bin/sh, keys without a forced command, the
    hooks folder the account's own."""
    with system_account("ogb", shell="/bin/sh", base=hosts_base) as account:
        authorize(account, key_lines(keys, options=""))
        with sshd(hosts_base / f"sshd-{account.name}", [account.name]) as server:
            yield SharedSshHost(account, server, keys, hook_python)
            pid = server.process.pid
    assert gone(pid)


@pytest.fixture(scope="module")
def seeded(host, tmp_path_factory):
    """One guarded repository, its contract pushed by alice (judged by the hook),
    copied for each test's site."""

    def make(_):
        repo = host.create("seeded")
        installed = host.install(repo)
        assert installed.returncode == 0, installed.stdout + installed.stderr
        site = host.site("seeded", tmp_path_factory.mktemp("seeded"))
        site.seed("REMOTE_USER")
        return site

    return Templates(make)


@pytest.fixture
def site(host, seeded, tmp_path):
    """A fresh guarded repository as it stands after alice's first contract;
    doctor must still call it guarded at teardown."""
    name = f"r{next(numbers)}"
    fresh = host.site(name, tmp_path)
    site = seeded.site("ssh", fresh.repo, fresh.client, fresh.remote, fresh.server_git)
    yield site
    assert_guarded(host, site.repo)


# -- installation --------------------------------------------------------------
def test_installer_names_the_host_and_writes_a_root_owned_hook(host):
    repo = host.create(f"r{next(numbers)}")
    installed = host.install(repo)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert installed.stdout.splitlines()[0] == "host: ssh (from --host)", installed.stdout
    warnings = [line for line in installed.stdout.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1 and "the repository is empty" in warnings[0], installed.stdout
    hook = repo / "hooks" / "pre-receive"
    assert hook.stat().st_uid == 0 and not hook.stat().st_mode & 0o022
    assert f"{host.python} -I -m oracle_guard pre-receive --host ssh" in hook.read_text()


def test_writable_hooks_folder_is_warned_about_and_not_guarded(host):
    repo = host.create(f"r{next(numbers)}", lock_hooks=False)
    installed = host.install(repo)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    warnings = [line for line in installed.stdout.splitlines() if line.startswith("warning: ")]
    assert any("hooks" in line and "chown" in line for line in warnings), installed.stdout
    assert_not_guarded(host, repo, "can rewrite")


def test_hook_interpreter_the_account_cannot_run_is_a_problem(host, tmp_path):
    # the project's own venv lives under /root (0700): the account gets
    # 'bad interpreter: Permission denied', and git refuses every push
    repo = host.create(f"r{next(numbers)}")
    installed = host.install(repo, python=sys.executable)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    said = assert_not_guarded(host, repo)
    assert any("Permission denied" in line for line in said), said
    site = host.site(repo.stem, tmp_path)
    init_repo(site.client)
    git(site.client, "remote", "add", "origin", site.remote)
    commit(site.client, {"src/app.py": "v1\n"}, "first")
    pushed = site.push("alice", "main")
    assert pushed.rc != 0 and "Permission denied" in pushed.stderr, pushed.stderr


# -- the catalogue --------------------------------------------------------------
@pytest.mark.parametrize("case", CATALOGUE, ids=[case.name for case in CATALOGUE])
def test_catalogue(site, case):
    judge_case(site, case)


# -- spoofing --------------------------------------------------------------------
@pytest.mark.parametrize("variable", IDENTITY_VARIABLES)
def test_setenv_of_an_identity_variable_does_not_make_the_agent_an_owner(site, variable):
    site.commit({SEEDS: "[1, 2, 3]\n"}, "append")
    spoof_rejected(
        site, site.push("bob", "HEAD:refs/heads/main", ssh_options=[f"SetEnv={variable}=alice"])
    )


@pytest.mark.parametrize("variable", IDENTITY_VARIABLES)
def test_push_option_naming_an_owner_does_not_make_the_agent_one(site, variable):
    site.commit({SEEDS: "[1, 2, 3]\n"}, "append")
    pushed = site.push("bob", "-o", f"{variable}=alice", "HEAD:refs/heads/main")
    assert "does not support push options" not in pushed.stderr  # they were sent
    spoof_rejected(site, pushed)


def test_receive_pack_with_variables_is_refused_by_git_shell(site):
    site.commit({SEEDS: "[1, 2, 3]\n"}, "append")
    before = site.rev("refs/heads/main")
    pushed = site.push(
        "bob", "--receive-pack=REMOTE_USER=alice git-receive-pack", "HEAD:refs/heads/main"
    )
    assert pushed.rc != 0
    assert "unrecognized command" in pushed.stderr, pushed.stderr
    assert site.rev("refs/heads/main") == before


def test_commit_author_named_alice_does_not_make_the_agent_an_owner(site):
    site.commit({SEEDS: "[1, 2, 3]\n"}, "append")
    spoof_rejected(
        site,
        site.push(
            "bob",
            "HEAD:refs/heads/main",
            git_options=["-c", "user.name=alice"],
            GIT_AUTHOR_NAME="alice",
            GIT_COMMITTER_NAME="alice",
        ),
    )


def test_git_shell_gives_the_agent_no_shell(host):
    proc = host.sshd.ssh(host.keys["bob"], host.account, "echo pwned > pwned")
    assert proc.returncode != 0 and b"pwned" not in proc.stdout
    assert not (host.account.home / "pwned").exists()


# -- what OpenSSH 9.2 does with SetEnv against a key's environment= --------------
@pytest.fixture
def probe(hosts_base, keys):
    """An account with a shell, to print the session's environment: alice's key
    names her, bob's key has no environment= option."""
    with system_account("ogp", shell="/bin/sh", base=hosts_base) as account:
        authorize(
            account,
            [f'environment="REMOTE_USER=alice" {public(keys["alice"])}', public(keys["bob"])],
        )
        with sshd(
            hosts_base / f"sshd-{account.name}", [account.name], accept_env=SPOOF_ACCEPT_ENV
        ) as server:
            yield account, server
            pid = server.process.pid
    assert gone(pid)


def _remote_user(probe, key, *options):
    account, server = probe
    proc = server.ssh(key, account, "printf '%s' \"${REMOTE_USER-unset}\"", *options)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.decode()


def test_key_environment_option_wins_over_client_setenv(probe, keys):
    assert _remote_user(probe, keys["alice"]) == "alice"
    assert _remote_user(probe, keys["alice"], "SetEnv=REMOTE_USER=mallory") == "alice"


def test_client_setenv_names_anyone_when_the_key_has_no_environment_option(probe, keys):
    # so under AcceptEnv *, every key of the account must carry environment=
    assert _remote_user(probe, keys["bob"]) == "unset"
    assert _remote_user(probe, keys["bob"], "SetEnv=REMOTE_USER=alice") == "alice"


# -- the broken setup: /bin/sh, no forced command ---------------------------------
def test_broken_setup_installer_warns_and_doctor_says_not_guarded(broken):
    repo = broken.create("app", lock_hooks=False)
    installed = broken.install(repo)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    warnings = [line for line in installed.stdout.splitlines() if line.startswith("warning: ")]
    assert any("git-shell" in line for line in warnings), installed.stdout
    assert any("no forced command" in line for line in warnings), installed.stdout
    assert any("hooks" in line and "chown" in line for line in warnings), installed.stdout
    assert_not_guarded(broken, repo, "/bin/sh", "can rewrite")


def test_broken_setup_lets_receive_pack_variables_spoof_the_owner(broken, tmp_path):
    repo = broken.create("app")
    assert broken.install(repo).returncode == 0
    site = broken.site("app", tmp_path)
    site.seed("REMOTE_USER")
    site.commit({SEEDS: "[1, 2, 3]\n"}, "append")
    spoof_rejected(site, site.push("bob", "HEAD:refs/heads/main"))  # the near-miss
    pushed = site.push(
        "bob", "--receive-pack=REMOTE_USER=alice git-receive-pack", "HEAD:refs/heads/main"
    )
    assert pushed.rc == 0, pushed.stderr  # the shell ran the assignment: bob is alice
    assert site.rev("refs/heads/main") == git(site.client, "rev-parse", "HEAD").strip()
    assert_not_guarded(broken, repo, "/bin/sh")


def test_broken_setup_lets_the_agent_rewrite_the_hook(broken, tmp_path):
    repo = broken.create("app", lock_hooks=False)
    assert broken.install(repo).returncode == 0
    site = broken.site("app", tmp_path)
    site.seed("REMOTE_USER")
    site.commit({SEEDS: "[1, 9]\n"}, "rewrite a seed")
    assert site.push("bob", "HEAD:refs/heads/main").rc != 0  # the near-miss
    proc = broken.sshd.ssh(
        broken.keys["bob"],
        broken.account,
        "rm -f app.git/hooks/pre-receive && "
        "printf '#!/bin/sh\\nexit 0\\n' > app.git/hooks/pre-receive && "
        "chmod +x app.git/hooks/pre-receive",
    )
    assert proc.returncode == 0, proc.stderr
    pushed = site.push("bob", "HEAD:refs/heads/main")
    assert pushed.rc == 0 and not pushed.guard, pushed.stderr
    assert_not_guarded(broken, repo)


def test_identity_env_other_than_the_hosts_makes_nobody_an_owner_by_variable(host, tmp_path):
    # a contract naming GL_USERNAME on plain ssh: SetEnv could send it
    repo = host.create(f"r{next(numbers)}")
    assert host.install(repo).returncode == 0
    site = host.site(repo.stem, tmp_path)
    site.seed("GL_USERNAME")
    site.commit({SEEDS: "[1, 2, 3]\n"}, "append")
    spoof_rejected(
        site, site.push("bob", "HEAD:refs/heads/main", ssh_options=["SetEnv=GL_USERNAME=alice"])
    )
    spoof_rejected(site, site.push("alice", "HEAD:refs/heads/main"))
    git(site.client, "reset", "-q", "--hard", "HEAD~1")
    site.signed({SEEDS: "[1, 2, 3]\n"}, "alice")
    assert site.push("bob", "HEAD:refs/heads/main").rc == 0  # signatures still work
    assert_not_guarded(host, repo, "identity_env")


# -- a key that names nobody: under AcceptEnv, its holder names anyone -------------
@pytest.fixture
def unnamed_key(hosts_base, hook_python, keys):
    """git-shell, but bob's key carries no environment= option."""
    with system_account("ogk", shell="/usr/bin/git-shell", base=hosts_base) as account:
        authorize(
            account,
            [
                f'restrict,environment="REMOTE_USER=alice" {public(keys["alice"])}',
                f"restrict {public(keys['bob'])}",
            ],
        )
        with sshd(
            hosts_base / f"sshd-{account.name}", [account.name], accept_env=SPOOF_ACCEPT_ENV
        ) as server:
            yield SharedSshHost(account, server, keys, hook_python)
            pid = server.process.pid
    assert gone(pid)


def test_a_key_without_environment_lets_setenv_name_an_owner_and_doctor_says_so(
    unnamed_key, tmp_path
):
    repo = unnamed_key.create("app")
    assert unnamed_key.install(repo).returncode == 0
    site = unnamed_key.site("app", tmp_path)
    site.seed("REMOTE_USER")
    site.commit({SEEDS: "[1, 2, 3]\n"}, "append a seed")
    # the door: sshd takes bob's own REMOTE_USER, since his key sets none
    p = site.push("bob", "main", ssh_options=("SetEnv=REMOTE_USER=alice",))
    assert p.rc == 0 and "alice is an owner" in p.stderr, p.stderr
    said = assert_not_guarded(unnamed_key, repo, "set no REMOTE_USER")
    assert any("(line 2) set no REMOTE_USER" in line for line in said), said


# -- what doctor must not call guarded (issue 32) -------------------------------------
def test_core_hooks_path_in_the_accounts_global_config_is_a_problem(host, tmp_path):
    """git serves the push as the account, whose ~/.gitconfig core.hooksPath points
    git at another folder: the hook never runs. doctor reads it as that account."""
    repo = host.create(f"r{next(numbers)}")
    assert host.install(repo).returncode == 0
    site = host.site(repo.stem, tmp_path)
    site.seed("REMOTE_USER")
    site.commit({SEEDS: "[1, 9]\n"}, "rewrite a seed")
    assert site.push("bob", "HEAD:refs/heads/main").rc != 0  # the near miss: judged
    assert_guarded(host, repo)
    config = ["git", "config", "--global", "core.hooksPath", "/nonexistent"]
    run_as(host.account, config, check=True)
    try:
        said = assert_not_guarded(host, repo, "core.hooksPath is set for")
        assert any("/nonexistent (file:" in line for line in said), said
        pushed = site.push("bob", "HEAD:refs/heads/main")
        assert pushed.rc == 0 and not pushed.guard, pushed.stderr  # what it names is real
    finally:
        (host.account.home / ".gitconfig").unlink()
    assert_guarded(host, repo)


@pytest.fixture
def no_user_environment(hosts_base, hook_python, keys):
    """Keys that name their person, but sshd without PermitUserEnvironment, and an
    AcceptEnv that takes REMOTE_USER: the keys' environment= is ignored."""
    with system_account("ogn", shell="/usr/bin/git-shell", base=hosts_base) as account:
        authorize(account, key_lines(keys))
        with sshd(
            hosts_base / f"sshd-{account.name}",
            [account.name],
            accept_env=SPOOF_ACCEPT_ENV,
            permit_user_environment="no",
        ) as server:
            yield SharedSshHost(account, server, keys, hook_python)
            pid = server.process.pid
    assert gone(pid)


def test_setenv_names_an_owner_without_permit_user_environment_and_doctor_says_so(
    no_user_environment, tmp_path
):
    host = no_user_environment
    repo = host.create("app")
    assert host.install(repo).returncode == 0
    site = host.site("app", tmp_path)
    site.seed("REMOTE_USER", push_as="alice")
    site.commit({SEEDS: "[1, 2, 3]\n"}, "append a seed")
    spoof_rejected(site, site.push("alice", "HEAD:refs/heads/main"))  # her key names nobody
    pushed = site.push("bob", "HEAD:refs/heads/main", ssh_options=("SetEnv=REMOTE_USER=alice",))
    assert pushed.rc == 0, pushed.stderr  # the door: bob's own REMOTE_USER
    assert_not_guarded(
        host,
        repo,
        "has PermitUserEnvironment no",
        "accepts the client's variables GL_* REMOTE_USER GITEA_* GITHUB_* (AcceptEnv)",
    )


@pytest.fixture
def forced(hosts_base, hook_python, keys, request):
    """/bin/sh as the login shell, and a forced command on every key: ``request.param``."""
    with system_account("ogf", shell="/bin/sh", base=hosts_base) as account:
        authorize(account, key_lines(keys, options=f"restrict,command={request.param},"))
        with sshd(hosts_base / f"sshd-{account.name}", [account.name]) as server:
            yield SharedSshHost(account, server, keys, hook_python)
            pid = server.process.pid
    assert gone(pid)


EVAL = '"eval \\"$SSH_ORIGINAL_COMMAND\\""'
GIT_SHELL = '"git-shell -c \\"$SSH_ORIGINAL_COMMAND\\""'


@pytest.mark.parametrize("forced", [EVAL], indirect=True)
def test_a_forced_command_that_runs_the_clients_is_no_forced_command(forced, tmp_path):
    repo = forced.create("app")
    assert forced.install(repo).returncode == 0
    site = forced.site("app", tmp_path)
    site.seed("REMOTE_USER")
    site.commit({SEEDS: "[1, 2, 3]\n"}, "append")
    spoof_rejected(site, site.push("bob", "HEAD:refs/heads/main"))
    pushed = site.push(
        "bob", "--receive-pack=REMOTE_USER=alice git-receive-pack", "HEAD:refs/heads/main"
    )
    assert pushed.rc == 0, pushed.stderr  # eval ran the assignment: bob is alice
    assert_not_guarded(forced, repo, "no forced command that runs git-shell or gitolite-shell")


@pytest.mark.parametrize("forced", [GIT_SHELL], indirect=True)
def test_git_shell_as_the_forced_command_counts(forced, tmp_path):
    """The near miss: git-shell refuses the command with the assignment."""
    repo = forced.create("app")
    assert forced.install(repo).returncode == 0
    site = forced.site("app", tmp_path)
    site.seed("REMOTE_USER")
    site.commit({SEEDS: "[1, 2, 3]\n"}, "append")
    pushed = site.push(
        "bob", "--receive-pack=REMOTE_USER=alice git-receive-pack", "HEAD:refs/heads/main"
    )
    assert (
        pushed.rc != 0
        and site.rev("refs/heads/main") != git(site.client, "rev-parse", "HEAD").strip()
    ), pushed.stderr
    said = forced.doctor(repo).stdout
    assert "has git-shell or gitolite-shell as its forced command" in said, said
    assert_guarded(forced, repo)


@pytest.fixture
def git_config_variables(hosts_base, hook_python, keys):
    with system_account("ogc", shell="/usr/bin/git-shell", base=hosts_base) as account:
        authorize(account, key_lines(keys))
        with sshd(
            hosts_base / f"sshd-{account.name}",
            [account.name],
            accept_env="LANG LC_* GIT_PROTOCOL GIT_CONFIG_GLOBAL GIT_CONFIG_NOSYSTEM",
        ) as server:
            yield SharedSshHost(account, server, keys, hook_python)
            pid = server.process.pid
    assert gone(pid)


def test_accept_env_naming_git_config_global_is_a_problem(git_config_variables):
    repo = git_config_variables.create("app")
    assert git_config_variables.install(repo).returncode == 0
    said = assert_not_guarded(git_config_variables, repo, "GIT_CONFIG_GLOBAL GIT_CONFIG_NOSYSTEM")
    assert any(
        "let a pusher's SetEnv set GIT_CONFIG_GLOBAL GIT_CONFIG_NOSYSTEM" in line for line in said
    ), said
