"""Judging the merge: what the environment may not change about it, grafts,
conflicts, and the git it needs."""

from __future__ import annotations

import pytest

from oracle_guard.git.plumbing import Git
from testing.git import commit, git, init_repo, run_guard
from testing.oracle import NOW

CONTRACT = """\
version: 1
seeds:
  - {paths: ["seeds/*.json"], format: json-array}
write_set:
  deny: ["oracle/**", "seeds/**"]
"""
EDIT = "oracle/a.json: write-denied: matches deny pattern 'oracle/**'"


def pull_request(tmp_path):
    """A clone as CI has it: origin/main, and HEAD on a branch whose first commit
    edits the oracle and whose second is honest."""
    origin = init_repo(tmp_path / "origin.git", bare=True)
    repo = init_repo(tmp_path / "r")
    git(repo, "remote", "add", "origin", str(origin))
    commit(
        repo,
        {
            ".oracle-guard.yaml": CONTRACT,
            "oracle/a.json": "1\n",
            "src/a.py": "",
            "seeds/s.json": "[1, 2]\n",
        },
        message="base",
    )
    git(repo, "push", "-q", "origin", "main")
    git(repo, "checkout", "-q", "-b", "feature")
    commit(repo, {"oracle/a.json": "2\n"}, message="agent edit")
    commit(repo, {"src/a.py": "x = 1\n"}, message="honest edit")
    git(repo, "branch", "-q", "honest", "main")
    git(repo, "fetch", "-q", "origin")
    return repo


def check(capsys, repo, *args, env):
    return run_guard(capsys, repo, "check", "--now", NOW, *args, env=env)


GITHUB = {"CI": "1", "GITHUB_BASE_REF": "main"}


@pytest.mark.parametrize(
    "variable,value", [("ORACLE_GUARD_TARGET", "feature"), ("ORACLE_GUARD_TARGET", "HEAD")]
)
def test_in_ci_a_target_variable_that_disagrees_with_the_platform_exits_2(
    tmp_path, capsys, variable, value
):
    repo = pull_request(tmp_path)
    rc, out, err = check(capsys, repo, env=dict(GITHUB, **{variable: value}))
    assert (rc, out) == (2, "")
    named = git(repo, "rev-parse", value).strip()
    main = git(repo, "rev-parse", "refs/remotes/origin/main").strip()
    ref = "refs/heads/feature" if value == "feature" else "HEAD"
    assert err == (
        f"oracle-guard: error: {variable}={value} ({ref} at {named[:12]}) disagrees "
        f"with the target the CI system names (refs/remotes/origin/main at "
        f"{main[:12]}): in CI the platform's target decides; pass --target on the "
        "command line to judge against another branch\n"
    )


def test_in_ci_a_target_variable_that_agrees_is_accepted(tmp_path, capsys):
    repo = pull_request(tmp_path)
    rc, out, _ = check(capsys, repo, env=dict(GITHUB, ORACLE_GUARD_TARGET="origin/main"))
    assert rc == 1 and out.startswith(EDIT), out


@pytest.mark.parametrize(
    "from_ref,to_ref", [("HEAD~1", "HEAD"), ("main", "HEAD~1"), ("HEAD", "HEAD")]
)
def test_in_ci_a_pre_commit_range_that_disagrees_exits_2(tmp_path, capsys, from_ref, to_ref):
    # HEAD~1..HEAD would hide the oracle edit; so would judging HEAD~1
    repo = pull_request(tmp_path)
    if from_ref == "HEAD":
        git(repo, "checkout", "-q", "honest")
        commit(repo, {"src/b.py": "y\n"})
    env = dict(GITHUB, PRE_COMMIT_FROM_REF=from_ref, PRE_COMMIT_TO_REF=to_ref)
    rc, out, err = check(capsys, repo, env=env)
    assert (rc, out) == (2, "")
    assert err.startswith(
        f"oracle-guard: error: the pre-commit range {from_ref}..{to_ref} "
        "disagrees with what the CI system names"
    ), err
    assert "run pre-commit on HEAD with --from-ref" in err
    # prek names itself in a hook's environment: the message names it
    rc, out, err = check(capsys, repo, env=dict(env, PREK_HOOK_STAGE="pre-push"))
    assert (rc, out) == (2, "")
    assert err.startswith(f"oracle-guard: error: the prek range {from_ref}..{to_ref} "), err
    assert "run prek on HEAD with --from-ref" in err and "pre-commit" not in err


@pytest.mark.parametrize("from_ref", ["refs/remotes/origin/main", "main"])
def test_in_ci_a_pre_commit_range_from_the_target_or_its_merge_base_agrees(
    tmp_path, capsys, from_ref
):
    repo = pull_request(tmp_path)
    env = dict(GITHUB, PRE_COMMIT_FROM_REF=from_ref, PRE_COMMIT_TO_REF="HEAD")
    rc, out, _ = check(capsys, repo, env=env)
    assert rc == 1 and out.startswith(EDIT), out


def test_in_ci_flags_the_job_wrote_still_count(tmp_path, capsys):
    repo = pull_request(tmp_path)
    git(repo, "branch", "-q", "release", "HEAD~1")  # already holds the oracle edit
    rc, out, _ = check(
        capsys,
        repo,
        "--target",
        "release",
        "--only",
        "write-set",
        env=dict(GITHUB, ORACLE_GUARD_TARGET="nope"),
    )
    assert rc == 0, out
    rc, out, _ = check(capsys, repo, "--base", "HEAD~1", "--only", "write-set", env=GITHUB)
    assert rc == 0, out


def test_base_and_target_together_exit_2(tmp_path, capsys):
    repo = pull_request(tmp_path)
    rc, _, err = check(capsys, repo, "--base", "HEAD~1", "--target", "origin/main", env={})
    assert rc == 2
    assert err.startswith(
        "oracle-guard: error: --base and --target both name what the change is compared with"
    )


def graft_line(repo):
    """Main moves on by an honest commit; a graft gives that commit the oracle
    edit as its parent (no cycle: the edit sits on main's old tip). Main would
    seem to hold the edit already, and the merge would bring only the honest one."""
    git(repo, "checkout", "-q", "main")
    commit(repo, {"src/main.py": "m\n"}, message="main moves on")
    git(repo, "push", "-q", "origin", "main")
    git(repo, "fetch", "-q", "origin")
    git(repo, "checkout", "-q", "feature")
    main, edit = git(repo, "rev-parse", "refs/remotes/origin/main", "HEAD~1").split()
    return f"{main} {edit}\n", edit


@pytest.mark.parametrize("how", ["info/grafts", "GIT_GRAFT_FILE"])
def test_grafts_do_not_change_what_is_judged(tmp_path, capsys, monkeypatch, how):
    repo = pull_request(tmp_path)
    line, edit = graft_line(repo)
    graft = repo / ".git" / "info" / "grafts" if how == "info/grafts" else tmp_path / "grafts"
    graft.parent.mkdir(exist_ok=True)
    graft.write_text(line)
    if how == "GIT_GRAFT_FILE":
        monkeypatch.setenv("GIT_GRAFT_FILE", str(graft))
    # git itself now takes the oracle edit for a commit main already has
    assert git(repo, "merge-base", "refs/remotes/origin/main", "HEAD").strip() == edit
    rc, out, _ = check(
        capsys, repo, "--target", "origin/main", "--head", "HEAD", "--only", "write-set", env={}
    )
    assert rc == 1 and out.startswith(EDIT), out


def test_grafts_near_miss_an_honest_branch_passes(tmp_path, capsys):
    repo = pull_request(tmp_path)
    git(repo, "checkout", "-q", "honest")
    commit(repo, {"src/b.py": "y\n"})
    (repo / ".git" / "info" / "grafts").write_text("")
    rc, out, _ = check(capsys, repo, "--target", "origin/main", "--head", "HEAD", env={})
    assert rc == 0, out


def conflicting(tmp_path, capsys, on_main, on_branch):
    """Main gains ``on_main``; a branch cut before that commits ``on_branch``:
    the result of judging the branch's merge into origin/main."""
    repo = pull_request(tmp_path)
    git(repo, "checkout", "-q", "honest")
    commit(repo, on_main, message="main moves on")
    git(repo, "push", "-q", "origin", "honest:main")
    git(repo, "fetch", "-q", "origin")
    git(repo, "checkout", "-q", "-b", "agent", "main")
    commit(repo, on_branch, message="the branch")
    return check(capsys, repo, "--target", "origin/main", "--head", "HEAD", env={})


def test_a_merge_that_conflicts_exits_1_naming_the_paths(tmp_path, capsys):
    rc, out, _ = conflicting(
        tmp_path, capsys, {"seeds/s.json": "[1, 2, 3]\n"}, {"seeds/s.json": "[1, 2, 4]\n"}
    )
    assert rc == 1
    assert out.splitlines()[0] == (
        "seeds/s.json: merge-conflict: the merge of HEAD into refs/remotes/origin/main "
        "conflicts here; it is judged once it merges cleanly"
    )
    assert out.splitlines()[1:] == [  # no check that could not run reports a pass
        "write-set: failed (1 error)",
        "hint: rebase the branch onto the target (or merge the target into it) and resolve "
        "the conflict, then push again. See 'oracle-guard explain merge-conflict'.",
    ]


def test_the_merge_is_judged_though_no_merge_commit_is_made(tmp_path, capsys):
    # near-miss of the conflict: the same appends on different files merge cleanly
    repo = pull_request(tmp_path)
    git(repo, "checkout", "-q", "-b", "agent", "main")
    commit(repo, {"src/c.py": "z\n"})
    before = git(repo, "for-each-ref").strip()
    rc, out, _ = check(capsys, repo, "--target", "origin/main", "--head", "HEAD", env={})
    assert rc == 0, out
    assert git(repo, "for-each-ref").strip() == before  # no ref moved, no commit made
    assert git(repo, "status", "--porcelain").strip() == ""


def test_merge_judging_needs_git_2_38(tmp_path, capsys, monkeypatch):
    repo = pull_request(tmp_path)
    monkeypatch.setattr(Git, "version", lambda self: (2, 37, 9))
    rc, out, err = check(capsys, repo, "--target", "origin/main", "--head", "HEAD", env={})
    assert (rc, out) == (2, "")
    assert err == (
        "oracle-guard: error: judging a merge needs git 2.38 or later (git "
        "merge-tree --write-tree); this git is 2.37.9\n"
    )
    # near-miss: a commit judged without a target needs no merge
    rc, out, _ = check(capsys, repo, "--head", "HEAD", env={})
    assert rc == 0, out


def test_this_git_reports_its_version(tmp_path):
    assert Git(str(init_repo(tmp_path / "r"))).version() >= (2, 38)


def test_a_merge_being_concluded_is_compared_with_gits_merge(tmp_path, capsys):
    """While a merge is concluded, what it brings from main is not the committer's
    change; what the committer changes in it (a seed file kept from HEAD) is."""
    repo = pull_request(tmp_path)
    git(repo, "checkout", "-q", "-b", "owner", "main")
    commit(repo, {"seeds/s.json": "[1, 2, 3]\n"}, message="owner appends")
    git(repo, "checkout", "-q", "feature")
    git(repo, "merge", "-q", "--no-ff", "--no-commit", "owner")
    rc, out, _ = check(capsys, repo, "--only", "seed-append-only,write-set", env={})
    assert rc == 0, out  # main's append is not the merge's doing
    git(repo, "checkout", "HEAD", "--", "seeds/s.json")  # keep the branch's old copy
    rc, out, _ = check(capsys, repo, "--only", "seed-append-only", env={})
    assert rc == 1 and out.startswith("seeds/s.json: seed-removed: element [2] 3 is gone"), out


@pytest.mark.parametrize("content", ["junk\n", "0" * 40 + "\n"])
def test_a_merge_head_that_names_no_commit_exits_2(tmp_path, capsys, content):
    repo = pull_request(tmp_path)
    (repo / ".git" / "MERGE_HEAD").write_text(content)
    rc, out, err = check(capsys, repo, env={})
    assert (rc, out) == (2, "")
    assert err == "oracle-guard: error: MERGE_HEAD names an object that is not a commit\n"


def test_a_push_build_of_the_target_branch_judges_its_last_commit(tmp_path, capsys):
    """CI with no platform target (a push build): --head alone is the job naming
    the commit, judged against its first parent; without it, exit 2."""
    repo = pull_request(tmp_path)
    env = {"CI": "1"}
    rc, out, _ = check(capsys, repo, "--head", "HEAD~1", "--only", "write-set", env=env)
    assert rc == 1 and out.startswith(EDIT), out
    rc, out, _ = check(capsys, repo, "--head", "HEAD", "--only", "write-set", env=env)
    assert rc == 0, out
    rc, out, err = check(capsys, repo, env=env)
    assert (rc, out) == (2, "") and err.startswith(
        "oracle-guard: error: CI is set but no base is named"
    ), err


def test_a_file_folder_conflict_names_the_path_not_gits_aside_name(tmp_path, capsys):
    rc, out, _ = conflicting(
        tmp_path, capsys, {"src/fd": "a file\n"}, {"src/fd/x.py": "a folder\n"}
    )
    assert rc == 1
    assert out.splitlines()[0].startswith("src/fd: merge-conflict: "), out
