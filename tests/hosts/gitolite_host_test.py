"""gitolite3 over a real sshd on 127.0.0.1: the common hook (LOCAL_CODE) and
repo-specific-hooks routes, installed by the gitolite account with
`install-pre-receive --host gitolite`, judged by real pushes with alice's
(owner) and bob's (agent) keys."""

from __future__ import annotations

import itertools
import os
import subprocess

import pytest

from testing.git import clean_environment, git
from testing.hosts import (
    CATALOGUE,
    DENIED,
    GITOLITE_CONF,
    IDENTITY_VARIABLES,
    SEEDS,
    Site,
    Templates,
    doctor_verdict,
    gitolite_host,
    gone,
    judge_case,
    spoof_rejected,
)

# real accounts and servers (testing/prerequisites.py)
pytestmark = pytest.mark.needs("root", "servers")

ENABLE_REPO_HOOKS = ("# 'repo-specific-hooks',", "'repo-specific-hooks',")
numbers = itertools.count()


def install(host, python, *args):
    """`install-pre-receive ~/repositories --host gitolite` as the gitolite account."""
    return host.run(
        python,
        "-m",
        "oracle_guard",
        "install-pre-receive",
        host.repositories,
        "--host",
        "gitolite",
        *args,
        check=False,
    )


def doctor(host, python, repo):
    """As root, as docs/how-to/server-gitolite.md says: sshd's configuration is root's to read."""
    return subprocess.run(
        [
            str(python),
            "-m",
            "oracle_guard",
            "doctor",
            str(repo),
            "--sshd-config",
            str(host.sshd.config),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd="/",
        timeout=120,
    )


def assert_guarded(host, python, repo):
    doctor_verdict(doctor(host, python, repo), repo, True)


def assert_not_guarded(host, python, repo, *problems):
    return doctor_verdict(doctor(host, python, repo), repo, False, *problems)


def new_repo(host, name):
    """A wild repository created by alice's first access, HEAD set to main by the
    admin (gitolite creates it with HEAD on master)."""
    proc = subprocess.run(
        ["git", "ls-remote", host.url(name)],
        env=host.env("alice"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    host.run("git", "--git-dir", host.repo(name), "symbolic-ref", "HEAD", "refs/heads/main")
    return host.repo(name)


def site_for(host, name, tmp_path):
    repo = host.repo(name)
    return Site(
        tmp_path / f"work-{name.replace('/', '-')}",
        host.url(name),
        repo,
        host.keys,
        host.env,
        lambda *a: host.run("git", "--git-dir", repo, *a, check=False),
    )


@pytest.fixture(scope="module")
def gitolite(hosts_base, hook_python, tmp_path_factory):
    """One gitolite with both routes enabled and oracle-guard installed, for the
    module; its sshd is stopped by pid at the end."""
    with (
        clean_environment(),
        gitolite_host(hosts_base, tmp_path_factory.mktemp("gl"), conf=GITOLITE_CONF) as host,
    ):
        host.edit_rc(*ENABLE_REPO_HOOKS)
        installed = install(host, hook_python)
        assert installed.returncode == 0, installed.stdout + installed.stderr
        host.configure(GITOLITE_CONF)  # a compile after install: rs/ repos get the driver
        yield host, installed
        pid = host.sshd.process.pid
    assert gone(pid)


@pytest.fixture
def fresh_gitolite(hosts_base, tmp_path):
    """A gitolite of its own for a test that changes the rc, hooks or conf."""
    with gitolite_host(hosts_base, tmp_path / "gl", conf=GITOLITE_CONF) as host:
        yield host
        pid = host.sshd.process.pid
    assert gone(pid)


@pytest.fixture(scope="module")
def seeded(gitolite, tmp_path_factory):
    """Per route, one wild repository gitolite created and alice's first contract
    pushed into it (judged by the hook), copied for each test's site."""
    host, _ = gitolite

    def make(route):
        name = f"{route}/seeded"
        new_repo(host, name)
        site = site_for(host, name, tmp_path_factory.mktemp(f"seeded-{route}"))
        site.seed("GL_USER")
        return site

    return Templates(make)


@pytest.fixture(params=["t", "rs"], ids=["common-hook", "repo-specific-hook"])
def site(request, gitolite, seeded, hook_python, tmp_path):
    """A fresh repository by either route as it stands after alice's first
    contract; at teardown doctor must still call it guarded."""
    host, _ = gitolite
    name = f"{request.param}/r{next(numbers)}"
    fresh = site_for(host, name, tmp_path)
    site = seeded.site(request.param, fresh.repo, fresh.client, fresh.remote, fresh.server_git)
    yield site
    assert_guarded(host, hook_python, site.repo)


# -- installation ----------------------------------------------------------------
def test_installer_names_the_host_writes_common_and_repo_specific_hooks(gitolite):
    host, installed = gitolite
    out = installed.stdout
    assert out.splitlines()[0] == "host: gitolite (from --host)", out
    local = host.account.home / "local" / "hooks"
    assert os.access(local / "common" / "pre-receive", os.X_OK)
    assert os.access(local / "repo-specific" / "oracle-guard", os.X_OK)
    assert any(line.strip().startswith("LOCAL_CODE") for line in host.rc.read_text().splitlines())


def test_installer_warns_on_an_empty_repository_with_head_on_master(gitolite):
    # gap (c): gitolite's own 'testing' repository is empty with HEAD on master
    _, installed = gitolite
    warnings = [line for line in installed.stdout.splitlines() if line.startswith("warning: ")]
    assert any(
        "testing" in line and "symbolic-ref HEAD refs/heads/main" in line for line in warnings
    ), installed.stdout


def test_existing_repository_app_is_guarded_by_the_common_hook(gitolite, hook_python, tmp_path):
    host, _ = gitolite
    host.run("git", "--git-dir", host.repo("app"), "symbolic-ref", "HEAD", "refs/heads/main")
    site = site_for(host, "app", tmp_path)
    site.seed("GL_USER")
    site.commit({SEEDS: "[1, 9]\n"}, "rewrite")
    pushed = site.push("bob", "HEAD:refs/heads/main")
    assert pushed.rc != 0
    assert "remote: oracle-guard: refs/heads/main (" in pushed.stderr, pushed.stderr
    seeded = git(site.client, "rev-parse", "HEAD~1").strip()
    site.commit({SEEDS: "[1, 2]\n"}, "undo")
    # the rewrite would still be recorded in history: dropped, the push passes
    undone = site.push("bob", "HEAD:refs/heads/main")
    assert undone.rc != 0 and "oracle-edit-undone" in undone.stderr, undone.stderr
    git(site.client, "reset", "-q", "--hard", seeded)
    site.commit({"src/app.py": "v2\n"}, "honest")
    assert site.push("bob", "HEAD:refs/heads/main").rc == 0
    assert_guarded(host, hook_python, host.repo("app"))


def test_repo_specific_route_runs_oracle_guard_through_gitolites_driver(gitolite):
    host, _ = gitolite
    name = f"rs/r{next(numbers)}"
    repo = new_repo(host, name)
    hooks = repo / "hooks"
    assert os.readlink(hooks / "pre-receive").endswith("/multi-hook-driver")
    assert os.readlink(hooks / "pre-receive.h00-oracle-guard").endswith(
        "/hooks/repo-specific/oracle-guard"
    )


# -- the catalogue --------------------------------------------------------------
@pytest.mark.parametrize("case", CATALOGUE, ids=[case.name for case in CATALOGUE])
def test_catalogue(site, case):
    judge_case(site, case)


@pytest.mark.parametrize(
    "site", ["t"], indirect=True, ids=["common-hook"]
)  # same hook either route
# -- spoofing ----------------------------------------------------------------------
@pytest.mark.parametrize("variable", IDENTITY_VARIABLES)
def test_setenv_of_an_identity_variable_does_not_make_the_agent_an_owner(site, variable):
    site.commit({SEEDS: "[1, 2, 3]\n"}, "append")
    spoof_rejected(
        site, site.push("bob", "HEAD:refs/heads/main", ssh_options=[f"SetEnv={variable}=alice"])
    )


def test_setenv_reaches_the_server_under_acceptenv_star(gitolite, tmp_path):
    """The near-miss of the SetEnv tests: the variable does arrive (a hook that
    printed it would see it), so the rejections above are the guard's doing."""
    host, _ = gitolite
    proc = host.sshd.ssh(host.keys["bob"], host.account, "info", "SetEnv=GL_USERNAME=alice")
    assert proc.returncode == 0, proc.stderr
    assert b"hello bob" in proc.stdout + proc.stderr  # gitolite knows bob by his key


@pytest.mark.parametrize(
    "site", ["t"], indirect=True, ids=["common-hook"]
)  # same hook either route
@pytest.mark.parametrize("variable", IDENTITY_VARIABLES)
def test_push_option_naming_an_owner_does_not_make_the_agent_one(site, variable):
    site.commit({SEEDS: "[1, 2, 3]\n"}, "append")
    pushed = site.push("bob", "-o", f"{variable}=alice", "HEAD:refs/heads/main")
    assert "does not support push options" not in pushed.stderr  # they were sent
    spoof_rejected(site, pushed)


@pytest.mark.parametrize(
    "site", ["t"], indirect=True, ids=["common-hook"]
)  # same hook either route
def test_receive_pack_with_variables_is_refused_by_gitolite(site):
    site.commit({SEEDS: "[1, 2, 3]\n"}, "append")
    before = site.rev("refs/heads/main")
    pushed = site.push(
        "bob",
        "--receive-pack=GL_USER=alice REMOTE_USER=alice git-receive-pack",
        "HEAD:refs/heads/main",
    )
    assert pushed.rc != 0
    assert site.rev("refs/heads/main") == before


@pytest.mark.parametrize(
    "site", ["t"], indirect=True, ids=["common-hook"]
)  # same hook either route
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


def test_contract_naming_gl_username_makes_nobody_an_owner_by_variable(
    gitolite, hook_python, tmp_path
):
    # gap (e): the contract names GitLab's variable, a client can send it
    host, _ = gitolite
    name = f"t/r{next(numbers)}"
    repo = new_repo(host, name)
    site = site_for(host, name, tmp_path)
    site.seed("GL_USERNAME")
    site.commit({SEEDS: "[1, 2, 3]\n"}, "append")
    for options in (["SetEnv=GL_USERNAME=alice"], ["SetEnv=GL_USER=alice GL_USERNAME=alice"]):
        spoof_rejected(site, site.push("bob", "HEAD:refs/heads/main", ssh_options=options))
    spoof_rejected(site, site.push("alice", "HEAD:refs/heads/main"))  # not by GL_USERNAME
    git(site.client, "reset", "-q", "--hard", "HEAD~1")
    site.signed({SEEDS: "[1, 2, 3]\n"}, "alice")
    pushed = site.push("bob", "HEAD:refs/heads/main")  # signatures still make owners
    assert pushed.rc == 0, pushed.stderr
    assert_not_guarded(host, hook_python, repo, "identity_env")


# -- gaps of the gitolite routes ----------------------------------------------------
def test_a_repo_specific_hook_option_without_oracle_guard_keeps_it_and_the_admins_hook(
    fresh_gitolite, hook_python, tmp_path
):
    """With 'option hook.pre-receive = notify', gitolite links its driver over the
    common hook and runs only the hooks the option lists. The installer's trigger
    (gitolite's own mechanism: ENABLE and NON_CORE, run after repo-specific-hooks)
    adds oracle-guard to that list at every compile; and after the installer's own
    'gitolite setup', which links the common hooks over the driver, it runs the
    POST_COMPILE triggers again so the admin's hook keeps running."""
    host = fresh_gitolite
    host.edit_rc(*ENABLE_REPO_HOOKS)
    installed = install(host, hook_python)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert "enabled the trigger oracle-guard-hooks" in installed.stdout, installed.stdout
    ran = host.account.home / "notify-ran"
    notify = host.account.home / "local" / "hooks" / "repo-specific" / "notify"
    notify.write_text(f"#!/bin/sh\ncat >/dev/null\necho ran >> {ran}\n")
    notify.chmod(0o755)
    os.chown(notify, host.account.uid, host.account.gid)
    host.run("git", "--git-dir", host.repo("app"), "symbolic-ref", "HEAD", "refs/heads/main")
    site = site_for(host, "app", tmp_path)
    site.seed("GL_USER")
    host.configure(
        GITOLITE_CONF.replace(
            "    RW      =   bob\n\nrepo t/",
            "    RW      =   bob\n    option hook.pre-receive = notify\n\nrepo t/",
            1,
        )
    )
    hooks = host.repo("app") / "hooks"
    assert os.readlink(hooks / "pre-receive").endswith("multi-hook-driver")
    site.commit({SEEDS: "[1, 9]\n"}, "rewrite a seed")
    pushed = site.push("bob", "HEAD:refs/heads/main")
    assert set(pushed.findings()) == {
        f"refs/heads/main: {SEEDS}: {code}" for code in DENIED | {"seed-rewritten"}
    }, pushed.stderr  # judged, though the option names only notify
    git(site.client, "reset", "-q", "--hard", "HEAD~1")

    def honest_push_runs_both(number: int) -> None:
        site.commit({"src/app.py": f"v{number}\n"}, "src")
        pushed = site.push("bob", "HEAD:refs/heads/main")
        assert pushed.rc == 0 and any("push accepted" in line for line in pushed.guard), (
            pushed.stderr
        )
        assert ran.read_text().count("ran") == number, pushed.stderr  # the admin's hook ran

    honest_push_runs_both(1)
    again = install(host, hook_python)  # runs gitolite setup
    assert again.returncode == 0, again.stdout + again.stderr
    assert "ran gitolite trigger POST_COMPILE" in again.stdout, again.stdout
    assert os.readlink(hooks / "pre-receive").endswith("multi-hook-driver")
    honest_push_runs_both(2)
    assert_guarded(host, hook_python, host.repo("app"))

    # the near miss: without the trigger's link, the driver runs notify alone
    os.unlink(hooks / "pre-receive.a00-oracle-guard")
    assert_not_guarded(host, hook_python, host.repo("app"), "without oracle-guard")
    site.commit({SEEDS: "[1, 8]\n"}, "rewrite a seed")
    pushed = site.push("bob", "HEAD:refs/heads/main")
    assert pushed.rc == 0 and not pushed.guard, pushed.stderr  # nothing judged it


def test_existing_repository_hook_is_backed_up_not_replaced(fresh_gitolite, hook_python):
    # gap (b): gitolite's setup unlinks whatever hooks/pre-receive a repository had
    host = fresh_gitolite
    own = host.repo("app") / "hooks" / "pre-receive"
    script = "#!/bin/sh\necho the site's own check >&2\n"
    own.write_text(script)
    own.chmod(0o755)
    os.chown(own, host.account.uid, host.account.gid)
    installed = install(host, hook_python)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    backup = host.repo("app") / "hooks" / "before-oracle-guard" / "pre-receive"
    assert backup.read_text() == script
    assert str(backup) in installed.stdout or "before-oracle-guard" in installed.stdout
    assert os.path.islink(own)  # gitolite's link to the common hook now


def test_empty_repository_with_head_on_master_installer_warns_doctor_reports(
    fresh_gitolite, hook_python, tmp_path
):
    # gap (c): once main is pushed, HEAD on master rejects every later push
    host = fresh_gitolite
    installed = install(host, hook_python)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    app = host.repo("app")
    assert any(
        line.startswith("warning: ")
        and str(app) in line
        and "symbolic-ref HEAD refs/heads/main" in line
        for line in installed.stdout.splitlines()
    ), installed.stdout
    assert_not_guarded(host, hook_python, app, "HEAD")

    site = site_for(host, "app", tmp_path)
    site.seed("GL_USER")
    site.commit({"src/app.py": "v2\n"}, "src")
    pushed = site.push("bob", "HEAD:refs/heads/main")
    assert pushed.rc != 0, pushed.stderr  # what the warning is about
    assert_not_guarded(host, hook_python, app, "HEAD")

    host.run("git", "--git-dir", app, "symbolic-ref", "HEAD", "refs/heads/main")  # the fix
    pushed = site.push("bob", "HEAD:refs/heads/main")
    assert pushed.rc == 0, pushed.stderr
    assert_guarded(host, hook_python, app)


def test_hook_survives_gitolite_setup(fresh_gitolite, hook_python, tmp_path):
    # gap (d): `gitolite setup` rewrites hooks; the common hook must come back
    host = fresh_gitolite
    installed = install(host, hook_python)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    host.run("git", "--git-dir", host.repo("app"), "symbolic-ref", "HEAD", "refs/heads/main")
    site = site_for(host, "app", tmp_path)
    site.seed("GL_USER")
    for setup in (["setup"], ["setup", "--hooks-only"]):
        host.gitolite(*setup)
        host.configure(GITOLITE_CONF)
        site.commit({SEEDS: "[1, 9]\n"}, "rewrite a seed")
        pushed = site.push("bob", "HEAD:refs/heads/main")
        assert set(pushed.findings()) == {
            f"refs/heads/main: {SEEDS}: {code}" for code in DENIED | {"seed-rewritten"}
        }, pushed.stderr
        git(site.client, "reset", "-q", "--hard", "HEAD~1")
        assert_guarded(host, hook_python, host.repo("app"))


def test_doctor_on_an_unguarded_gitolite_repository(fresh_gitolite, hook_python):
    """The near-miss of every guarded verdict: before install, doctor says not
    guarded (hook missing), and on a folder that is no repository exits 2."""
    host = fresh_gitolite
    assert_not_guarded(host, hook_python, host.repo("app"))
    proc = doctor(host, hook_python, host.account.home)
    assert proc.returncode == 2, proc.stdout + proc.stderr


def test_gitolite_admin_still_takes_configuration_after_install(gitolite):
    """The common hook guards gitolite-admin too: it holds no contract, and the
    admin's pushes must still go through."""
    host, _ = gitolite
    said = host.configure(GITOLITE_CONF + "\nrepo extra\n    RW+     =   alice\n")
    assert "extra" in host.gitolite("list-phy-repos").stdout.split(), said
    host.configure(GITOLITE_CONF)


def test_bob_cannot_get_a_shell_on_the_gitolite_account(gitolite):
    host, _ = gitolite
    proc = host.sshd.ssh(host.keys["bob"], host.account, "sh -c 'echo pwned'")
    assert b"pwned" not in proc.stdout


def test_local_code_inside_gitolite_admin_is_refused(fresh_gitolite, hook_python):
    # gap: the rc's second LOCAL_CODE line lives in the admin repository, whose every
    # push replaces it; the installer takes the server's line and refuses that one
    host = fresh_gitolite
    host.edit_rc(
        '# LOCAL_CODE => "$rc{GL_ADMIN_BASE}/local",',
        '    LOCAL_CODE => "$rc{GL_ADMIN_BASE}/local",',
    )
    installed = install(host, hook_python)
    assert installed.returncode == 2, installed.stdout + installed.stderr
    assert (
        "inside the gitolite-admin checkout: every push to gitolite-admin replaces what "
        "is there" in installed.stderr
    ), installed.stderr
    assert not (
        host.account.home / ".gitolite" / "local" / "hooks" / "common" / "pre-receive"
    ).exists()


def test_the_servers_local_code_line_is_the_one_turned_on(fresh_gitolite, hook_python):
    host = fresh_gitolite
    installed = install(host, hook_python)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    active = [
        " ".join(line.split())
        for line in host.rc.read_text().splitlines()
        if line.strip().startswith("LOCAL_CODE")
    ]
    assert active == ['LOCAL_CODE => "$ENV{HOME}/local",'], active


def test_doctor_as_root_reads_the_git_accounts_own_config(site, hook_python):
    """gitolite's recipe turns fsck on in the account's global config: doctor run
    by root reads it as git will (the account's HOME), not root's."""
    repo = site.repo
    proc = subprocess.run(
        [str(hook_python), "-m", "oracle_guard", "doctor", str(repo)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd="/",
        env={"PATH": "/usr/bin:/bin", "HOME": "/root"},
        timeout=120,
    )
    doctor_verdict(proc, repo, True)
    assert "ok: receive.fsckObjects is on" in proc.stdout.splitlines()
