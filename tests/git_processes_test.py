"""Fewer git processes: one rev-parse answers every repository fact a run asks
(git dir, common git dir, bare), folder trees are read through the cat-file
--batch already open, and a warm check starts no more than it needs."""

from __future__ import annotations

import hashlib
import os

import pytest

from oracle_guard.errors import GitError
from oracle_guard.git.plumbing import Git
from testing.faults import calls, dying_git, logging_git, path_with
from testing.git import commit, git, init_repo, run_guard

NOW = "2026-01-01T00:00:00Z"


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


# -- pre-receive --------------------------------------------------------------
PUSH_CONTRACT = """\
version: 1
write_set:
  allow: ["src/**"]
"""


def pushed_server(tmp_path, monkeypatch, commits=3):
    """A bare server whose main has a contract, and `commits` honest commits
    after it in a clone: returns (server, old tip, new tip)."""
    work = init_repo(tmp_path / "work")
    old = commit(work, {".oracle-guard.yaml": PUSH_CONTRACT, "src/app.py": "v0\n"}, "oracle")
    bare = tmp_path / "srv.git"
    git(work, "clone", "-q", "--bare", str(work), str(bare))
    new = old
    for n in range(commits):
        new = commit(work, {f"src/app{n}.py": f"v{n}\n"}, f"honest {n}")
    git(work, "push", "-q", str(bare), "HEAD:refs/heads/candidate")  # the objects
    monkeypatch.chdir(bare)
    return bare, old, new


def pre_receive(line):
    import io

    from oracle_guard.commands import pre_receive as command

    err = io.StringIO()
    rc = command.receive(io.StringIO(line), err, {"ORACLE_GUARD_NOW": "2026-09-25"})
    return rc, err.getvalue()


def test_a_push_to_the_default_branch_starts_six_git_processes(tmp_path, monkeypatch, logged):
    # one rev-parse for the layout, every tip resolved in the batch, and no
    # merge-base: the default branch's own old tip is its base
    _, old, new = pushed_server(tmp_path, monkeypatch)
    before = len(calls(logged))
    assert pre_receive(f"{old} {new} refs/heads/main\n") == (
        0,
        "oracle-guard: push accepted: 1 judged ref passed\n",
    )
    made = [" ".join(call.split()[:2]) for call in calls(logged)[before:]]
    assert sorted(made) == [  # rev-list and the diff-trees run side by side
        "cat-file --batch",
        "diff-tree --stdin",
        "diff-tree -r",
        "rev-list --parents",
        "rev-parse --show-object-format",
        "symbolic-ref -q",
    ]


def test_a_new_ref_still_asks_its_merge_base(tmp_path, monkeypatch, logged):
    # the near-miss: a new ref's base is its merge-base with the default branch
    _, _, new = pushed_server(tmp_path, monkeypatch)
    before = len(calls(logged))
    assert pre_receive(f"{'0' * 40} {new} refs/heads/feature\n")[0] == 0
    made = [" ".join(call.split()[:2]) for call in calls(logged)[before:]]
    assert "merge-base --all" in made
    assert not any(call.startswith("rev-parse --verify") for call in made)


REVISIONS = [
    "HEAD",
    "HEAD~1",
    "main",
    "refs/heads/main",
    "v1",  # an annotated tag: peeled to its commit
    "HEAD^{tree}",  # a tree: no commit
    "HEAD:src/app.py",  # a blob
    "HEAD:src",
    "nope",
    "-n",  # never an option
    "--all",
    "--end-of-options",
    "HEAD ",  # a space is part of the name
    " HEAD",
    "HEAD\r",  # cat-file would strip the CR: asked of rev-parse
    "HEAD\n",
    "ma in",
    "",
]


def test_resolving_in_the_batch_answers_as_rev_parse_does(tmp_path, logged):
    repo = init_repo(tmp_path / "r")
    first = commit(repo, {"src/app.py": "v0\n"})
    git(repo, "tag", "-a", "-m", "one", "v1")
    commit(repo, {"src/app.py": "v1\n"})
    wanted = REVISIONS + [first, first[:10], "0" * 40, first.upper()]
    by_rev_parse = Git(str(repo))
    by_batch = Git(str(repo))
    by_batch.resolve_in_batch = True
    try:
        expected = [by_rev_parse.resolve_commit(rev) for rev in wanted]
        before = len(calls(logged))
        assert [by_batch.resolve_commit(rev) for rev in wanted] == expected
        made = calls(logged)[before:]
        # one batch for all; only the names that end in CR or hold LF (or are empty) ask rev-parse
        assert made.count("cat-file --batch") == 1
        assert len([c for c in made if c.startswith("rev-parse --verify")]) == 3
        # the batch resolved a commit and read it: its tree is known, no second read
        assert by_batch.root_tree(first) == git(repo, "rev-parse", f"{first}^{{tree}}").strip()
    finally:
        by_rev_parse.close()
        by_batch.close()
    assert expected[0] is not None and expected[4] == first and expected[5] is None


def test_a_batch_that_dies_while_resolving_is_an_error(tmp_path, monkeypatch):
    repo = init_repo(tmp_path / "r")
    commit(repo, {"a": "a\n"})
    wrapper = dying_git(tmp_path / "bin", 0, "kill", deaths=1)
    monkeypatch.setenv("PATH", path_with(wrapper))
    handle = Git(str(repo))
    handle.resolve_in_batch = True
    try:
        with pytest.raises(GitError, match="cannot resolve HEAD"):
            handle.resolve_commit("HEAD")
    finally:
        handle.close()


def test_one_rev_parse_answers_the_layout_and_a_newline_asks_alone(tmp_path, logged):
    repo = init_repo(tmp_path / "r")
    commit(repo, {"a": "a\n"})
    handle = Git(str(repo))
    before = len(calls(logged))
    try:
        assert handle.object_id_length() == 40
        assert os.path.realpath(handle.objects_directory()) == os.path.realpath(
            repo / ".git/objects"
        )
        assert os.path.realpath(handle.cache.path) == os.path.realpath(
            repo / ".git/oracle-guard/cache.json"
        )
    finally:
        handle.close()
    assert calls(logged)[before:] == [
        "rev-parse --show-object-format --git-common-dir --git-path objects"
    ]


def test_a_quarantine_path_with_a_newline_asks_each_alone(tmp_path, monkeypatch, logged):
    # a quarantine's GIT_OBJECT_DIRECTORY is printed as set: absolute, here with
    # an LF, so which line is which is ambiguous and each fact is asked alone
    odd = init_repo(tmp_path / "a\nb" / "r")
    commit(odd, {"a": "a\n"})
    monkeypatch.setenv("GIT_OBJECT_DIRECTORY", str(odd / ".git/objects"))
    handle = Git(str(odd))
    before = len(calls(logged))
    try:
        assert handle.objects_directory() == str(odd / ".git/objects")
        assert os.path.realpath(handle.cache.path) == os.path.realpath(
            odd / ".git/oracle-guard/cache.json"
        )
        assert handle.object_id_length() == 40
    finally:
        handle.close()
    # the fallback fired (the log splits a call at each LF it holds)
    assert sum("rev-parse" in call for call in calls(logged)[before:]) == 4


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


def test_a_small_change_asked_twice_runs_one_diff_tree(tmp_path, logged):
    repo = init_repo(tmp_path / "r")
    old = commit(repo, {"a": "a\n", "d/b": "b\n"})
    new = commit(repo, {"a": "A\n", "d/c": "c\n"})
    handle = Git(str(repo))
    try:
        before = len(calls(logged))
        paths = handle.diff_paths(old, new)
        changes = handle.diff_trees(old, new)
        made = calls(logged)[before:]
    finally:
        handle.close()
    assert [c.split()[0] for c in made] == ["diff-tree"]
    fresh = Git(str(repo))
    try:
        assert changes == fresh.diff_trees(old, new)  # as its own diff-tree reads it
    finally:
        fresh.close()
    assert paths == ([b"a", b"d/c"], [])


def test_a_large_change_is_not_kept_and_is_asked_again(tmp_path, logged):
    from oracle_guard.git import trees

    repo = init_repo(tmp_path / "r")
    old = commit(repo, {"keep": "k\n"})
    # each record is about 100 bytes: this output is over the kept size
    count = trees.KEPT_DIFF_BYTES // 90
    new = commit(repo, {f"f{i:05d}": f"{i}\n" for i in range(count)})
    handle = Git(str(repo))
    try:
        before = len(calls(logged))
        paths, _ = handle.diff_paths(old, new)
        changes = handle.diff_trees(old, new)
        made = calls(logged)[before:]
    finally:
        handle.close()
    assert [c.split()[0] for c in made] == ["diff-tree", "diff-tree"]
    assert [p.encode() for p, _, _ in changes] == paths and len(paths) == count


def test_a_range_judges_a_commit_with_no_process_of_its_own_but_its_diff(tmp_path, capsys, logged):
    repo = init_repo(tmp_path / "r")
    commit(repo, {".oracle-guard.yaml": "version: 1\nwrite_set:\n  allow: ['src/**']\n"})
    for i in range(3):
        commit(repo, {f"src/m{i}.py": f"x = {i}\n"})
    before = len(calls(logged))
    code, out, _ = run_guard(capsys, repo, "check", "--range", "HEAD~3..HEAD", "--now", NOW)
    made = [c.split()[0] for c in calls(logged)[before:]]
    assert code == 0, out
    # per commit one diff-tree: no rev-parse, rev-list or merge-base of its own
    assert made.count("diff-tree") == 3
    assert made.count("merge-base") == 0
    assert made.count("rev-list") == 1  # the range's own listing
