"""Fewer git processes: one rev-parse answers every repository fact a run asks
(git dir, common git dir, bare), folder trees are read through the cat-file
--batch already open, and a warm check starts no more than it needs."""

from __future__ import annotations

import hashlib
import os

import pytest

from oracle_guard.git.plumbing import Git, GitError
from testing.faults import calls, dying_git, logging_git, path_with
from testing.git import commit, git, init_repo, run_guard


@pytest.fixture
def logged(tmp_path, monkeypatch):
    wrapper = logging_git(tmp_path / "bin")
    monkeypatch.setenv("PATH", path_with(wrapper))
    return wrapper


def facts(directory):
    handle = Git(str(directory))
    try:
        handle.check_repository()
        return handle.git_dir(), handle.is_bare(), handle.cache.path
    finally:
        handle.close()


def test_one_rev_parse_answers_the_repository_facts(tmp_path, logged):
    repo = init_repo(tmp_path / "r")
    before = len(calls(logged))
    git_dir, bare, cache = facts(repo)
    assert (os.path.realpath(git_dir), bare) == (os.path.realpath(repo / ".git"), False)
    assert os.path.realpath(cache) == os.path.realpath(repo / ".git/oracle-guard/cache.json")
    made = calls(logged)[before:]
    assert made == ["rev-parse --git-dir --git-common-dir --is-bare-repository"]


def test_a_bare_repository_is_known_bare(tmp_path, logged):
    bare = init_repo(tmp_path / "srv.git", bare=True)
    before = len(calls(logged))
    git_dir, is_bare, cache = facts(bare)
    assert is_bare is True
    assert os.path.realpath(cache) == os.path.realpath(bare / "oracle-guard/cache.json")
    assert len(calls(logged)) == before + 1


def test_a_linked_worktree_keeps_its_cache_in_the_common_git_dir(tmp_path):
    repo = init_repo(tmp_path / "r")
    commit(repo, {"a": "a\n"})
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
    git_dir, bare, cache = facts(tmp_path / "wt")
    assert os.path.realpath(git_dir) == os.path.realpath(repo / ".git/worktrees/wt")
    assert os.path.realpath(cache) == os.path.realpath(repo / ".git/oracle-guard/cache.json")


def test_a_path_with_a_newline_is_asked_for_alone(tmp_path):
    # rev-parse ends each answer with LF: with one inside a path (absolute, asked
    # from a subfolder), which line is which is ambiguous, so each is asked alone
    repo = init_repo(tmp_path / "a\nb" / "r")
    (repo / "sub").mkdir()
    handle = Git(str(repo / "sub"))
    try:
        handle.check_repository()
        assert handle._facts_found is None  # the fallback fired
        assert os.path.realpath(handle.git_dir()) == os.path.realpath(repo / ".git")
        assert handle.is_bare() is False
        cache = handle.cache.path
        assert os.path.realpath(cache) == os.path.realpath(repo / ".git/oracle-guard/cache.json")
    finally:
        handle.close()
    near = Git(str(repo))  # the near-miss: a relative '.git' holds no LF
    near.check_repository()
    assert near._facts_found is not None


def test_outside_a_repository_is_an_error(tmp_path):
    (tmp_path / "plain").mkdir()
    with pytest.raises(GitError, match="not a git repository"):
        Git(str(tmp_path / "plain")).check_repository()


def nested(repo, depth):
    """A commit whose folder 'fx' holds a file at every level down to ``depth``,
    next to a file that sorts after the folder."""
    files = {"fx/z.txt": "z\n", "other.txt": "o\n"}
    folder = "fx"
    for level in range(depth):
        folder += f"/d{level}"
        files[f"{folder}/f.txt"] = f"{level}\n"
    commit(repo, files)
    return git(repo, "rev-parse", "HEAD").strip()


def test_a_folder_is_listed_through_the_batch_as_ls_tree_lists_it(tmp_path, logged):
    repo = init_repo(tmp_path / "r")
    head = nested(repo, 40)
    handle = Git(str(repo))
    try:
        before = len(calls(logged))
        listed = handle.tree_entries_under(head, ["fx"])
        made = calls(logged)[before:]
    finally:
        handle.close()
    assert made == ["cat-file --batch"]  # no ls-tree
    expected = []
    for record in git(repo, "ls-tree", "-r", "-z", head, "fx").split("\0"):
        if record:
            meta, path = record.split("\t", 1)
            mode, _, oid = meta.split(" ")
            expected.append((path, (mode, oid)))
    assert [(p, tuple(e)) for p, e in listed.items()] == expected  # same entries, same order


def test_a_warm_check_starts_three_git_processes(tmp_path, capsys, monkeypatch):
    data = b"fixture\n"
    repo = init_repo(tmp_path / "r")
    commit(
        repo,
        {
            ".oracle-guard.yaml": "version: 1\nfixtures:\n"
            "  - {lock: fx.lock, root: fx, paths: ['fx/**']}\n",
            "fx/a.bin": data,
            "fx.lock": f"{hashlib.sha256(data).hexdigest()}  a.bin\n",
        },
    )
    plain = os.environ["PATH"]
    for head in ([], ["--head", "HEAD"]):
        args = ["check", "--only", "fixture-lock", *head]
        monkeypatch.setenv("PATH", plain)
        assert run_guard(capsys, repo, *args)[0] == 0  # the cache filled
        wrapper = logging_git(tmp_path / f"bin{len(head)}")
        monkeypatch.setenv("PATH", path_with(wrapper))
        rc, out, _ = run_guard(capsys, repo, *args)
        assert rc == 0, out
        made = calls(wrapper)
        # rev-parse (the facts), the index (ls-files) or the head's id (rev-parse),
        # and the batch, which also answers HEAD (index) or the parent (--head):
        # no ls-tree, no cat-file commit
        assert len(made) == 3, made
        assert not any(c.startswith(("ls-tree", "cat-file commit")) for c in made), made


def test_a_root_commit_is_told_by_its_object_through_the_batch(tmp_path, logged):
    repo = init_repo(tmp_path / "r")
    root = commit(repo, {"a": "a\n"})
    child = commit(repo, {"a": "b\n"})
    before = len(calls(logged))
    handle = Git(str(repo))
    try:
        assert handle.records_a_parent(child)
        assert not handle.records_a_parent(root)
    finally:
        handle.close()
    assert calls(logged)[before:] == ["cat-file --batch"]


def peel_both_ways(repo, revs):
    handle = Git(str(repo))
    try:
        return [(handle.peeled_commit(r), handle.resolve_commit(r)) for r in revs]
    finally:
        handle.close()


def test_a_commit_is_resolved_through_the_batch_as_rev_parse_resolves_it(tmp_path, logged):
    repo = init_repo(tmp_path / "r")
    root = commit(repo, {"a": "a\n"})
    child = commit(repo, {"a": "b\n"})
    git(repo, "tag", "-a", "-m", "t", "v1", root)
    blob = git(repo, "rev-parse", f"{child}:a").strip()
    tree = git(repo, "rev-parse", f"{child}^{{tree}}").strip()
    revs = ["HEAD", f"{child}^1", f"{root}^1", "v1", blob, tree, "no-such-ref"]
    answers = peel_both_ways(repo, revs)
    assert [ours for ours, _ in answers] == [child, root, None, root, None, None, None]
    assert all(ours == theirs for ours, theirs in answers), answers
    before = len(calls(logged))
    handle = Git(str(repo))
    try:
        assert handle.peeled_commit("HEAD") == child
        assert handle.root_tree(child) == tree
    finally:
        handle.close()
    assert calls(logged)[before:] == ["cat-file --batch"]  # and the tree from its answer


@pytest.mark.parametrize("rev", ["-h", "HEAD HEAD", "HEAD\nHEAD", ""])
def test_a_name_a_batch_line_cannot_carry_is_asked_of_rev_parse(tmp_path, logged, rev):
    repo = init_repo(tmp_path / "r")
    commit(repo, {"a": "a\n"})
    before = len(calls(logged))
    assert peel_both_ways(repo, [rev]) == [(None, None)]
    assert not any(c.startswith("cat-file") for c in calls(logged)[before:])


def test_an_unborn_head_is_no_commit_through_the_batch(tmp_path):
    repo = init_repo(tmp_path / "r")
    assert peel_both_ways(repo, ["HEAD"]) == [(None, None)]


def test_a_batch_that_dies_is_an_error_not_an_unborn_head(tmp_path, monkeypatch):
    repo = init_repo(tmp_path / "r")
    commit(repo, {"a": "a\n"})
    monkeypatch.setenv("PATH", path_with(dying_git(tmp_path / "bin", after=0)))
    handle = Git(str(repo))
    try:
        with pytest.raises(GitError, match="cannot resolve HEAD"):
            handle.peeled_commit("HEAD")
    finally:
        handle.close()
