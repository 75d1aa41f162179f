"""The real pre-commit: try-repo and an installed git hook."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from testing.checkout import snapshot_checkout
from testing.git import commit, git, init_repo, stage, write

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
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=repo, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


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
        tmp_path, hook_repo, pre_commit_home):
    hook_path, _ = hook_repo
    repo = guarded_repo(tmp_path / "r")
    clean = pre_commit(repo, pre_commit_home, "try-repo", str(hook_path), "fixture-lock",
                       "--all-files")
    assert clean.returncode == 0, clean.stdout
    assert "Passed" in clean.stdout

    stage(repo, {"fixtures/pricing.json": '{"price": 1}\n'})
    dirty = pre_commit(repo, pre_commit_home, "try-repo", str(hook_path), "fixture-lock",
                       "--all-files")
    assert dirty.returncode == 1, dirty.stdout
    assert "fixtures/pricing.json: fixture-mismatch:" in dirty.stdout


def test_installed_hook_blocks_a_commit_and_lets_an_honest_one_through(
        tmp_path, hook_repo, pre_commit_home):
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
    honest = subprocess.run(["git", "commit", "-m", "honest"], cwd=repo, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert honest.returncode == 0, honest.stdout

    write(repo, {"fixtures/pricing.json": '{"price": 1}\n'})
    git(repo, "add", "-A")
    before = git(repo, "rev-parse", "HEAD")
    blocked = subprocess.run(["git", "commit", "-m", "sneaky"], cwd=repo, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert blocked.returncode != 0
    assert "fixtures/pricing.json: fixture-mismatch:" in blocked.stdout
    assert "fixtures/pricing.json: write-denied:" in blocked.stdout
    assert git(repo, "rev-parse", "HEAD") == before
