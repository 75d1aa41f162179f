import subprocess

import pytest

from oracle_guard.git.plumbing import Git
from oracle_guard.revisions import resolve, runner_name
from testing.git import commit, git, init_repo, run_guard, stage, write
from testing.oracle import NOW

CONTRACT = """\
version: 1
write_set:
  deny: ["oracle/**"]
"""
DENIED = "oracle/a.json: write-denied: matches deny pattern 'oracle/**'"
SHALLOW_HINT = (
    "fetch full history (actions/checkout with 'fetch-depth: 0', or "
    "'git fetch --unshallow origin' / 'git fetch origin main')"
)


def write_set(capsys, repo, *args, env=None):
    return run_guard(capsys, repo, "check", "--only", "write-set", "--now", NOW, *args, env=env)


def base_repo(tmp_path, contract=CONTRACT):
    repo = init_repo(tmp_path / "r")
    commit(
        repo,
        {".oracle-guard.yaml": contract, "oracle/a.json": "1\n", "src/a.py": ""},
        message="base",
    )
    return repo


def rev(repo, name):
    return git(repo, "rev-parse", name).strip()


def resolved(repo, env=None, base=None, head=None, contract_base=None):
    git_ = Git(str(repo))
    try:
        revs = resolve(git_, base, head, env or {}, lambda snap: contract_base)
        for snapshot in (revs.base, revs.candidate, revs.rules):
            _ = snapshot.entries  # read now: a read after close would start a git of its own
    finally:
        git_.close()
    return revs


# -- the candidate --------------------------------------------------------------


def test_candidate_is_the_index_and_unstaged_edits_do_not_count(tmp_path, capsys):
    repo = base_repo(tmp_path)
    write(repo, {"oracle/a.json": "2\n"})  # in the working tree only
    rc, out, _ = write_set(capsys, repo)
    assert rc == 0, out
    stage(repo)
    rc, out, _ = write_set(capsys, repo)
    assert rc == 1
    assert out.splitlines()[0] == DENIED
    # staged, then reverted in the working tree: what git will commit still counts
    write(repo, {"oracle/a.json": "1\n"})
    rc, out, _ = write_set(capsys, repo)
    assert rc == 1


def test_resolve_defaults_to_index_against_head(tmp_path):
    repo = base_repo(tmp_path)
    stage(repo, {"src/b.py": ""})
    revs = resolved(repo)
    assert (revs.base.label, revs.base.commit, revs.base_reason) == (
        "HEAD",
        rev(repo, "HEAD"),
        "HEAD",
    )
    assert (revs.candidate.label, revs.candidate.commit) == ("the index", None)
    assert "src/b.py" in revs.candidate and "src/b.py" not in revs.base


def test_head_judges_a_commit_instead_of_the_index(tmp_path, capsys):
    repo = base_repo(tmp_path)
    commit(repo, {"oracle/a.json": "2\n"}, message="agent edit")
    stage(repo, {"oracle/a.json": "1\n"})  # the index undoes it: --head must not look here
    rc, out, _ = write_set(capsys, repo, "--base", "HEAD~1", "--head", "HEAD")
    assert rc == 1
    assert out.splitlines()[0] == DENIED
    rc, out, _ = write_set(capsys, repo, "--base", "HEAD~1")
    assert rc == 0, out


def test_head_alone_is_judged_against_its_first_parent(tmp_path, capsys):
    repo = base_repo(tmp_path)
    commit(repo, {"oracle/a.json": "2\n"}, message="agent edit")
    # judging a commit alone judges its own change, never the commit against itself
    rc, out, _ = write_set(capsys, repo, "--head", "HEAD")
    assert rc == 1, out
    assert "oracle/a.json: write-denied:" in out


def test_head_alone_on_a_root_commit_compares_with_the_empty_tree(tmp_path, capsys):
    repo = init_repo(tmp_path / "root")
    commit(
        repo,
        {
            ".oracle-guard.yaml": "version: 1\nwrite_set:\n  deny: ['oracle/**']\n",
            "oracle/a.json": "1\n",
        },
    )
    rc, out, _ = write_set(capsys, repo, "--head", "HEAD")
    assert rc == 0, out
    assert "nothing to check: the base (the empty tree (a root commit)) has no contract" in out


def test_base_option(tmp_path, capsys):
    repo = base_repo(tmp_path)
    commit(repo, {"oracle/a.json": "2\n"}, message="agent edit")
    commit(repo, {"src/a.py": "x = 1\n"}, message="honest edit")
    rc, out, _ = write_set(capsys, repo)
    assert rc == 0, out
    rc, out, _ = write_set(capsys, repo, "--base", "HEAD~2")
    assert rc == 1
    assert out.splitlines()[0] == DENIED
    rc, out, _ = write_set(capsys, repo, "--base", "HEAD~1")
    assert rc == 0, out


@pytest.mark.parametrize("bad", ["no-such-branch", "HEAD~5", "--output=x", "HEAD:src/a.py"])
def test_bad_base_is_an_error(tmp_path, capsys, bad):
    repo = base_repo(tmp_path)
    rc, out, err = write_set(capsys, repo, f"--base={bad}")
    assert (rc, out) == (2, "")
    assert err == (
        f"oracle-guard: error: --base {bad!r} does not name a commit in this repository\n"
    )


def test_bad_head_is_an_error(tmp_path, capsys):
    repo = base_repo(tmp_path)
    rc, _, err = write_set(capsys, repo, "--head", "nope")
    assert rc == 2
    assert err == "oracle-guard: error: --head 'nope' does not name a commit in this repository\n"


# -- pre-commit's push range ---------------------------------------------------------


def test_pre_commit_from_and_to_ref(tmp_path, capsys):
    repo = base_repo(tmp_path)
    first = rev(repo, "HEAD")
    commit(repo, {"oracle/a.json": "2\n"}, message="agent edit")
    pushed = commit(repo, {"src/a.py": "x = 1\n"}, message="honest edit")
    stage(repo, {"oracle/a.json": "1\n"})  # the index is not what is pushed
    env = {"PRE_COMMIT_FROM_REF": first, "PRE_COMMIT_TO_REF": pushed}
    rc, out, _ = write_set(capsys, repo, env=env)
    assert rc == 1
    assert out.splitlines()[0] == DENIED
    env = {"PRE_COMMIT_FROM_REF": rev(repo, "HEAD~1"), "PRE_COMMIT_TO_REF": pushed}
    rc, out, _ = write_set(capsys, repo, env=env)
    assert rc == 0, out


def test_pre_commit_from_ref_alone_is_ignored(tmp_path):
    repo = base_repo(tmp_path)
    commit(repo, {"src/a.py": "x\n"})
    revs = resolved(repo, env={"PRE_COMMIT_FROM_REF": "HEAD~1"})
    assert (revs.base_reason, revs.candidate.label) == ("HEAD", "the index")


def test_explicit_options_win_over_pre_commit_refs(tmp_path):
    repo = base_repo(tmp_path)
    commit(repo, {"src/a.py": "x\n"})
    env = {"PRE_COMMIT_FROM_REF": "HEAD~1", "PRE_COMMIT_TO_REF": "HEAD", "CI": "1"}
    revs = resolved(repo, env=env, base="HEAD")
    assert (revs.base_reason, revs.base.commit) == ("--base", rev(repo, "HEAD"))
    assert revs.candidate.label == "the index"
    revs = resolved(repo, env=env)
    assert revs.base_reason == "PRE_COMMIT_FROM_REF"
    assert revs.candidate.commit == rev(repo, "HEAD")


def test_bad_pre_commit_ref_is_an_error(tmp_path, capsys):
    repo = base_repo(tmp_path)
    env = {"PRE_COMMIT_FROM_REF": "0" * 40, "PRE_COMMIT_TO_REF": "HEAD"}
    rc, _, err = write_set(capsys, repo, env=env)
    assert rc == 2
    assert err == (
        f"oracle-guard: error: PRE_COMMIT_FROM_REF {'0' * 40!r} does not name "
        "a commit in this repository\n"
    )


# -- CI ------------------------------------------------------------------------------


def pull_request(tmp_path):
    """An origin with main, a clone on a feature branch that edits the oracle,
    and main moved on (with its own oracle change) after the branch started."""
    origin = init_repo(tmp_path / "origin.git", bare=True)
    seed = base_repo(tmp_path)
    git(seed, "remote", "add", "origin", str(origin))
    git(seed, "push", "-q", "origin", "main")
    fork = rev(seed, "HEAD")
    git(seed, "checkout", "-q", "-b", "feature")
    commit(seed, {"oracle/a.json": "2\n"}, message="agent edit")
    commit(seed, {"src/a.py": "x = 1\n"}, message="honest edit")
    git(seed, "push", "-q", "origin", "feature")
    git(seed, "checkout", "-q", "main")
    commit(seed, {"oracle/b.json": "owners' change\n"}, message="main moves on")
    git(seed, "push", "-q", "origin", "main")
    git(seed, "checkout", "-q", "feature")
    git(seed, "fetch", "-q", "origin")
    git(seed, "branch", "-q", "-D", "main")  # CI checkouts have origin/main only
    return seed, origin, fork


def test_ci_github_base_ref_judges_the_merge_into_the_target_tip(tmp_path, capsys):
    repo, _, _ = pull_request(tmp_path)
    env = {"CI": "1", "GITHUB_BASE_REF": "main"}
    rc, out, _ = write_set(capsys, repo, env=env)
    assert rc == 1
    # only the branch's own edit: main's later oracle/b.json is in the merge unchanged
    assert out.splitlines()[:2] == [DENIED, "write-set: failed (1 error)"]
    revs = resolved(repo, env=env)
    main_tip = rev(repo, "refs/remotes/origin/main")
    assert (revs.base.commit, revs.rules.commit, revs.base_reason) == (
        main_tip,
        main_tip,
        "GITHUB_BASE_REF",
    )
    assert revs.head == rev(repo, "HEAD")
    assert (
        revs.candidate.commit == git(repo, "merge-tree", "--write-tree", main_tip, "HEAD").strip()
    )
    assert revs.history == (rev(repo, "HEAD"), [main_tip])


def test_ci_github_base_ref_near_miss(tmp_path, capsys):
    repo, _, fork = pull_request(tmp_path)
    git(repo, "checkout", "-q", "-b", "honest", fork)  # the honest edit alone
    commit(repo, {"src/a.py": "x = 1\n"}, message="honest edit")
    rc, out, _ = write_set(capsys, repo, env={"CI": "1", "GITHUB_BASE_REF": "main"})
    assert rc == 0, out


def test_ci_an_oracle_edit_undone_later_in_the_branch_passes(tmp_path, capsys):
    # what is recorded is the merge: a red branch turns green by restoring the oracle
    repo, _, _ = pull_request(tmp_path)
    git(repo, "revert", "--no-edit", "HEAD~1")
    rc, out, _ = write_set(capsys, repo, env={"CI": "1", "GITHUB_BASE_REF": "main"})
    assert rc == 0, out


def test_ci_gitlab_diff_base_sha(tmp_path, capsys):
    repo, _, fork = pull_request(tmp_path)
    env = {
        "CI": "1",
        "CI_MERGE_REQUEST_DIFF_BASE_SHA": fork,
        "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
    }
    rc, out, _ = write_set(capsys, repo, env=env)
    assert rc == 1
    assert out.splitlines()[0] == DENIED
    assert resolved(repo, env=env).base_reason == "CI_MERGE_REQUEST_TARGET_BRANCH_NAME"


def test_ci_contract_base_key(tmp_path, capsys):
    repo, _, fork = pull_request(tmp_path)
    revs = resolved(repo, env={"CI": "1"}, contract_base="origin/main")
    assert (revs.base.commit, revs.base_reason) == (
        rev(repo, "refs/remotes/origin/main"),
        "the contract's 'base'",
    )
    # through the CLI: the key is read from the contract
    repo2 = base_repo(tmp_path / "2", CONTRACT + "base: main\n")
    git(repo2, "checkout", "-q", "-b", "feature")
    commit(repo2, {"oracle/a.json": "2\n"}, message="agent edit")
    rc, out, _ = write_set(capsys, repo2, env={"CI": "1"})
    assert rc == 1
    assert out.splitlines()[0] == DENIED


def test_ci_base_choices_in_order(tmp_path):
    repo, _, fork = pull_request(tmp_path)
    env = {
        "CI": "1",
        "CI_MERGE_REQUEST_DIFF_BASE_SHA": fork,
        "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
    }
    revs = resolved(repo, env=env, contract_base="origin/feature")
    assert revs.base_reason == "CI_MERGE_REQUEST_TARGET_BRANCH_NAME"
    env = {"CI": "1", "GITHUB_BASE_REF": "main", "CI_MERGE_REQUEST_DIFF_BASE_SHA": "nope"}
    assert resolved(repo, env=env).base_reason == "GITHUB_BASE_REF"


def test_ci_named_base_that_does_not_resolve_never_falls_through(tmp_path, capsys):
    # a missing origin/<base> must not hand the choice to the contract the change wrote
    repo = base_repo(tmp_path, CONTRACT + "base: main\n")
    git(repo, "checkout", "-q", "-b", "feature")
    commit(repo, {"oracle/a.json": "2\n"}, message="agent edit")
    for env in (
        {"CI": "1", "GITHUB_BASE_REF": "nope"},
        {
            "CI": "1",
            "CI_MERGE_REQUEST_DIFF_BASE_SHA": "0" * 40,
            "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
        },
    ):
        rc, out, err = write_set(capsys, repo, env=env)
        assert (rc, out) == (2, "")
        assert "is not in this clone" in err


def test_ci_rules_come_from_the_target_tip_not_an_old_merge_base(tmp_path, capsys):
    # a branch cut before the contract existed is still judged by main's contract
    origin = init_repo(tmp_path / "origin.git", bare=True)
    repo = init_repo(tmp_path / "r")
    git(repo, "remote", "add", "origin", str(origin))
    commit(repo, {"seeds/a.json": "[1, 2]\n", "src/a.py": "x\n"}, message="before the contract")
    commit(
        repo,
        {
            ".oracle-guard.yaml": "version: 1\nseeds:\n"
            "  - {paths: ['seeds/*.json'], format: json-array}\n"
        },
        message="contract",
    )
    git(repo, "push", "-q", "origin", "main")
    git(repo, "checkout", "-q", "-b", "evil", "main~1")
    commit(repo, {"seeds/a.json": "[2, 1]\n"}, message="reorder")
    git(repo, "fetch", "-q", "origin")
    rc, out, _ = run_guard(
        capsys,
        repo,
        "check",
        "--only",
        "seed-append-only",
        env={"CI": "1", "GITHUB_BASE_REF": "main"},
    )
    assert rc == 1, out
    assert "seeds/a.json:1: seed-reordered:" in out


def test_ci_without_a_base_is_an_error(tmp_path, capsys):
    repo = base_repo(tmp_path)
    commit(repo, {"src/a.py": "x\n"})
    rc, out, err = write_set(capsys, repo, env={"CI": "1"})
    assert (rc, out) == (2, "")
    assert err == (
        "oracle-guard: error: CI is set but no base is named: set GITHUB_BASE_REF or "
        "CI_MERGE_REQUEST_TARGET_BRANCH_NAME, pass --target BRANCH or --base REV, or give "
        "the contract a 'base' branch such as origin/main\n"
    )


def test_ci_with_an_unresolvable_base_is_an_error(tmp_path, capsys):
    repo = base_repo(tmp_path)
    commit(repo, {"src/a.py": "x\n"})
    rc, _, err = write_set(capsys, repo, env={"CI": "1", "GITHUB_BASE_REF": "release/2"})
    assert rc == 2
    # the fix names the branch CI named, not a stock 'main'
    assert err == (
        "oracle-guard: error: GITHUB_BASE_REF=release/2: refs/remotes/origin/release/2 "
        "is not in this clone; fetch it (git fetch origin "
        "'+refs/heads/release/2:refs/remotes/origin/release/2') with full history "
        "(actions/checkout with 'fetch-depth: 0', GitLab's GIT_DEPTH: 0, or "
        "'git fetch --unshallow')\n"
    )


def test_ci_never_compares_the_candidate_with_itself(tmp_path, capsys):
    repo, _, _ = pull_request(tmp_path)
    head = rev(repo, "HEAD")
    for env in (
        {
            "CI": "1",
            "CI_MERGE_REQUEST_DIFF_BASE_SHA": head,
            "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "feature",
        },
        {"CI": "1", "GITHUB_BASE_REF": "feature"},
    ):
        rc, out, err = write_set(capsys, repo, env=env)
        assert (rc, out) == (2, "")
        assert err.startswith("oracle-guard: error: the target refs/remotes/origin/")
        assert f"already contains HEAD ({head[:12]}): merging it changes nothing" in err


def test_ci_base_ahead_of_the_candidate_is_an_error(tmp_path, capsys):
    # a push build of main where main already contains HEAD: never a silent pass
    repo, _, _ = pull_request(tmp_path)
    git(repo, "checkout", "-q", "--detach", "HEAD~1")
    rc, _, err = write_set(capsys, repo, env={"CI": "1", "GITHUB_BASE_REF": "feature"})
    assert rc == 2
    assert "nothing to judge" in err


def test_ci_contract_base_cannot_be_moved_by_the_change(tmp_path, capsys):
    # the change points the contract's 'base' at its own oracle edit
    repo = base_repo(tmp_path, CONTRACT + "base: main\n")
    git(repo, "checkout", "-q", "-b", "feature")
    commit(repo, {"oracle/a.json": "2\n"}, message="agent edit")
    edit = rev(repo, "HEAD")
    commit(repo, {".oracle-guard.yaml": CONTRACT + f"base: {edit}\n"}, message="move base")
    rc, out, err = write_set(capsys, repo, env={"CI": "1"})
    assert (rc, out) == (2, "")
    assert err.startswith(
        f"oracle-guard: error: the contract's 'base' {edit!r} is not a "
        "branch in this clone: it must name a branch, not a tag"
    )
    for relative in ("HEAD~1", "feature~1", "@{-1}"):
        commit(repo, {".oracle-guard.yaml": CONTRACT + f"base: '{relative}'\n"})
        rc, _, err = write_set(capsys, repo, env={"CI": "1"})
        assert rc == 2
        assert "invalid contract at $.base" in err, (relative, err)
    # a branch whose tip names another base: the change cannot choose it either
    git(repo, "branch", "-q", "weak", edit)
    commit(repo, {".oracle-guard.yaml": CONTRACT + "base: weak\n"})
    rc, _, err = write_set(capsys, repo, env={"CI": "1"})
    assert rc == 2
    assert err == (
        "oracle-guard: error: the candidate's contract names base 'weak', but the "
        "contract at refs/heads/weak names 'main': a change cannot choose its own base; "
        "pass --target BRANCH\n"
    )


def shallow_clone(tmp_path, origin, *args):
    clone = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", *args, f"file://{origin}", str(clone)], check=True
    )
    return clone


def test_shallow_clone_without_the_base_branch(tmp_path, capsys):
    _, origin, _ = pull_request(tmp_path)
    clone = shallow_clone(tmp_path, origin, "--branch", "feature")  # single branch
    rc, _, err = write_set(capsys, clone, env={"CI": "1", "GITHUB_BASE_REF": "main"})
    assert rc == 2
    assert err == (
        "oracle-guard: error: GITHUB_BASE_REF=main: refs/remotes/origin/main is not in "
        "this clone; fetch it (git fetch origin '+refs/heads/main:refs/remotes/origin/"
        "main') with full history (actions/checkout with 'fetch-depth: 0', GitLab's "
        "GIT_DEPTH: 0, or 'git fetch --unshallow')\n"
    )


def test_shallow_clone_without_the_merge_base(tmp_path, capsys):
    _, origin, _ = pull_request(tmp_path)
    clone = shallow_clone(tmp_path, origin, "--branch", "feature", "--no-single-branch")
    rc, _, err = write_set(capsys, clone, env={"CI": "1", "GITHUB_BASE_REF": "main"})
    assert rc == 2
    assert err == (
        "oracle-guard: error: no merge-base between refs/remotes/origin/main "
        f"(GITHUB_BASE_REF) and HEAD; {SHALLOW_HINT}\n"
    )


def test_shallow_clone_with_a_missing_base_commit(tmp_path, capsys):
    _, origin, fork = pull_request(tmp_path)
    clone = shallow_clone(tmp_path, origin, "--branch", "feature")
    for env, args, what in (
        ({}, ("--base", fork), "--base"),
        (
            {
                "CI": "1",
                "CI_MERGE_REQUEST_DIFF_BASE_SHA": fork,
                "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
            },
            (),
            None,
        ),
    ):
        rc, _, err = write_set(capsys, clone, *args, env=env)
        assert rc == 2
        assert err.startswith("oracle-guard: error: ")
        if what:
            assert err.endswith(f"{SHALLOW_HINT}\n")
        else:  # the target branch is missing from the single-branch clone: fetch it
            assert "git fetch origin '+refs/heads/main:refs/remotes/origin/main'" in err
        if what:
            assert err.startswith(f"oracle-guard: error: {what} {fork!r} does not name a commit")


def test_full_clone_near_miss(tmp_path, capsys):
    _, origin, _ = pull_request(tmp_path)
    clone = tmp_path / "full"
    subprocess.run(
        ["git", "clone", "-q", "--branch", "feature", str(origin), str(clone)], check=True
    )
    rc, out, _ = write_set(capsys, clone, env={"CI": "1", "GITHUB_BASE_REF": "main"})
    assert rc == 1
    assert out.splitlines()[0] == DENIED


# -- edge states -----------------------------------------------------------------------


def test_repo_with_no_commits_judges_the_index(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    stage(repo, {".oracle-guard.yaml": CONTRACT, "oracle/a.json": "1\n"})
    revs = resolved(repo)
    assert (revs.base.label, revs.base.entries, revs.base_reason) == (
        "no commits yet",
        {},
        "no commits yet",
    )
    rc, out, _ = run_guard(capsys, repo, "check", "--now", NOW)
    assert rc == 0, out
    assert "write-set: passed (nothing to check: the base (no commits yet) has no contract" in out


def test_empty_repo_with_no_commits_and_empty_index(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    rc, out, _ = run_guard(capsys, repo, "check", "--now", NOW)
    assert rc == 0, out


def test_ci_with_no_commits_is_an_error(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    stage(repo, {".oracle-guard.yaml": CONTRACT + "base: main\n"})
    rc, _, err = write_set(capsys, repo, env={"CI": "1"})
    assert rc == 2
    assert err == (
        "oracle-guard: error: CI is set, but 'HEAD' names no commit: CI judges "
        "a commit, and this repository has none\n"
    )


def test_outside_a_repository_is_an_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    plain = tmp_path / "plain"
    plain.mkdir()
    rc, out, err = write_set(capsys, plain)
    assert (rc, out) == (2, "")
    assert err == f"oracle-guard: error: not a git repository: {plain}\n"


def test_missing_directory_is_an_error(tmp_path, capsys):
    rc, _, err = write_set(capsys, tmp_path / "missing")
    assert rc == 2
    assert err.startswith("oracle-guard: error: ") and err.count("\n") == 1


def test_unmerged_index_is_an_error(tmp_path, capsys):
    repo = base_repo(tmp_path)
    git(repo, "checkout", "-q", "-b", "other")
    commit(repo, {"src/a.py": "other\n"})
    git(repo, "checkout", "-q", "main")
    commit(repo, {"src/a.py": "main\n"})
    merge = subprocess.run(
        ["git", "-C", str(repo), "merge", "-q", "other"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert merge.returncode != 0  # the conflict is what this test needs
    rc, out, err = write_set(capsys, repo)
    assert (rc, out) == (2, "")
    assert err == (
        "oracle-guard: error: the index has unmerged entries ('src/a.py'): "
        "finish or abort the merge first\n"
    )
    # resolving the conflict makes the index usable again
    stage(repo, {"src/a.py": "both\n"})
    rc, out, _ = write_set(capsys, repo)
    assert rc == 0, out


def test_bare_repository_with_head_and_base(tmp_path, capsys):
    # a server has no working tree and no index: --base/--head judge commits
    _, origin, fork = pull_request(tmp_path)
    rc, out, _ = write_set(capsys, origin, "--base", fork, "--head", "feature")
    assert rc == 1
    assert out.splitlines()[0] == DENIED
    rc, out, _ = write_set(capsys, origin, "--base", "feature~1", "--head", "feature")
    assert rc == 0, out


def test_ci_gitlab_rules_come_from_the_target_branch_not_the_diff_base(tmp_path, capsys):
    # GitLab's diff base SHA is a merge-base: a branch cut before the contract existed
    # is still judged by the target branch's contract
    origin = init_repo(tmp_path / "origin.git", bare=True)
    repo = init_repo(tmp_path / "r")
    git(repo, "remote", "add", "origin", str(origin))
    commit(repo, {"seeds/a.json": "[1, 2]\n"}, message="before the contract")
    commit(
        repo,
        {
            ".oracle-guard.yaml": "version: 1\nseeds:\n"
            "  - {paths: ['seeds/*.json'], format: json-array}\n"
        },
        message="contract",
    )
    git(repo, "push", "-q", "origin", "main")
    git(repo, "checkout", "-q", "-b", "evil", "main~1")
    commit(repo, {"seeds/a.json": "[9]\n"}, message="rewrite")
    git(repo, "fetch", "-q", "origin")
    fork = rev(repo, "main~1")
    env = {"CI": "1", "CI_MERGE_REQUEST_DIFF_BASE_SHA": fork}
    rc, _, err = run_guard(capsys, repo, "check", "--only", "seed-append-only", env=env)
    assert rc == 2
    assert "CI_MERGE_REQUEST_TARGET_BRANCH_NAME is not" in err
    env["CI_MERGE_REQUEST_TARGET_BRANCH_NAME"] = "main"
    rc, out, _ = run_guard(capsys, repo, "check", "--only", "seed-append-only", env=env)
    assert rc == 1, out
    assert "seeds/a.json:1: seed-removed:" in out


def test_ci_a_tag_cannot_stand_in_for_the_target_branch(tmp_path, capsys):
    repo, _, fork = pull_request(tmp_path)
    evil = rev(repo, "HEAD~1")  # the branch's own oracle edit
    git(repo, "tag", "origin/main", evil)
    rc, out, _ = write_set(capsys, repo, env={"CI": "1", "GITHUB_BASE_REF": "main"})
    assert rc == 1, out
    assert out.splitlines()[0] == DENIED
    assert resolved(repo, env={"CI": "1", "GITHUB_BASE_REF": "main"}).base.commit == rev(
        repo, "refs/remotes/origin/main"
    )


def test_ci_contract_base_may_not_name_a_tag(tmp_path, capsys):
    repo = base_repo(tmp_path, CONTRACT + "base: v1\n")
    git(repo, "tag", "v1")
    git(repo, "checkout", "-q", "-b", "feature")
    commit(repo, {"src/a.py": "x\n"})
    rc, _, err = write_set(capsys, repo, env={"CI": "1"})
    assert rc == 2
    assert "is not a branch in this clone: it must name a branch, not a tag" in err


def test_pre_push_without_a_range_or_a_local_branch_is_an_error(tmp_path, capsys):
    repo = base_repo(tmp_path)
    env = {"PRE_COMMIT_REMOTE_BRANCH": "refs/heads/main", "PRE_COMMIT_REMOTE_NAME": "origin"}
    rc, out, err = write_set(capsys, repo, env=env)
    assert (rc, out) == (2, "")
    assert "pre-commit gave this push no range and no local branch to judge" in err
    assert "upgrade pre-commit to 2.21 or later" in err
    rc, out, err = write_set(capsys, repo, env=dict(env, PREK_HOOK_STAGE="pre-push"))
    assert (rc, out) == (2, "")
    assert "prek gave this push no range and no local branch to judge" in err
    assert "upgrade prek, or judge it" in err and "pre-commit" not in err
    env.update(PRE_COMMIT_FROM_REF="HEAD", PRE_COMMIT_TO_REF="HEAD")
    commit(repo, {"src/a.py": "x\n"})
    env["PRE_COMMIT_FROM_REF"] = rev(repo, "HEAD~1")
    assert write_set(capsys, repo, env=env)[0] == 0


FIRST_PUSH = {
    "PRE_COMMIT_REMOTE_BRANCH": "refs/heads/main",
    "PRE_COMMIT_REMOTE_NAME": "origin",
    "PRE_COMMIT_LOCAL_BRANCH": "refs/heads/main",
}
LOCKED = 'version: 1\nfixtures:\n  - lock: f.lock.json\n    root: fx\n    paths: ["fx/**"]\n'


@pytest.mark.parametrize(
    "lock, rc",
    [('{"a.json": "%s"}' % ("0" * 64), 1), (None, 0)],
    ids=["lock-mismatch-fires", "honest-history-passes"],
)
def test_a_first_push_is_judged_against_the_empty_tree_by_its_own_contract(
    tmp_path, capsys, lock, rc
):
    """pre-commit passes no range when the remote has nothing this clone knows of:
    the server judges that push against the empty tree by the pushed tip's
    contract, and so does the pre-push hook (it used to exit 2 with a fix that
    needs a remote branch)."""
    import hashlib

    repo = init_repo(tmp_path / "r")
    digest = hashlib.sha256(b"{}\n").hexdigest()
    commit(
        repo,
        {
            ".oracle-guard.yaml": LOCKED,
            "fx/a.json": "{}\n",
            "f.lock.json": lock or '{"a.json": "%s"}' % digest,
        },
    )
    got, out, err = run_guard(capsys, repo, "check", "--now", NOW, env=FIRST_PUSH)
    assert got == rc, out + err
    assert (
        "oracle-guard: note: origin has no branch this clone knows of: refs/heads/main is "
        "judged against the empty tree by its own contract, as the server judges a first "
        "push (if origin is not empty, run git fetch origin and push again)"
    ) in err
    assert ("fixture-mismatch" in out) == (rc == 1), out


@pytest.mark.parametrize(
    "files, rc",
    [({"oracle/b.json": "2\n"}, 1), ({"src/b.py": ""}, 0)],
    ids=["oracle-file-fires", "code-only-passes"],
)
def test_an_unrelated_history_is_judged_by_the_remote_default_branch(tmp_path, capsys, files, rc):
    repo = base_repo(tmp_path)
    git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    git(repo, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
    git(repo, "checkout", "-q", "--orphan", "other")
    git(repo, "rm", "-rqf", ".")
    commit(repo, files)  # judged by the remote's rules: the history brings none
    env = dict(FIRST_PUSH, PRE_COMMIT_LOCAL_BRANCH="refs/heads/other")
    got, out, err = write_set(capsys, repo, env=env)
    assert got == rc, out + err
    assert (
        "refs/heads/other shares no commit with origin: judged against the empty tree by "
        "refs/remotes/origin/HEAD" in err
    )


# -- --target: the rules from the branch the change merges into ------------------------

SEEDED = """\
version: 1
seeds:
  - {paths: ["seeds/*.json"], format: json-array}
write_set:
  allow: ["src/**"]
  deny: ["oracle/**"]
"""


def cut_before_the_contract(tmp_path):
    """main: a developer's history, then the contract adopted. The agent's branch
    starts from the commit before the contract and edits the oracle."""
    repo = init_repo(tmp_path / "r")
    commit(
        repo,
        {"oracle/a.json": "1\n", "seeds/s.json": "[1, 2]\n", "src/a.py": ""},
        message="before the contract",
    )
    before = rev(repo, "HEAD")
    commit(repo, {".oracle-guard.yaml": SEEDED}, message="adopt oracle-guard")
    commit(repo, {"seeds/s.json": "[1, 2, 3]\n"}, message="main appends a seed")
    git(repo, "checkout", "-q", "-b", "agent", before)
    commit(repo, {"oracle/a.json": "2\n"}, message="agent edits the oracle")
    return repo, before


def test_a_branch_cut_before_the_contract_is_judged_by_the_targets_rules(tmp_path, capsys):
    repo, before = cut_before_the_contract(tmp_path)
    # from the merge-base alone, the rules are the merge-base's: there are none
    rc, out, _ = run_guard(capsys, repo, "check", "--now", NOW, "--base", before, "--head", "HEAD")
    assert rc == 0 and "nothing to check" in out, out
    for args, env in (
        (["--target", "main", "--head", "HEAD"], None),
        (["--head", "HEAD"], {"ORACLE_GUARD_TARGET": "main"}),
        (
            [],
            {
                "ORACLE_GUARD_TARGET": "main",
                "PRE_COMMIT_FROM_REF": before,
                "PRE_COMMIT_TO_REF": "HEAD",
            },
        ),
    ):
        rc, out, _ = run_guard(capsys, repo, "check", "--now", NOW, *args, env=env)
        assert rc == 1, (args, env, out)
        assert DENIED in out.splitlines(), out


def test_target_near_miss_an_honest_branch_from_before_the_contract(tmp_path, capsys):
    repo, before = cut_before_the_contract(tmp_path)
    git(repo, "checkout", "-q", "-b", "honest", before)
    commit(repo, {"src/a.py": "x = 1\n"}, message="an honest change")
    rc, out, _ = run_guard(
        capsys,
        repo,
        "check",
        "--now",
        NOW,
        "--target",
        "main",
        "--head",
        "HEAD",
        "--format",
        "json",
    )
    assert rc == 0, out
    # compared with the merge-base: the seed main appended is not this branch removing it
    assert '"base_from": "--target/ORACLE_GUARD_TARGET"' in out


def test_target_that_names_nothing_is_an_error(tmp_path, capsys):
    repo, _ = cut_before_the_contract(tmp_path)
    rc, _, err = run_guard(
        capsys, repo, "check", "--now", NOW, "--target", "origin/nope", "--head", "HEAD"
    )
    assert rc == 2
    assert err == (
        "oracle-guard: error: --target/ORACLE_GUARD_TARGET 'origin/nope' does not "
        "name a commit in this repository; fetch it (git fetch origin "
        "'+refs/heads/nope:refs/remotes/origin/nope')\n"
    )


def test_target_already_holding_the_candidate_is_an_error(tmp_path, capsys):
    repo, _ = cut_before_the_contract(tmp_path)
    rc, _, err = run_guard(
        capsys, repo, "check", "--now", NOW, "--target", "main", "--head", "main~1"
    )
    assert rc == 2
    assert "already contains main~1" in err


def test_target_for_a_commit_being_made_judges_the_index_against_head(tmp_path, capsys):
    """ORACLE_GUARD_TARGET in a developer's environment: on main itself HEAD is in
    the target, and a staged change is still judged (against HEAD, by main's rules)."""
    repo, _ = cut_before_the_contract(tmp_path)
    git(repo, "checkout", "-q", "main")
    env = {"ORACLE_GUARD_TARGET": "main"}
    stage(repo, {"src/a.py": "x = 2\n"})
    rc, out, _ = run_guard(capsys, repo, "check", "--now", NOW, env=env)
    assert rc == 0, out
    stage(repo, {"oracle/a.json": "3\n"})
    rc, out, _ = run_guard(capsys, repo, "check", "--now", NOW, env=env)
    assert rc == 1, out
    assert DENIED in out.splitlines()


def test_target_for_a_commit_being_made_on_a_branch_from_before_the_contract(tmp_path, capsys):
    repo, _ = cut_before_the_contract(tmp_path)  # on 'agent', cut before the contract
    stage(repo, {"oracle/a.json": "4\n"})
    rc, out, _ = run_guard(capsys, repo, "check", "--now", NOW, "--target", "main")
    assert rc == 1, out  # main's rules, though HEAD has no contract
    assert DENIED in out.splitlines()
    rc, out, _ = run_guard(capsys, repo, "check", "--now", NOW)
    assert rc == 0 and "nothing to check" in out, out  # the near-miss: no target, no rules


def test_pre_push_an_oracle_edit_undone_later_is_judged_as_the_server_judges_it(tmp_path, capsys):
    """CI judges the merge (a red branch turns green by restoring the oracle); a
    push records every commit, so pre-push, like the server, rejects the edit."""
    repo = base_repo(tmp_path)
    fork = rev(repo, "HEAD")
    edit = commit(repo, {"oracle/a.json": "2\n"}, message="agent edit")
    commit(repo, {"oracle/a.json": "1\n"}, message="undo it")
    env = {
        "PRE_COMMIT_FROM_REF": fork,
        "PRE_COMMIT_TO_REF": "HEAD",
        "PRE_COMMIT_REMOTE_NAME": "origin",
        "PRE_COMMIT_REMOTE_BRANCH": "refs/heads/x",
    }
    rc, out, _ = write_set(capsys, repo, env=env)
    assert rc == 1, out
    assert out.splitlines()[0].startswith(
        f"oracle/a.json: oracle-edit-undone: commit {edit[:12]} changes protected"
    )
    # the near miss: a range pre-commit runs by hand (no remote) judges the net change
    del env["PRE_COMMIT_REMOTE_NAME"], env["PRE_COMMIT_REMOTE_BRANCH"]
    assert write_set(capsys, repo, env=env)[0] == 0


@pytest.mark.parametrize(
    ("env", "name"),
    [
        ({"PREK_HOOK_STAGE": "pre-commit", "PRE_COMMIT": "1"}, "prek"),
        ({"PRE_COMMIT": "1"}, "pre-commit"),  # pre-commit sets nothing of its own
        ({"PREK_HOME": "/tmp/prek", "PRE_COMMIT": "1"}, "pre-commit"),  # a user's setting
        ({"PREK_HOOK_STAGE": ""}, "pre-commit"),
        ({}, "pre-commit"),
    ],
)
def test_runner_name_is_prek_only_where_prek_ran_the_hook(env, name):
    assert runner_name(env) == name
