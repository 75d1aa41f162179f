"""The real pre-commit and the real prek: try-repo, installed git hooks (commit and
pre-push), and the setup init writes for each."""

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Mapping, Optional

import pytest

from oracle_guard.checks.manifest import ALL_IN_ONE_NAME
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


class Runner:
    """A real hook runner, pre-commit or prek, with a private cache folder (its
    home): each installs hooks from .pre-commit-hooks.yaml and runs them alike."""

    def __init__(self, name: str, home: str) -> None:
        self.name = name
        self.home = home

    def env(self, base: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
        env = dict(os.environ if base is None else base)
        if self.name == "pre-commit":
            return dict(env, PRE_COMMIT_HOME=self.home, PRE_COMMIT_COLOR="never")
        # prek makes hook environments with uv, which it pip-installs when asked
        # (no download from elsewhere); the python3 it runs is this one
        path = os.pathsep.join([BIN, env.get("PATH", "")])
        return dict(env, PREK_HOME=self.home, PREK_COLOR="never", PREK_UV_SOURCE="pip", PATH=path)

    def argv(self, *args: str) -> List[str]:
        if self.name == "pre-commit":
            return [sys.executable, "-m", "pre_commit", *args]
        return [os.path.join(BIN, "prek"), *args]


BIN = os.path.dirname(sys.executable)  # the test extra installs prek beside this Python
RUNNERS = ["pre-commit", "prek"]


@pytest.fixture(scope="module", params=RUNNERS)
def runner(request, tmp_path_factory):
    # one cache for the module and runner: each installs oracle-guard once
    return Runner(request.param, str(tmp_path_factory.mktemp(f"{request.param}-home")))


def pre_commit(repo: Path, runner: Runner, *args: str) -> subprocess.CompletedProcess:
    """``pre-commit ARGS`` or ``prek ARGS`` in ``repo``."""
    return subprocess.run(
        runner.argv(*args),
        cwd=repo,
        env=runner.env(),
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


def test_try_repo_rejects_a_rewritten_fixture_and_passes_a_clean_tree(tmp_path, hook_repo, runner):
    hook_path, _ = hook_repo
    repo = guarded_repo(tmp_path / "r")
    clean = pre_commit(repo, runner, "try-repo", str(hook_path), "fixture-lock", "--all-files")
    assert clean.returncode == 0, clean.stdout
    assert "Passed" in clean.stdout

    stage(repo, {"fixtures/pricing.json": '{"price": 1}\n'})
    dirty = pre_commit(repo, runner, "try-repo", str(hook_path), "fixture-lock", "--all-files")
    assert dirty.returncode == 1, dirty.stdout
    assert "fixtures/pricing.json: fixture-mismatch:" in dirty.stdout


def test_installed_hook_blocks_a_commit_and_lets_an_honest_one_through(tmp_path, hook_repo, runner):
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
    installed = pre_commit(repo, runner, "install")
    assert installed.returncode == 0, installed.stdout

    env = runner.env()
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


def test_an_owner_appends_a_seed_with_one_signed_commit_and_no_skip(tmp_path, hook_repo, runner):
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
        installed = pre_commit(repo, runner, "install", "--hook-type", hook_type)
        assert installed.returncode == 0, installed.stdout
    env = runner.env(push_env())

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
    assert ALL_IN_ONE_NAME in pushed.stdout  # the pre-push hook ran
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
    tmp_path, hook_repo, runner
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
    env = runner.env(push_env())
    for name, broken in (("honest", False), ("broken", True)):
        server = make_server(tmp_path / f"{name}.git")
        repo = guarded_repo(tmp_path / name, config)
        if broken:
            commit(repo, {"fixtures/pricing.json": '{"price": 1}\n'}, "rewrite the fixture")
        git(repo, "remote", "add", "origin", str(server))
        installed = pre_commit(repo, runner, "install", "--hook-type", "pre-push")
        assert installed.returncode == 0, installed.stdout
        pushed = subprocess.run(
            ["git", "push", "origin", "main"],
            cwd=repo,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert ALL_IN_ONE_NAME in pushed.stdout, pushed.stdout  # it ran
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
    family, attack, tamper_baseline, runner, tmp_path
):
    """Each test-tamper family (testing/scenarios.TAMPER) through the real parts:
    the installed pre-commit hook refuses the commit, the installed pre-push hook
    the push, `oracle-guard check --target origin/main --head HEAD` the branch, and
    the server's pre-receive hook a push that skips the local hooks; its near miss
    (the same patch without the tampering part) passes all four."""
    w = Work.copy(tamper_baseline, tmp_path / "copy")
    env = runner.env(push_env(GL_USERNAME="bob"))

    def run(*argv):
        return subprocess.run(
            argv, cwd=w.client, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )

    installed = pre_commit(w.client, runner, "install")
    assert installed.returncode == 0, installed.stdout
    w.git("checkout", "-q", "-b", "change")
    w.put(family.attack if attack else family.near_miss)
    finding = f"{family.path}:"
    code = f": {family.code}:"
    main_before = rev(w.server, "refs/heads/main")

    committed = run("git", "commit", "-q", "-m", family.name)
    assert (committed.returncode != 0) == attack, committed.stdout
    if attack:
        said = [
            ln.strip() for ln in committed.stdout.splitlines() if ln.strip().startswith(finding)
        ]
        assert said and all(code in line for line in said), committed.stdout
        w.commit(family.name)  # --no-verify, as an agent that skips the hook would
    pushed = run("git", "push", "-q", "origin", "HEAD:refs/heads/topic")
    assert ALL_IN_ONE_NAME in pushed.stdout, pushed.stdout  # pre-push ran
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


def test_init_sets_up_the_runner_on_path_and_its_install_step_guards_commits(
    tmp_path, hook_repo, runner
):
    """init writes .pre-commit-config.yaml, which both runners read (never a new
    prek.toml, which pre-commit does not), and prints the install step of the runner
    on PATH;
    run as printed, it blocks an oracle edit and lets an honest change through."""
    import shlex

    hook_path, sha = hook_repo
    repo = init_repo(tmp_path / "r")
    commit(repo, {"fixtures/pricing.json": PRICING, "src/app.py": "x = 1\n"}, "the shop")
    path = os.pathsep.join(([BIN] if runner.name == "prek" else []) + ["/usr/bin", "/bin"])
    env = dict(os.environ, PATH=path, GIT_CONFIG_GLOBAL=os.devnull, ORACLE_GUARD_NOW="2026-09-25")
    init = subprocess.run(
        [sys.executable, "-m", "oracle_guard", "init", "--repo", str(hook_path)],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert init.returncode == 0, init.stdout
    config, other = ".pre-commit-config.yaml", "prek.toml"
    assert (repo / config).is_file() and not (repo / other).exists(), init.stdout
    assert sha in (repo / config).read_text()  # the local clone's HEAD, pinned
    steps = dict(
        reversed(line.split(". ", 1))
        for line in init.stdout.splitlines()
        if line.startswith("  ") and line.strip()[:1].isdigit()
    )
    add = next(step for step in steps if step.startswith("git add "))
    install = next(step for step in steps if " install" in step and "git" not in step)
    assert install.split()[0] == runner.name, install
    git(repo, "add", "--", *shlex.split(add)[2:])
    git(repo, "commit", "-q", "--no-verify", "-m", "guard the oracle")
    argv = shlex.split(install.split("#")[0])
    installed = pre_commit(repo, runner, *argv[1:])
    assert installed.returncode == 0, installed.stdout

    def commit_all(message):
        git(repo, "add", "-A")
        return subprocess.run(
            ["git", "commit", "-m", message],
            cwd=repo,
            env=runner.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    write(repo, {"src/app.py": "x = 2\n"})
    honest = commit_all("honest")
    assert honest.returncode == 0, honest.stdout
    assert ALL_IN_ONE_NAME in honest.stdout, honest.stdout  # it ran
    write(repo, {"fixtures/pricing.json": '{"price": 1}\n'})
    before = git(repo, "rev-parse", "HEAD")
    sneaky = commit_all("sneaky")
    assert sneaky.returncode != 0
    assert "fixtures/pricing.json: fixture-mismatch:" in sneaky.stdout, sneaky.stdout
    assert git(repo, "rev-parse", "HEAD") == before


def test_a_hook_learns_which_runner_ran_it(tmp_path, runner):
    """What runner_name reads is what the real runner sets in a hook's environment."""
    probe = (
        "import os; from oracle_guard.revisions import runner_name; "
        "print('ran by', runner_name(os.environ))"
    )
    config = (
        "repos:\n  - repo: local\n    hooks:\n      - id: probe\n        name: probe\n"
        f'        entry: {sys.executable} -c "{probe}"\n        language: system\n'
        "        pass_filenames: false\n        always_run: true\n        verbose: true\n"
    )
    repo = init_repo(tmp_path / "r")
    commit(repo, {".pre-commit-config.yaml": config}, "probe")
    ran = pre_commit(repo, runner, "run", "--all-files")
    assert ran.returncode == 0, ran.stdout
    assert f"ran by {runner.name}\n" in ran.stdout, ran.stdout
