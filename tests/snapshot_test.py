"""Snapshots of commits read no more of the tree than they need: one file by
walking trees, pattern matches by listing only the folders that can hold them.
Each way must give exactly what the full listing gives."""
import subprocess

import pytest
from hypothesis import given

from oracle_guard.git.plumbing import Git, GitError
from oracle_guard.parsing.patterns import Pattern, PatternSet
from oracle_guard.snapshot import Snapshot, changes
from testing.bounds import property_settings
from testing.faults import calls, logging_git, path_with
from testing.git import commit, git, init_repo, run_guard
from tests.patterns_test import PATHS, PATTERNS, _paths, _patterns

# PATHS without the ones that are also folders of others: files that can coexist
FILES = sorted(p for p in PATHS if not any(q.startswith(p + "/") for q in PATHS))


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("tree") / "r")
    commit(repo, {path: f"{path}\n" for path in FILES})
    handle = Git(str(repo))
    head = git(repo, "rev-parse", "HEAD").strip()
    yield handle, head
    handle.close()


def fresh(tree):
    handle, head = tree
    return Snapshot.of_commit(handle, head, "HEAD")


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_selection_from_listed_folders_is_the_full_selection(tree, pattern):
    handle, head = tree
    patterns = PatternSet([pattern])
    assert fresh(tree).select(patterns) == patterns.select(handle.tree_entries(head))


def test_several_patterns_and_repeated_selections_agree(tree):
    handle, head = tree
    snapshot = fresh(tree)
    for patterns in (["seeds/*.json"], ["seeds/sub/**", "doc/*.txt"], ["a/x/**", "a/**/b"],
                     ["seeds/*.json", "/README.md"]):
        wanted = PatternSet(patterns).select(handle.tree_entries(head))
        assert snapshot.select(PatternSet(patterns)) == wanted
    assert not snapshot.listed  # all of it from folder listings


def test_an_unanchored_pattern_lists_the_whole_tree(tree):
    snapshot = fresh(tree)
    assert snapshot.select(PatternSet(["*.json"])) == [
        "seeds/a.json", "seeds/sub/a.json", "z/seeds/a.json"]
    assert snapshot.listed


@pytest.mark.parametrize("path", FILES + ["a", "a/b", "a/b/c", "nope", "a/b/c/d/e", "seeds",
                                          "x/y/z", "Seeds/a.json", "a.py/x"])
def test_a_walked_lookup_is_the_listed_entry(tree, path):
    handle, head = tree
    assert fresh(tree).entry(path) == handle.tree_entries(head).get(path)


def test_a_lookup_inside_a_listed_folder_needs_no_walk(tree):
    snapshot = fresh(tree)
    snapshot.select(PatternSet(["seeds/**"]))
    assert snapshot.entry("seeds/a.json") is not None
    assert snapshot.entry("seeds/missing.json") is None
    assert "seeds/missing.json" not in snapshot


@property_settings(200)
@given(pattern=_patterns, paths=_paths)
def test_every_match_lies_in_the_patterns_folder(pattern, paths):
    compiled = Pattern(pattern)
    folder = compiled.folder
    for path in paths:
        if compiled.matches(path) and folder is not None:
            assert path == folder or path.startswith(folder + "/"), (pattern, path, folder)


# -- malformed trees are never judged, listed or walked -------------------------------

def tree_with(repo, lines):
    return git(repo, "mktree", input="".join(lines).encode()).strip()


@pytest.fixture
def duplicated(tmp_path):
    """A commit whose folder 'oracle' lists 'a.json' twice (git fsck: duplicateEntries)."""
    repo = init_repo(tmp_path / "r")
    one = git(repo, "hash-object", "-w", "--stdin", input=b"[1]\n").strip()
    two = git(repo, "hash-object", "-w", "--stdin", input=b"[2]\n").strip()
    inner = tree_with(repo, [f"100644 blob {one}\ta.json\n", f"100644 blob {two}\ta.json\n"])
    root = tree_with(repo, [f"040000 tree {inner}\toracle\n", f"100644 blob {one}\tx\n"])
    head = git(repo, "commit-tree", root, "-m", "dup", input=b"").strip()
    handle = Git(str(repo))
    yield handle, head
    handle.close()


def test_a_duplicate_entry_is_refused_when_walked(duplicated):
    handle, head = duplicated
    with pytest.raises(GitError, match="lists 'a.json' twice"):
        Snapshot.of_commit(handle, head, "HEAD").entry("oracle/a.json")


def test_a_duplicate_entry_is_refused_when_its_folder_is_listed(duplicated):
    handle, head = duplicated
    with pytest.raises(GitError, match="lists 'oracle/a.json' twice"):
        Snapshot.of_commit(handle, head, "HEAD").select(PatternSet(["oracle/*.json"]))


def test_a_walk_beside_the_duplicate_is_fine(duplicated):
    # the near-miss: the root tree is well formed; only 'oracle' is not
    handle, head = duplicated
    assert Snapshot.of_commit(handle, head, "HEAD").entry("x") is not None


def test_a_duplicate_entry_is_a_change_diff_tree_reports(duplicated, tmp_path):
    """diff-tree pairs entries one to one, so the extra copy shows as a change and
    write-set judges the path."""
    handle, head = duplicated
    repo = handle.directory
    one = git(repo, "rev-parse", f"{head}:x").strip()
    inner = tree_with(repo, [f"100644 blob {one}\ta.json\n"])
    root = tree_with(repo, [f"040000 tree {inner}\toracle\n", f"100644 blob {one}\tx\n"])
    clean = git(repo, "commit-tree", root, "-m", "clean", input=b"").strip()
    found = changes(Snapshot.of_commit(handle, clean, "clean"),
                    Snapshot.of_commit(handle, head, "dup"))
    assert [path for path, _, _ in found] == ["oracle/a.json"]


def test_a_tree_object_that_does_not_parse_is_refused(tmp_path):
    repo = init_repo(tmp_path / "r")
    # a tree whose only entry is cut off inside its object id
    bad = subprocess.run(["git", "-C", str(repo), "hash-object", "-t", "tree", "-w",
                          "--literally", "--stdin"], input=b"100644 a\0" + b"\x01" * 7,
                         stdout=subprocess.PIPE, check=True).stdout.decode().strip()
    head = git(repo, "commit-tree", bad, "-m", "bad", input=b"").strip()
    handle = Git(str(repo))
    try:
        with pytest.raises(GitError, match=f"tree {bad} .* is malformed"):
            Snapshot.of_commit(handle, head, "HEAD").entry("a")
    finally:
        handle.close()


# -- the cost follows the change -----------------------------------------------------

def test_write_set_between_two_commits_lists_no_tree(tmp_path, capsys, monkeypatch):
    repo = init_repo(tmp_path / "r")
    commit(repo, {".oracle-guard.yaml": "version: 1\nwrite_set:\n  allow: ['src/**']\n",
                  "src/a.py": "1\n", "docs/b.md": "x\n"})
    commit(repo, {"src/a.py": "2\n"})
    wrapper = logging_git(tmp_path / "bin")
    monkeypatch.setenv("PATH", path_with(wrapper))
    rc, out, _ = run_guard(capsys, repo, "check", "--only", "write-set", "--head", "HEAD")
    assert rc == 0, out
    made = calls(wrapper)
    assert any(c.startswith("diff-tree ") for c in made), made
    assert not any(c.startswith("ls-tree") for c in made), made
