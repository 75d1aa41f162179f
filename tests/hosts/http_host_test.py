"""pre-receive behind a real web server: lighttpd on 127.0.0.1, running as its own
account, serving `git http-backend` as CGI behind basic auth (htpasswd), so
REMOTE_USER is the authenticated user. alice owns the oracle, bob is the agent.
Every repository is the web account's, its hook root's (installed with the
root-made venv, --host http), and `oracle-guard doctor` must call it guarded
when its test ends."""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from testing import hosts as shared
from testing.git import commit, git, init_repo, write
from testing.hosts import doctor_verdict, gone, keygen, public, run_as, system_account, world_base
from testing.http_host import (
    USERS,
    as_user,
    client_env,
    doctor,
    http_push,
    install_hook,
    lighttpd,
    make_repo,
    processes_of,
    remove_repo,
    root_git_env,
)
from testing.server import Push
from testing.signatures import SIGNED_CONTRACT, SIGNERS

# real accounts and servers (testing/prerequisites.py)
pytestmark = pytest.mark.needs("root", "servers")

SEEDS = "seeds/a.json"
CONTRACT = """\
version: 1
seeds:
  - {paths: ["seeds/*.json"], format: json-array}
write_set:
  allow: ["src/**"]
  owners: [alice]
deletable_refs: ["refs/heads/scratch/*"]
identity_env: REMOTE_USER
"""
WD = f"refs/heads/main: {SEEDS}: write-denied"
numbers = itertools.count()  # repository names stay unique however long the test name


@pytest.fixture(scope="module")
def web():
    """One lighttpd for the module, as a fresh account; stopped by its pid, and
    neither it nor any CGI of the account outlives the module."""
    with system_account("ogweb", "/usr/sbin/nologin") as account:
        folder = world_base("og-http-")
        try:
            with lighttpd(account, folder) as host:
                yield host
            assert gone(host.process.pid), f"lighttpd {host.process.pid} is still running"
            assert processes_of(account) == [], "a process of the web account outlived it"
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def server_rev(repo: Path, ref: str) -> Optional[str]:
    """What ``ref`` names in the server repository (read as root: safe.directory)."""
    proc = subprocess.run(
        ["git", "--git-dir", str(repo), "rev-parse", "--verify", "--quiet", ref],
        env=root_git_env(repo),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.returncode in (0, 1), proc.stderr  # 128: git could not read the repository
    return proc.stdout.strip() or None


class Site:
    """A fresh repository on the server with the hook, and a client whose remotes
    ``alice`` and ``bob`` push with each user's credentials. alice pushes the first
    contract (the first push into an empty repository brings its own rules)."""

    def __init__(
        self,
        web,
        python: Path,
        tmp_path: Path,
        name: str,
        contract: str = CONTRACT,
        files: Optional[Dict[str, str]] = None,
        hook: bool = True,
        **repo,
    ) -> None:
        self.web, self.python, self.name = web, python, name
        self.expect_guarded = hook  # teardown asks doctor
        self.repo = make_repo(web, name, python if hook else None, **repo)
        self.client = init_repo(tmp_path / "work")
        for user in USERS:
            git(self.client, "remote", "add", user, web.url(name, user))
        commit(
            self.client,
            {
                ".oracle-guard.yaml": contract,
                SEEDS: "[1, 2]\n",
                "src/app.py": "v1\n",
                **(files or {}),
            },
            "the oracle",
        )
        first = self.push("alice", "main")
        assert first.rc == 0, first.stderr

    def push(self, user: str, *args: str, **kw) -> Push:
        return http_push(self.client, user, *args, **kw)

    def tip(self, ref: str = "refs/heads/main") -> Optional[str]:
        return server_rev(self.repo, ref)

    def signed(self, files: Dict[str, str], key: Path, message: str = "signed") -> str:
        write(self.client, files)
        git(self.client, "add", "-A")
        git(
            self.client,
            "-c",
            "gpg.format=ssh",
            "-c",
            f"user.signingkey={key}",
            "commit",
            "-q",
            "-S",
            "-m",
            message,
        )
        return git(self.client, "rev-parse", "HEAD").strip()


@pytest.fixture
def site(web, hook_python, tmp_path, request):
    """Makes Sites; at teardown every site with the hook must be guarded by doctor's
    word, and its repository is removed."""
    made: List[Site] = []
    slug = re.sub(r"[^A-Za-z0-9]+", "-", request.node.name).strip("-")[:60]

    def make(**kw) -> Site:
        s = Site(
            web, hook_python, tmp_path / f"site{len(made)}", f"{slug}-{next(numbers)}.git", **kw
        )
        made.append(s)
        return s

    yield make
    try:
        for s in made:
            if s.expect_guarded:
                assert_guarded(s.repo, hook_python)
    finally:
        for s in made:
            remove_repo(s.repo)


def assert_guarded(repo: Path, python: Path) -> None:
    doctor_verdict(doctor(repo, python), repo, True)


def assert_rejected(s: Site, p: Push, before: str, findings: List[str]) -> None:
    assert p.rc != 0, p.stderr
    assert "(pre-receive hook declined)" in p.stderr, p.stderr
    assert any(line.startswith("remote: oracle-guard: ") for line in p.stderr.splitlines())
    assert sorted(p.findings()) == sorted(findings), p.stderr
    assert s.tip() == before


def assert_accepted(s: Site, p: Push, tip: str, ref: str = "refs/heads/main") -> None:
    assert p.rc == 0, p.stderr
    assert any(line.startswith("oracle-guard: push accepted") for line in p.remote), p.stderr
    assert s.tip(ref) == tip


# -- the catalogue -------------------------------------------------------------------
def test_an_agents_honest_push_is_accepted(site):
    s = site()
    new = commit(s.client, {"src/app.py": "v2\n"}, "src")
    assert_accepted(s, s.push("bob", "main"), new)


def test_an_agents_seed_rewrite_is_rejected_and_the_client_sees_why(site):
    s = site()
    before = s.tip()
    bad = commit(s.client, {SEEDS: "[1, 9]\n"}, "rewrite a seed")
    p = s.push("bob", "main")
    assert_rejected(s, p, before, [f"refs/heads/main: {SEEDS}: seed-rewritten", WD])
    assert f"remote: oracle-guard: refs/heads/main ({bad[:12]}): {SEEDS}:" in p.stderr


def test_remote_user_reaches_the_hook_and_makes_alice_an_owner_and_not_bob(site):
    """The same seed append: bob's push is denied, alice's (REMOTE_USER=alice, set by
    the web server's authentication) is accepted."""
    s = site()
    before = s.tip()
    new = commit(s.client, {SEEDS: "[1, 2, 3]\n"}, "append a seed")
    assert_rejected(s, s.push("bob", "main"), before, [WD])
    p = s.push("alice", "main")
    assert_accepted(s, p, new)
    assert [line for line in p.guard if "alice is an owner" in line], p.stderr


def test_an_identity_env_other_than_remote_user_makes_nobody_an_owner(site):
    # on an http host only REMOTE_USER names the pusher: GL_USER is set by nothing here
    s = site(contract=CONTRACT.replace("identity_env: REMOTE_USER", "identity_env: GL_USER"))
    before = s.tip()
    commit(s.client, {SEEDS: "[1, 2, 3]\n"}, "append a seed")
    assert_rejected(s, s.push("alice", "main"), before, [WD])
    s.expect_guarded = False
    assert [p for p in not_guarded(s.repo, s.python) if "GL_USER" in p and "REMOTE_USER" in p]


def test_an_owners_oracle_push_is_still_judged_by_the_other_hooks(site):
    # owners append seeds, they do not rewrite them
    s = site()
    before = s.tip()
    commit(s.client, {SEEDS: "[2, 1]\n"}, "reorder")
    p = s.push("alice", "main")
    assert p.rc != 0 and s.tip() == before, p.stderr
    assert [f for f in p.findings() if f.endswith("write-denied")] == [], p.stderr


def test_an_owners_signed_oracle_commit_is_accepted_whoever_pushes_it(site, tmp_path):
    owner = keygen(tmp_path, "owner")
    s = site(contract=SIGNED_CONTRACT, files={SIGNERS: f"alice {public(owner)}\n"})
    new = s.signed({SEEDS: "[1, 2, 3]\n"}, owner)
    assert_accepted(s, s.push("bob", "main"), new)


def test_a_strangers_signed_oracle_commit_is_rejected(site, tmp_path):
    owner, agent = keygen(tmp_path, "owner"), keygen(tmp_path, "agent")
    s = site(contract=SIGNED_CONTRACT, files={SIGNERS: f"alice {public(owner)}\n"})
    before = s.tip()
    s.signed({SEEDS: "[1, 2, 3]\n"}, agent)
    assert_rejected(
        s, s.push("bob", "main"), before, [WD, f"refs/heads/main: {SEEDS}: oracle-change-unsigned"]
    )


def test_a_mixed_commit_is_rejected_even_for_an_owner(site):
    s = site()
    before = s.tip()
    commit(s.client, {SEEDS: "[1, 2, 3]\n", "src/app.py": "v2\n"}, "seed and code")
    assert_rejected(
        s, s.push("alice", "main"), before, [f"refs/heads/main: {SEEDS}: contract-mixed-commit"]
    )


def test_the_same_changes_in_two_commits_pass_for_an_owner(site):
    s = site()
    commit(s.client, {SEEDS: "[1, 2, 3]\n"}, "seed")
    new = commit(s.client, {"src/app.py": "v2\n"}, "code")
    assert_accepted(s, s.push("alice", "main"), new)


def test_deleting_a_protected_branch_is_rejected(site):
    s = site()
    tip = s.tip()
    assert s.push("bob", "main:refs/heads/release").rc == 0
    p = s.push("bob", ":refs/heads/release")
    assert p.rc != 0, p.stderr
    assert p.findings() == ["refs/heads/release: -: ref-deleted"], p.stderr
    assert s.tip("refs/heads/release") == tip


def test_deleting_a_deletable_branch_is_accepted(site):
    s = site()
    assert s.push("bob", "main:refs/heads/scratch/x").rc == 0
    p = s.push("bob", ":refs/heads/scratch/x")
    assert p.rc == 0, p.stderr
    assert s.tip("refs/heads/scratch/x") is None


def test_a_force_push_that_rewrites_the_oracle_is_rejected(site):
    s = site()
    commit(s.client, {SEEDS: "[1, 2, 3]\n"}, "append")
    assert s.push("alice", "main").rc == 0
    before = s.tip()
    git(s.client, "reset", "-q", "--hard", "HEAD~1")
    commit(s.client, {SEEDS: "[1, 9, 3]\n"}, "history rewritten")
    p = s.push("bob", "--force", "main")
    assert_rejected(s, p, before, [f"refs/heads/main: {SEEDS}: seed-rewritten", WD])


def test_a_force_push_that_rewrites_only_code_is_accepted(site):
    s = site()
    commit(s.client, {"src/app.py": "v2\n"}, "code")
    assert s.push("bob", "main").rc == 0
    git(s.client, "reset", "-q", "--hard", "HEAD~1")
    new = commit(s.client, {"src/app.py": "v3\n"}, "code, again")
    assert_accepted(s, s.push("bob", "--force", "main"), new)


# -- the catalogue every host runs (testing/hosts.py), over HTTP ---------------------------
@pytest.fixture
def shared_site(web, hook_python, tmp_path, request):
    name = re.sub(r"[^A-Za-z0-9]+", "-", request.node.name).strip("-")[:60]
    name = f"{name}-{next(numbers)}.git"
    repo = make_repo(web, name, hook_python)
    keys = {user: shared.keygen(tmp_path, user) for user in USERS}

    def env_for(user: str, *ssh_options: str, **variables: str) -> Dict[str, str]:
        assert not ssh_options, "no ssh here"
        return as_user(web, user, **variables)

    def server_git(*args: str) -> subprocess.CompletedProcess:
        return run_as(web.account, ["git", "--git-dir", repo, *args])

    s = shared.Site(tmp_path / "work", web.url(name), repo, keys, env_for, server_git)
    s.seed("REMOTE_USER")
    try:
        yield s
        assert_guarded(repo, hook_python)
    finally:
        remove_repo(repo)


@pytest.mark.parametrize("case", shared.CATALOGUE, ids=[c.name for c in shared.CATALOGUE])
def test_the_shared_catalogue_over_http(shared_site, case):
    shared.judge_case(shared_site, case)


# -- spoofing alice: all rejected ---------------------------------------------------------
SPOOFS = {
    "remote-user-header": dict(config=["http.extraHeader=Remote-User: alice"]),
    "x-remote-user-header": dict(config=["http.extraHeader=X-Remote-User: alice"]),
    "x-forwarded-user-header": dict(config=["http.extraHeader=X-Forwarded-User: alice"]),
    "push-option": dict(args=["-o", "REMOTE_USER=alice"]),
    "client-environment": dict(env={"REMOTE_USER": "alice"}),
    "author-name": dict(author="alice"),
}


@pytest.mark.parametrize("spoof", SPOOFS.values(), ids=list(SPOOFS))
def test_bob_cannot_pass_for_alice(site, spoof):
    s = site()
    before = s.tip()
    name = spoof.get("author")
    env = (
        {}
        if name is None
        else {
            "GIT_AUTHOR_NAME": name,
            "GIT_COMMITTER_NAME": name,
            "GIT_AUTHOR_EMAIL": f"{name}@example.invalid",
            "GIT_COMMITTER_EMAIL": f"{name}@example.invalid",
        }
    )
    write(s.client, {SEEDS: "[1, 2, 3]\n"})
    git(s.client, "add", "-A")
    subprocess.run(
        ["git", "-C", str(s.client), "commit", "-q", "-m", "append a seed"],
        env=client_env(**env),
        check=True,
    )
    p = s.push(
        "bob",
        *spoof.get("args", []),
        "main",
        config=spoof.get("config", []),
        env=client_env(**spoof.get("env", {})),
    )
    assert "does not support push options" not in p.stderr  # the option reached the hook
    assert_rejected(s, p, before, [WD])


def test_a_wrong_password_is_refused_by_the_web_server(site, web):
    s = site()
    before = s.tip()
    commit(s.client, {"src/app.py": "v2\n"}, "src")
    p = s.push(web.url(s.name, "alice", "not-alices-password"), "main")
    assert p.rc != 0
    assert "Authentication failed" in p.stderr, p.stderr
    assert not p.remote  # git never ran: the request stopped at 401
    assert s.tip() == before


def test_an_unauthenticated_push_is_refused(site, web):
    s = site()
    before = s.tip()
    commit(s.client, {"src/app.py": "v2\n"}, "src")
    p = s.push(web.url(s.name), "main")
    assert p.rc != 0
    assert "terminal prompts disabled" in p.stderr or "Authentication failed" in p.stderr, p.stderr
    assert not p.remote
    assert s.tip() == before


PROBE = """\
#!/bin/sh
# what the web server hands a pre-receive hook, and nothing accepted
for name in REMOTE_USER AUTH_TYPE HTTP_AUTHORIZATION HTTP_REMOTE_USER HTTP_X_REMOTE_USER HTTP_X_FORWARDED_USER \
    GIT_PUSH_OPTION_0; do
  eval "value=\\${$name-unset}"
  echo "probe: $name=$value"
done
cat >/dev/null
exit 1
"""


def test_what_the_hook_environment_holds(site):
    """A probe hook in place of oracle-guard: REMOTE_USER is the authenticated user;
    every spoof lands in a variable of its own, which the hook does not read."""
    s = site(hook=False)
    (s.repo / "hooks" / "pre-receive").write_text(PROBE)
    (s.repo / "hooks" / "pre-receive").chmod(0o755)
    commit(s.client, {"src/app.py": "v2\n"}, "src")
    p = s.push(
        "bob",
        "-o",
        "REMOTE_USER=alice",
        "main",
        config=[
            "http.extraHeader=Remote-User: alice",
            "http.extraHeader=X-Remote-User: alice",
            "http.extraHeader=X-Forwarded-User: alice",
        ],
        env=client_env(REMOTE_USER="alice"),
    )
    assert p.rc != 0
    probe = [line[len("probe: ") :] for line in p.remote if line.startswith("probe: ")]
    assert probe == [
        "REMOTE_USER=bob",
        "AUTH_TYPE=Basic",
        "HTTP_AUTHORIZATION=unset",
        "HTTP_REMOTE_USER=alice",
        "HTTP_X_REMOTE_USER=alice",
        "HTTP_X_FORWARDED_USER=alice",
        "GIT_PUSH_OPTION_0=REMOTE_USER=alice",
    ], p.stderr
    not_guarded(s.repo, s.python)  # a hook that is not oracle-guard's


# -- install-pre-receive --host http, and doctor ------------------------------------------
def not_guarded(repo: Path, python: Path) -> List[str]:
    """doctor's problem lines, after asserting it says 'not guarded' and exits 1."""
    d = doctor(repo, python)
    lines = d.stdout.splitlines()
    assert d.returncode == 1, f"doctor exited {d.returncode}:\n{d.stdout}{d.stderr}"
    assert lines and re.fullmatch(
        rf"not guarded: {re.escape(str(repo))}: [1-9][0-9]* "
        r"problems?",
        lines[-1],
    ), d.stdout
    problems = [line for line in lines if line.startswith("problem: ")]
    assert problems, d.stdout
    return problems


def warnings_of(done: subprocess.CompletedProcess) -> List[str]:
    assert done.returncode == 0, done.stdout + done.stderr
    return [line for line in done.stdout.splitlines() if line.startswith("warning:")]


def test_install_names_the_host_and_warns_of_nothing_on_a_sound_repository(site):
    s = site(hook=False)  # the owner's first contract is in
    done = install_hook(s.repo, s.python)
    assert done.stdout.splitlines()[0] == "host: http (from --host)", done.stdout
    assert warnings_of(done) == [], done.stdout
    script = (s.repo / "hooks" / "pre-receive").read_text()
    assert f"{s.python} -I -m oracle_guard pre-receive --host http" in script, script
    s.expect_guarded = True


def test_install_warns_when_fsck_objects_is_off_and_doctor_calls_it_a_problem(site, web):
    s = site(hook=False, config=["receive.advertisePushOptions=true"])
    warned = warnings_of(install_hook(s.repo, s.python))
    assert [w for w in warned if "receive.fsckObjects" in w], warned
    assert [p for p in not_guarded(s.repo, s.python) if "receive.fsckObjects" in p]
    run_as(
        web.account,
        ["git", "--git-dir", s.repo, "config", "receive.fsckObjects", "true"],
        check=True,
    )  # the fix the warning names
    s.expect_guarded = True


def test_a_hook_the_web_account_can_write_is_a_warning_and_a_problem(site, web):
    """The old recipe's 'install as the account that runs git' leaves the hook the
    account's own: whatever runs as it can rewrite the gate."""
    s = site(hook=False)
    hooks = s.repo / "hooks"
    for path in [hooks, *hooks.iterdir()]:
        os.chown(path, web.account.uid, web.account.gid)
    done = run_as(
        web.account,
        [s.python, "-I", "-m", "oracle_guard", "install-pre-receive", s.repo, "--host", "http"],
    )
    warned = warnings_of(done)
    assert [w for w in warned if "writ" in w], warned
    assert [p for p in not_guarded(s.repo, s.python) if "writ" in p]
    for path in [hooks, *hooks.iterdir()]:
        os.chown(path, 0, 0)  # the fix: root's hook folder and hook
    s.expect_guarded = True


def test_install_warns_when_an_empty_repositorys_head_names_another_branch(web, hook_python):
    repo = make_repo(web, "install-head.git", None)
    try:
        run_as(
            web.account,
            ["git", "--git-dir", repo, "symbolic-ref", "HEAD", "refs/heads/trunk"],
            check=True,
        )
        warned = warnings_of(install_hook(repo, hook_python))
        assert [w for w in warned if "refs/heads/trunk" in w], warned
        assert not_guarded(repo, hook_python)  # empty: no rules yet
    finally:
        remove_repo(repo)


def test_a_repository_without_the_hook_is_not_guarded(site):
    s = site(hook=False)
    assert not_guarded(s.repo, s.python)


def test_the_pages_configuration_is_the_one_lighttpd_runs(web):
    """docs/how-to/server-http.md shows examples/http/lighttpd.conf, and the web
    server of this module runs that file with only its paths and port changed:
    lighttpd starts on it and answers on its port."""
    from testing.http_host import CONFIG_FILE, DOCUMENTED

    page = (Path(__file__).resolve().parents[2] / "docs" / "how-to" / "server-http.md").read_text()
    assert '--8<-- "examples/http/lighttpd.conf"' in page
    running = (web.folder / "lighttpd.conf").read_text()
    shown = CONFIG_FILE.read_text()
    assert "server.document-root" in shown and "server.port = 8080" in shown
    changed = [(a, b) for a, b in zip(shown.splitlines(), running.splitlines()) if a != b]
    assert len(shown.splitlines()) == len(running.splitlines())
    assert len(changed) == len(DOCUMENTED) - 1  # username and groupname are one value each
    assert all(any(d in a for d in DOCUMENTED) for a, _ in changed), changed
    assert f"server.port = {web.port}" in running
    import urllib.error
    import urllib.request

    try:
        urllib.request.urlopen(f"http://127.0.0.1:{web.port}/git/app.git/info/refs", timeout=30)
        raise AssertionError("the git path answered without authentication")
    except urllib.error.HTTPError as answer:
        assert answer.code == 401, answer  # lighttpd, on the port, with the auth rule
