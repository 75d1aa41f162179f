"""The real pre-commit: try-repo and an installed git hook."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from testing import scenarios
from testing.checkout import snapshot_checkout
from testing.git import clean_environment, commit, git, init_repo, stage, write
from testing.scenarios import Work
from testing.server import push_env, rev

CONTRACT = """\
version: 1
fixtures:
  - lock: fixtures.lock.json
    root: fixtures
    paths: ["fixtures/**"]
write_set:
  allow: ["src/**"]
"""
PRICING = '{"price": 100}\n'


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory):
    return snapshot_checkout(tmp_path_factory.mktemp("hook-repo") / "oracle-guard")


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory):
    # one hook environment for the module: pip installs oracle-guard once
    return str(tmp_path_factory.mktemp("pre-commit-home"))


def pre_commit(repo: Path, home: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PRE_COMMIT_HOME=home, PRE_COMMIT_COLOR="never")
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def guarded_repo(path: Path, config: str = "") -> Path:
    import hashlib

    repo = init_repo(path)
    digest = hashlib.sha256(PRICING.encode()).hexdigest()
    files = {
        ".oracle-guard.yaml": CONTRACT,
        "fixtures/pricing.json": PRICING,
        "fixtures.lock.json": {"pricing.json": digest},
        "src/app.py": "x = 1\n",
    }
    if config:
        files[".pre-commit-config.yaml"] = config
    commit(repo, files, "baseline")
    return repo


def test_try_repo_rejects_a_rewritten_fixture_and_passes_a_clean_tree(
    tmp_path, hook_repo, pre_commit_home
):
    hook_path, _ = hook_repo
    repo = guarded_repo(tmp_path / "r")
    clean = pre_commit(
        repo, pre_commit_home, "try-repo", str(hook_path), "fixture-lock", "--all-files"
    )
    assert clean.returncode == 0, clean.stdout
    assert "Passed" in clean.stdout

    stage(repo, {"fixtures/pricing.json": '{"price": 1}\n'})
    dirty = pre_commit(
        repo, pre_commit_home, "try-repo", str(hook_path), "fixture-lock", "--all-files"
    )
    assert dirty.returncode == 1, dirty.stdout
    assert "fixtures/pricing.json: fixture-mismatch:" in dirty.stdout


def test_installed_hook_blocks_a_commit_and_lets_an_honest_one_through(
    tmp_path, hook_repo, pre_commit_home
):
    hook_path, sha = hook_repo
    config = f"""\
fail_fast: true
repos:
  - repo: {hook_path}
    rev: {sha}
    hooks:
      - id: oracle-guard
"""
    repo = guarded_repo(tmp_path / "r", config)
    installed = pre_commit(repo, pre_commit_home, "install")
    assert installed.returncode == 0, installed.stdout

    env = dict(os.environ, PRE_COMMIT_HOME=pre_commit_home, PRE_COMMIT_COLOR="never")
    write(repo, {"src/app.py": "x = 2\n"})
    git(repo, "add", "-A")
    honest = subprocess.run(
        ["git", "commit", "-m", "honest"],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert honest.returncode == 0, honest.stdout

    write(repo, {"fixtures/pricing.json": '{"price": 1}\n'})
    git(repo, "add", "-A")
    before = git(repo, "rev-parse", "HEAD")
    blocked = subprocess.run(
        ["git", "commit", "-m", "sneaky"],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert blocked.returncode != 0
    assert "fixtures/pricing.json: fixture-mismatch:" in blocked.stdout
    assert "fixtures/pricing.json: write-denied:" in blocked.stdout
    assert git(repo, "rev-parse", "HEAD") == before


def test_an_owner_appends_a_seed_with_one_signed_commit_and_no_skip(
    tmp_path, hook_repo, pre_commit_home
):
    """The owner flow with signed authority: the installed pre-commit and
    pre-push hooks pass an owner's signed oracle-only commit (no SKIP=), the
    server's hook accepts the push, and CI passes the owner's branch; the same
    commit unsigned is blocked locally."""
    from testing.server import make_server

    hook_path, sha = hook_repo
    key = tmp_path / "owner"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    signers = "alice " + " ".join(key.with_suffix(".pub").read_text().split()[:2]) + "\n"
    contract = (
        'version: 1\nseeds:\n  - {paths: ["seeds/*.json"], format: json-array}\n'
        'write_set:\n  allow: ["src/**"]\n'
        "authority:\n  signers: .oracle-guard/allowed_signers\n"
    )
    config = (
        f"repos:\n  - repo: {hook_path}\n    rev: {sha}\n    hooks:\n      - id: oracle-guard\n"
    )
    server = make_server(tmp_path / "srv.git")
    repo = init_repo(tmp_path / "r")
    git(repo, "remote", "add", "origin", str(server))
    commit(
        repo,
        {
            ".oracle-guard.yaml": contract,
            ".oracle-guard/allowed_signers": signers,
            "seeds/a.json": "[1, 2]\n",
            "src/app.py": "",
            ".pre-commit-config.yaml": config,
        },
        "the oracle",
    )
    git(repo, "push", "-q", "origin", "main")
    for hook_type in ("pre-commit", "pre-push"):
        installed = pre_commit(repo, pre_commit_home, "install", "--hook-type", hook_type)
        assert installed.returncode == 0, installed.stdout
    env = dict(push_env(), PRE_COMMIT_HOME=pre_commit_home, PRE_COMMIT_COLOR="never")

    def run(*args):
        return subprocess.run(
            ["git", *args],
            cwd=repo,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    write(repo, {"seeds/a.json": "[1, 2, 3]\n"})
    git(repo, "add", "-A")
    unsigned = run("commit", "-m", "append a seed, unsigned")
    assert unsigned.returncode != 0 and "seeds/a.json: write-denied:" in unsigned.stdout, (
        unsigned.stdout
    )
    assert "an owner signs the commit: git config gpg.format ssh" in unsigned.stdout
    git(repo, "config", "gpg.format", "ssh")
    git(repo, "config", "user.signingkey", str(key.with_suffix(".pub")))
    git(repo, "config", "commit.gpgsign", "true")
    signed = run("commit", "-m", "append a seed")
    assert signed.returncode == 0, signed.stdout
    assert git(repo, "cat-file", "commit", "HEAD").count("-----BEGIN SSH SIGNATURE-----") == 1
    pushed = run("push", "origin", "HEAD:refs/heads/append")
    assert pushed.returncode == 0, pushed.stdout
    assert "oracle-guard (all six hooks)" in pushed.stdout  # the pre-push hook ran
    assert "an owner signed every commit of this oracle change" in pushed.stdout  # the server
    git(repo, "fetch", "-q", "origin")
    ci = subprocess.run(
        [sys.executable, "-m", "oracle_guard", "check"],
        cwd=repo,
        env=dict(env, CI="1", GITHUB_BASE_REF="main"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert ci.returncode == 0, ci.stdout


def test_the_first_push_into_an_empty_remote_passes_pre_push_without_skip(
    tmp_path, hook_repo, pre_commit_home
):
    """pre-commit passes no range for a history the remote has none of: the
    pre-push hook judges it against the empty tree by its own contract, as the
    server does; a broken lock in that history is still caught before the push."""
    from testing.server import make_server

    hook_path, sha = hook_repo
    config = (
        f"repos:\n  - repo: {hook_path}\n    rev: {sha}\n    hooks:\n"
        "      - id: oracle-guard\n        stages: [pre-push]\n"
    )
    env = dict(push_env(), PRE_COMMIT_HOME=pre_commit_home, PRE_COMMIT_COLOR="never")
    for name, broken in (("honest", False), ("broken", True)):
        server = make_server(tmp_path / f"{name}.git")
        repo = guarded_repo(tmp_path / name, config)
        if broken:
            commit(repo, {"fixtures/pricing.json": '{"price": 1}\n'}, "rewrite the fixture")
        git(repo, "remote", "add", "origin", str(server))
        installed = pre_commit(repo, pre_commit_home, "install", "--hook-type", "pre-push")
        assert installed.returncode == 0, installed.stdout
        pushed = subprocess.run(
            ["git", "push", "origin", "main"],
            cwd=repo,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert "oracle-guard (all six hooks)" in pushed.stdout, pushed.stdout  # it ran
        if broken:  # pre-commit shows a hook's output when it fails
            assert "origin has no branch this clone knows of" in pushed.stdout, pushed.stdout
            assert pushed.returncode != 0, pushed.stdout
            assert "fixtures/pricing.json: fixture-mismatch" in pushed.stdout, pushed.stdout
            assert rev(server, "refs/heads/main") is None
        else:
            assert pushed.returncode == 0, pushed.stdout
            assert "oracle-guard: push accepted" in pushed.stdout  # the server judged it too
            assert rev(server, "refs/heads/main") == rev(repo, "HEAD")


@pytest.fixture(scope="module")
def tamper_baseline(tmp_path_factory, hook_repo):
    """The catalogue's baseline (testing/scenarios.py), whose committed
    .pre-commit-config.yaml runs the real oracle-guard hook: copied per test."""
    hook_path, sha = hook_repo
    config = (
        "default_install_hook_types: [pre-commit, pre-push]\n"
        f"repos:\n  - repo: {hook_path}\n    rev: {sha}\n    hooks:\n      - id: oracle-guard\n"
    )
    files = dict(scenarios.BASE_FILES, **{scenarios.PCC: config})
    with clean_environment():
        return scenarios.build_baseline(tmp_path_factory.mktemp("tamper-baseline"), files)


TAMPER_CASES = [
    pytest.param(family, attack, id=family.name + ("" if attack else "-near-miss"))
    for family in scenarios.TAMPER
    for attack in (True, False)
]


@pytest.mark.parametrize(("family", "attack"), TAMPER_CASES)
def test_test_tamper_families_in_the_installed_hooks_ci_and_the_server(
    family, attack, tamper_baseline, pre_commit_home, tmp_path
):
    """Each test-tamper family (testing/scenarios.TAMPER) through the real parts:
    the installed pre-commit hook refuses the commit, the installed pre-push hook
    the push, `oracle-guard check --target origin/main --head HEAD` the branch, and
    the server's pre-receive hook a push that skips the local hooks; its near miss
    (the same patch without the tampering part) passes all four."""
    w = Work.copy(tamper_baseline, tmp_path / "copy")
    env = dict(
        push_env(GL_USERNAME="bob"), PRE_COMMIT_HOME=pre_commit_home, PRE_COMMIT_COLOR="never"
    )

    def run(*argv):
        return subprocess.run(
            argv, cwd=w.client, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )

    installed = pre_commit(w.client, pre_commit_home, "install")
    assert installed.returncode == 0, installed.stdout
    w.git("checkout", "-q", "-b", "change")
    w.put(family.attack if attack else family.near_miss)
    finding = f"{family.path}:"
    code = f": {family.code}:"
    main_before = rev(w.server, "refs/heads/main")

    committed = run("git", "commit", "-q", "-m", family.name)
    assert (committed.returncode != 0) == attack, committed.stdout
    if attack:
        said = [line for line in committed.stdout.splitlines() if line.startswith(finding)]
        assert said and all(code in line for line in said), committed.stdout
        w.commit(family.name)  # --no-verify, as an agent that skips the hook would
    pushed = run("git", "push", "-q", "origin", "HEAD:refs/heads/topic")
    assert "oracle-guard (all six hooks)" in pushed.stdout, pushed.stdout  # pre-push ran
    assert (pushed.returncode != 0) == attack, pushed.stdout
    assert (rev(w.server, "refs/heads/topic") is None) == attack
    ci = run(
        sys.executable, "-m", "oracle_guard", "check", "--target", "origin/main", "--head", "HEAD"
    )
    assert ci.returncode == (1 if attack else 0), ci.stdout
    assert (code in ci.stdout) == attack, ci.stdout
    server = run("git", "push", "--no-verify", "origin", "HEAD:refs/heads/main")
    assert (server.returncode != 0) == attack, server.stdout
    if attack:
        assert "pre-receive hook declined" in server.stdout, server.stdout
        assert "remote: oracle-guard: refs/heads/main" in server.stdout
        assert [
            line for line in server.stdout.splitlines() if f"): {finding}" in line and code in line
        ], server.stdout
        assert rev(w.server, "refs/heads/main") == main_before
    else:
        assert "oracle-guard: push accepted" in server.stdout, server.stdout
        assert rev(w.server, "refs/heads/main") == rev(w.client, "HEAD")
