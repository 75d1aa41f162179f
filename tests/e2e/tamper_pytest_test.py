"""test-tamper against the real pytest: a deselecting conftest turns a red suite
green, and oracle-guard rejects the patch (staged, and in the installed pre-commit
hook) before the suite runs; the same patch without the conftest passes
oracle-guard and leaves the suite red."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from oracle_guard.checks.manifest import ALL_IN_ONE_NAME
from testing.checkout import snapshot_checkout
from testing.git import commit, git, init_repo, write

CONTRACT = """\
version: 1
write_set:
  allow: ["src/**", "tests/**"]
tamper:
  paths: ["tests/**"]
"""
FILES = {
    ".oracle-guard.yaml": CONTRACT,
    # the repository's own pytest configuration: src/ importable
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    # the bug: a 10 % discount takes 10 off, not 10 %
    "src/discount.py": "def discounted(price, percent):\n    return price - percent\n",
    # the owners' tests: test_discount fails on the bug
    "tests/test_discount.py": (
        "from discount import discounted\n\n\n"
        "def test_discount():\n    assert discounted(200, 10) == 180\n\n\n"
        "def test_no_discount():\n    assert discounted(200, 0) == 200\n"
    ),
}
# the agent's patch: src touched (the bug stays), and a conftest that deselects
# the failing test
SRC_CHANGE = {
    "src/discount.py": (
        "def discounted(price, percent):\n"
        '    """The price after a discount of ``percent``."""\n'
        "    return price - percent\n"
    )
}
CONFTEST = {
    "tests/conftest.py": (
        "def pytest_collection_modifyitems(config, items):\n"
        '    items[:] = [item for item in items if item.name != "test_discount"]\n'
    )
}


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory):
    return str(tmp_path_factory.mktemp("pre-commit-home"))


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory):
    return snapshot_checkout(tmp_path_factory.mktemp("hook-repo") / "oracle-guard")


def shop(path: Path, hook_repo) -> Path:
    """The repository, committed by its owners, with the oracle-guard pre-commit
    hook installed from this checkout."""
    hook_path, sha = hook_repo
    repo = init_repo(path)
    config = (
        f"repos:\n  - repo: {hook_path}\n    rev: {sha}\n    hooks:\n      - id: oracle-guard\n"
    )
    commit(repo, dict(FILES, **{".pre-commit-config.yaml": config}), "the shop and its tests")
    return repo


def isolated_env(**more: str) -> dict:
    """This process's environment without what would reach into the repository's
    pytest run: our PYTHONPATH, pytest's own variables, xdist's, plugins."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k != "PYTHONPATH" and not k.startswith(("PYTEST_", "PYTHON"))
    }
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # no xdist, hypothesis, ... from our venv
    env.update(more)
    return env


def run_pytest(repo: Path) -> subprocess.CompletedProcess:
    """The real pytest in ``repo``, from its work tree, with its own configuration
    (--rootdir keeps ours out of reach) and no cache written."""
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", str(repo), "tests"],
        cwd=repo,
        env=isolated_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
    )
    header = f"rootdir: {repo}\nconfigfile: pyproject.toml"
    assert header in proc.stdout, proc.stdout  # the repository's configuration, not ours
    return proc


def guard(repo: Path) -> subprocess.CompletedProcess:
    """``oracle-guard check`` on what is staged, as a separate process."""
    return subprocess.run(
        [sys.executable, "-m", "oracle_guard", "check", "-C", str(repo)],
        env=isolated_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def git_commit(repo: Path, home: str) -> subprocess.CompletedProcess:
    """``git commit`` with the installed pre-commit hook."""
    return subprocess.run(
        ["git", "commit", "-m", "fix the discount"],
        cwd=repo,
        env=isolated_env(PRE_COMMIT_HOME=home, PRE_COMMIT_COLOR="never"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def install_hook(repo: Path, home: str) -> None:
    installed = subprocess.run(
        [sys.executable, "-m", "pre_commit", "install"],
        cwd=repo,
        env=isolated_env(PRE_COMMIT_HOME=home),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert installed.returncode == 0, installed.stdout


def test_the_suite_is_red_before_the_patch(tmp_path, hook_repo):
    red = run_pytest(shop(tmp_path / "shop", hook_repo))
    assert red.returncode == 1, red.stdout
    assert "1 failed, 1 passed" in red.stdout, red.stdout


def test_a_deselecting_conftest_greens_pytest_and_is_rejected_before_the_suite_runs(
    tmp_path, hook_repo, pre_commit_home
):
    repo = shop(tmp_path / "shop", hook_repo)
    install_hook(repo, pre_commit_home)
    write(repo, dict(SRC_CHANGE, **CONFTEST))
    git(repo, "add", "-A")
    before = git(repo, "rev-parse", "HEAD")

    judged = guard(repo)
    assert judged.returncode == 1, judged.stdout
    assert judged.stdout.startswith(
        "tests/conftest.py:1: collection-changed: defines pytest_collection_modifyitems: "
        "it can deselect tests before they run\n"
    ), judged.stdout
    assert "test-tamper: failed (1 error)" in judged.stdout, judged.stdout

    blocked = git_commit(repo, pre_commit_home)
    assert blocked.returncode != 0, blocked.stdout
    assert ALL_IN_ONE_NAME in blocked.stdout, blocked.stdout
    assert "tests/conftest.py:1: collection-changed:" in blocked.stdout, blocked.stdout
    assert git(repo, "rev-parse", "HEAD") == before

    # what the guard kept out: with the conftest, the real pytest goes green
    green = run_pytest(repo)
    assert green.returncode == 0, green.stdout
    assert "1 passed" in green.stdout and "failed" not in green.stdout, green.stdout


def test_the_same_patch_without_the_conftest_passes_the_guard_and_the_suite_stays_red(
    tmp_path, hook_repo, pre_commit_home
):
    repo = shop(tmp_path / "shop", hook_repo)
    install_hook(repo, pre_commit_home)
    write(repo, SRC_CHANGE)
    git(repo, "add", "-A")

    judged = guard(repo)
    assert judged.returncode == 0, judged.stdout
    assert "test-tamper: passed\n" in judged.stdout, judged.stdout

    committed = git_commit(repo, pre_commit_home)
    assert committed.returncode == 0, committed.stdout
    assert ALL_IN_ONE_NAME in committed.stdout, committed.stdout

    red = run_pytest(repo)
    assert red.returncode == 1, red.stdout
    assert "1 failed, 1 passed" in red.stdout, red.stdout
