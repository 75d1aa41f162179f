"""A contract broken at HEAD (committed with --no-verify): the staged check judges by
HEAD's contract, so it fails closed on every staged fix and says the way out;
undoing the commit, or an owner's fix committed with --no-verify and judged in CI
from the commit before, both recover."""

import os

import pytest

from oracle_guard.checks.registry import CHECKS, HOOKS
from testing import samples
from testing.git import commit, git, init_repo, run_guard, stage
from testing.oracle import NOW

GOOD = """\
version: 1
write_set:
  allow: [src/**]
"""
BROKEN = GOOD.replace("[src/**]", "[src/**, docs/**") + "tamper:\n  paths: [tests/**]\n"
WAY_OUT = (
    "a commit is judged by the contract in HEAD, so no staged fix passes: undo the commit "
    "that broke it (git reset --soft HEAD~1, then git restore --staged --worktree "
    ".oracle-guard.yaml), or, once pushed, an owner commits the fix with --no-verify "
    "(docs: how-to/when-a-hook-blocks.md)"
)


@pytest.fixture(autouse=True)
def _no_global_git_config(monkeypatch):
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)


@pytest.fixture
def broken(tmp_path):
    """A guarded repository whose HEAD commit broke the contract; (repo, guarded commit)."""
    repo = init_repo(tmp_path / "r")
    guarded = commit(repo, {".oracle-guard.yaml": GOOD, "src/app.py": "x = 1\n"}, "guard")
    commit(repo, {".oracle-guard.yaml": BROKEN}, "broke the contract (--no-verify)")
    return repo, guarded


def check(capsys, repo, *args):
    return run_guard(capsys, repo, "check", "--now", NOW, *args)


def test_a_staged_fix_fails_closed_and_names_the_way_out(broken, capsys):
    repo, _ = broken
    stage(repo, {".oracle-guard.yaml": GOOD})
    rc, out, err = check(capsys, repo)
    assert rc == 2 and out == ""
    assert err.startswith("oracle-guard: error: .oracle-guard.yaml:3: the list opened by '['")
    assert err.rstrip("\n").endswith(f"(the contract in HEAD); {WAY_OUT}")


def test_undoing_the_commit_that_broke_it_recovers(broken, capsys):
    repo, guarded = broken
    git(repo, "reset", "-q", "--soft", "HEAD~1")
    git(repo, "restore", "--staged", "--worktree", ".oracle-guard.yaml")
    assert git(repo, "rev-parse", "HEAD").strip() == guarded
    rc, out, err = check(capsys, repo)
    assert rc == 0, out + err
    stage(repo, {"src/app.py": "x = 2\n"})  # and the next change is judged again
    assert check(capsys, repo)[0] == 0


def test_an_owners_fix_committed_without_the_hook_passes_ci(broken, capsys):
    repo, guarded = broken
    commit(repo, {".oracle-guard.yaml": GOOD}, "fix the contract (--no-verify)")
    rc, out, err = check(capsys, repo, "--base", guarded, "--head", "HEAD")
    assert rc == 0, out + err


def test_a_commit_judged_in_ci_gets_no_staged_way_out(broken, capsys):
    # near miss: the way out is the staged check's; CI judges the broken commit itself
    repo, guarded = broken
    rc, out, err = check(capsys, repo, "--base", guarded, "--head", "HEAD")
    assert rc != 0
    assert "no staged fix passes" not in out + err


# -- any check's section, broken: from the registry's samples ----------------------------


@pytest.mark.parametrize("entry", CHECKS, ids=HOOKS)
def test_a_broken_section_of_every_check_fails_closed(tmp_path, capsys, entry):
    """The samples' contract at HEAD with this check's section broken (committed with
    --no-verify): every staged change fails closed naming the section and the way
    out; near miss: the samples' own contract passes."""
    repo = init_repo(tmp_path / "r")
    commit(repo, samples.sample_tree(), "guard")
    rc, out, err = check(capsys, repo)
    assert (rc, err) == (0, ""), out
    sections = dict(samples.sample_sections(), **{entry.section: "not a section"})
    commit(repo, {".oracle-guard.yaml": samples.contract_text(sections)}, "broke it")
    stage(repo, {".oracle-guard.yaml": samples.sample_contract()})
    rc, out, err = check(capsys, repo)
    assert (rc, out) == (2, "")
    assert f"invalid contract at $.{entry.section}: " in err, err
    assert err.rstrip("\n").endswith(f"(the contract in HEAD); {WAY_OUT}")
