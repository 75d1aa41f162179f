"""Snapshots of commits read no more of the tree than they need: one file by
walking trees, pattern matches by listing only the folders that can hold them.
Each way must give exactly what the full listing gives."""

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given

from oracle_guard import clock
from oracle_guard.checks.registry import CHECKS, HOOKS
from oracle_guard.contract import choose
from oracle_guard.errors import GitError
from oracle_guard.findings import Finding
from oracle_guard.git.objects import BlobTooLarge
from oracle_guard.git.plumbing import Git
from oracle_guard.judge import judge
from oracle_guard.parsing.patterns import Pattern, PatternSet
from oracle_guard.snapshot import MemorySnapshot, Overlay, Snapshot, changes
from testing import oracle, samples
from testing.bounds import property_settings
from testing.faults import calls, logging_git, path_with
from testing.git import clean_environment, commit, git, init_repo, run_guard
from testing.trees import MemoryRepo, content, executable, gitlink, link, memory
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
    for patterns in (
        ["seeds/*.json"],
        ["seeds/sub/**", "doc/*.txt"],
        ["a/x/**", "a/**/b"],
        ["seeds/*.json", "/README.md"],
    ):
        wanted = PatternSet(patterns).select(handle.tree_entries(head))
        assert snapshot.select(PatternSet(patterns)) == wanted
    assert not snapshot.listed  # all of it from folder listings


def test_an_unanchored_pattern_lists_the_whole_tree(tree):
    snapshot = fresh(tree)
    assert snapshot.select(PatternSet(["*.json"])) == [
        "seeds/a.json",
        "seeds/sub/a.json",
        "z/seeds/a.json",
    ]
    assert snapshot.listed


@pytest.mark.parametrize(
    "path",
    FILES + ["a", "a/b", "a/b/c", "nope", "a/b/c/d/e", "seeds", "x/y/z", "Seeds/a.json", "a.py/x"],
)
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
    found = changes(
        Snapshot.of_commit(handle, clean, "clean"), Snapshot.of_commit(handle, head, "dup")
    )
    assert [path for path, _, _ in found] == ["oracle/a.json"]


def test_a_tree_object_that_does_not_parse_is_refused(tmp_path):
    repo = init_repo(tmp_path / "r")
    # a tree whose only entry is cut off inside its object id
    bad = (
        subprocess.run(
            ["git", "-C", str(repo), "hash-object", "-t", "tree", "-w", "--literally", "--stdin"],
            input=b"100644 a\0" + b"\x01" * 7,
            stdout=subprocess.PIPE,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
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
    commit(
        repo,
        {
            ".oracle-guard.yaml": "version: 1\nwrite_set:\n  allow: ['src/**']\n",
            "src/a.py": "1\n",
            "docs/b.md": "x\n",
        },
    )
    commit(repo, {"src/a.py": "2\n"})
    wrapper = logging_git(tmp_path / "bin")
    monkeypatch.setenv("PATH", path_with(wrapper))
    rc, out, _ = run_guard(capsys, repo, "check", "--only", "write-set", "--head", "HEAD")
    assert rc == 0, out
    made = calls(wrapper)
    assert any(c.startswith("diff-tree ") for c in made), made
    assert not any(c.startswith("ls-tree") for c in made), made


# -- every kind of snapshot answers alike ---------------------------------------------
# The git snapshot (a commit, the index), the overlay and the memory snapshot of one
# tree agree on every question the checks ask, and the checks find the same on each.

SUBMODULE = "5" * 40  # the commit a gitlink records; git need not have it
LOCK = "oracle/fixtures.lock.json"
ORACLE_CONTRACT = """\
version: 1
fixtures:
  - {lock: oracle/fixtures.lock.json, root: oracle/inputs, paths: ["oracle/inputs/**"]}
seeds:
  - {paths: ["seeds/*.json"], format: json-array}
  - {paths: ["oracle/corpus.jsonl"], format: jsonl}
freeze:
  - {paths: ["oracle/flake_budget.yaml"], schema: flake-budget}
budget:
  max_frozen: 1
  known_ids: ["seeds/*.json"]
write_set:
  allow: ["src/**", "seeds/**"]
  deny: ["oracle/**"]
"""
BUDGET = (
    'max_frozen: 1\nfrozen:\n  - id: a\n    owner: team\n    expires: "2026-10-01"\n'
    "    reason: flaky\n"
)


def _lock(files):
    return "".join(f"{hashlib.sha256(d).hexdigest()}  {p}\n" for p, d in sorted(files.items()))


_INPUTS = {"a.txt": b"alpha\n", "b/c.txt": b"gamma\n"}
ORACLE = {
    ".oracle-guard.yaml": ORACLE_CONTRACT,
    LOCK: _lock(_INPUTS),
    **{f"oracle/inputs/{p}": d for p, d in _INPUTS.items()},
    "seeds/a.json": "[1, 2]\n",
    "oracle/corpus.jsonl": b'{"id": 1}\n',
    "oracle/flake_budget.yaml": BUDGET,
    "src/app.py": "print(1)\n",
}
CATALOGUE = {
    "empty": {},
    "regular": {"a.txt": b"alpha\n", "b/c.txt": b"gamma\n", "README.md": "# r\n"},
    "executable": {"bin/run": executable(b"#!/bin/sh\n"), "a.txt": b"alpha\n"},
    "symlink": {
        "a.txt": b"alpha\n",
        "link": link("a.txt"),
        "dir/up": link("../a.txt"),
        "dangling": link("nowhere/at/all"),
    },
    "gitlink": {"vendor/sub": gitlink(SUBMODULE), "x": b""},
    "nested": {
        "a/b/c/d/e.txt": b"deep\n",
        "a/b/x": b"",
        "a.b": b"dot",
        "a/b.c/d": b"1",
        "z/y/x/w/v/u": b"far",
    },
    "odd names": {
        "caf\udce9.txt": b"latin-1 name\n",
        "new\nline": b"n",
        "tab\there": b"t",
        "sp ace": b"s",
        "-dash": b"d",
        "\u00e9/\u00fc.txt": b"u",
        "back\\slash": b"b",
        "*star": b"*",
        "[x]": b"[",
        "trail ": b"t",
        "\udcff\udcfe": b"raw",
    },
    "sizes": {
        "empty": b"",
        "large.bin": bytes(range(256)) * 5000,
        "nul": b"\0\0\0",
        "crlf.txt": b"a\r\nb\r\n",
    },
    "oracle": ORACLE,
    "oracle edited": dict(
        ORACLE,
        **{
            "oracle/inputs/a.txt": b"alpha, rewritten\n",
            "oracle/inputs/new.txt": b"new\n",
            "oracle/inputs/link": link("a.txt"),
            "seeds/a.json": "[2, 1]\n",
            "seeds/b.json": "[1]\n",
            "docs/guide.md": "outside\n",
            "src/app.py": "print(2)\n",
            "oracle/flake_budget.yaml": BUDGET.replace("2026-10-01", "2020-01-01"),
        },
    ),
    "oracle kinds": dict(
        ORACLE,
        **{
            "oracle/inputs/a.txt": executable(b"alpha\n"),
            "seeds/c.json": link("a.json"),
            "oracle/inputs/sub": gitlink(SUBMODULE),
        },
    ),
    # every check's sample (the registry's), and every sample's change
    "samples": samples.sample_tree(),
    "samples changed": samples.changed_tree(samples.sample_tree(), samples.sample_change()),
}
PATTERNS = [
    ["**"],
    ["*.txt"],
    ["a/**"],
    ["b/*.txt"],
    ["/a.txt"],
    ["vendor/**"],
    ["*"],
    ["oracle/inputs/**"],
    ["seeds/*.json", "/README.md"],
    ["a/**/d"],
    ["*star"],
]


def _mode_and_data(value):
    return value if isinstance(value, tuple) else ("100644", content(value))


def _stage_tree(repo, index_file, files):
    """Write ``files`` into an index of their own with git's plumbing (no working
    tree: any name and mode), and commit that tree; the commit id."""
    env = dict(os.environ, GIT_INDEX_FILE=str(index_file))
    records = b""
    for path, value in files.items():
        mode, data = _mode_and_data(value)
        oid = (
            data.decode()
            if mode == "160000"
            else git(repo, "hash-object", "-w", "--stdin", input=data).strip()
        )
        records += f"{mode} {oid}\t".encode() + path.encode("utf-8", "surrogateescape") + b"\0"
    subprocess.run(
        ["git", "-C", str(repo), "update-index", "-z", "--index-info"],
        input=records,
        env=env,
        check=True,
    )
    tree_id = (
        subprocess.run(
            ["git", "-C", str(repo), "write-tree"], env=env, check=True, stdout=subprocess.PIPE
        )
        .stdout.decode()
        .strip()
    )
    return git(repo, "commit-tree", tree_id, "-m", "tree", input=b"").strip()


@pytest.fixture(scope="module")
def catalogue(tmp_path_factory):
    """Each tree of CATALOGUE as a commit of one repository, and as an index of its own."""
    with clean_environment():
        repo = init_repo(tmp_path_factory.mktemp("catalogue") / "r")
        indexes = {name: repo / ".git" / f"index-{n}" for n, name in enumerate(CATALOGUE)}
        commits = {
            name: _stage_tree(repo, indexes[name], files) for name, files in CATALOGUE.items()
        }
        handle = Git(str(repo), use_cache=False)
        staged = {}
        for name in CATALOGUE:
            with pytest.MonkeyPatch.context() as mp:
                mp.setenv("GIT_INDEX_FILE", str(indexes[name]))
                staged[name] = Snapshot.of_index(handle)
        yield handle, commits, staged
    handle.close()


def kinds(catalogue, name, label="the tree"):
    """The snapshots of one tree that must agree on everything: a commit, the index,
    an overlay that edits nothing, and the tree in memory."""
    handle, commits, staged = catalogue
    committed = Snapshot.of_commit(handle, commits[name], label)
    index = staged[name]
    index.label = label
    return {
        "commit": committed,
        "index": index,
        "overlay": Overlay(Snapshot.of_commit(handle, commits[name], label), {}, label),
        "memory": memory(CATALOGUE[name], label),
    }


def answers(snapshot, name):
    """What a check can ask of a snapshot of tree ``name``, as plain data."""
    files = CATALOGUE[name]
    paths = sorted(files)
    blobs = [p for p in paths if _mode_and_data(files[p])[0] != "160000"]
    asked = paths + ["nope", "a/b", "b", "a/b/c", "oracle", "vendor/sub/x", "link/x"]
    found = {
        "entries": snapshot.entries,
        "entry": {p: snapshot.entry(p) for p in asked},
        "contains": {p: p in snapshot for p in asked},
        "select": [snapshot.select(PatternSet(ps)) for ps in PATTERNS],
        "read": {p: snapshot.read(p) for p in blobs},
        "read within": {p: snapshot.read(p, len(snapshot.read(p))) for p in blobs},
        "sha256_of": snapshot.sha256_of(blobs),
        "label": snapshot.label,
        "cache": snapshot.cache.get("sha256", "0" * 40),
    }
    for p in blobs:
        size = len(snapshot.read(p))
        if size:
            with pytest.raises(BlobTooLarge):
                snapshot.read(p, size - 1)
    for p in paths:
        if p not in blobs:
            with pytest.raises(GitError):
                snapshot.read(p)
    with pytest.raises(KeyError):
        snapshot.read("nope")
    with pytest.raises(KeyError):
        snapshot.sha256_of(["nope"])
    return found


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_every_kind_of_snapshot_answers_alike(catalogue, name):
    found = {kind: answers(snapshot, name) for kind, snapshot in kinds(catalogue, name).items()}
    for kind in ("index", "overlay", "memory"):
        assert found[kind] == found["commit"], kind


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_same_files_holds_between_every_kind(catalogue, name):
    snapshots = kinds(catalogue, name)
    other = "regular" if name != "regular" else "nested"
    different = kinds(catalogue, other)
    for one in snapshots.values():
        for two in snapshots.values():
            assert one.same_files(two)
        for two in different.values():
            assert not one.same_files(two)


@pytest.mark.parametrize("name", sorted(n for n in CATALOGUE if n != "empty"))
def test_an_overlay_of_edited_files_reads_its_own_bytes(catalogue, name):
    """An overlay's files are no git objects (no git ids), but every path, mode, byte and
    digest is the tree's: the base holds other bytes and a file the overlay removes."""
    handle, commits, _ = catalogue
    files = CATALOGUE[name]
    regular = {
        p: _mode_and_data(v)[1]
        for p, v in files.items()
        if _mode_and_data(v)[0] in ("100644", "100755")
    }
    other = dict(
        files,
        **{p: (_mode_and_data(files[p])[0], b"other " + d) for p, d in regular.items()},
        **{"zz-extra": b"gone"},
    )
    base_commit = _stage_tree(handle.directory, Path(handle.directory) / ".git" / "index-x", other)
    base = Snapshot.of_commit(handle, base_commit, "the tree")
    overlay = Overlay(base, dict(regular, **{"zz-extra": None}), "the tree")
    want = memory(files, "the tree")
    assert {p: e.mode for p, e in overlay.entries.items()} == {
        p: e.mode for p, e in want.entries.items()
    }
    got, expected = answers(overlay, name), answers(want, name)
    for key in ("select", "read", "read within", "sha256_of", "contains", "label"):
        assert got[key] == expected[key], key
    (Path(handle.directory) / ".git" / "index-x").unlink()


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_a_memory_snapshot_keeps_its_commit_id(name):
    assert memory(CATALOGUE[name], "x", commit="c" * 40).commit == "c" * 40
    assert memory(CATALOGUE[name], "x").commit is None


def test_a_memory_tree_cannot_hold_a_file_and_a_folder_of_one_name():
    with pytest.raises(ValueError, match="which is a file"):
        memory({"a": b"", "a/b": b""})
    with pytest.raises(ValueError, match="mode 040000"):
        MemorySnapshot({"a": ("040000", b"")})


PAIRS = [
    (base, candidate)
    for base in CATALOGUE
    for candidate in CATALOGUE
    if base != candidate and ("oracle" in base or "oracle" in candidate)
]


SAMPLES = [("samples", "samples changed"), ("samples changed", "samples")]


@pytest.mark.parametrize("base, candidate", PAIRS + [("oracle", "oracle")] + SAMPLES)
def test_changes_are_the_same_from_git_and_from_memory(catalogue, base, candidate):
    handle, commits, staged = catalogue
    from_diff_tree = changes(
        Snapshot.of_commit(handle, commits[base], "base"),
        Snapshot.of_commit(handle, commits[candidate], "candidate"),
    )
    assert changes(memory(CATALOGUE[base]), memory(CATALOGUE[candidate])) == from_diff_tree
    assert (
        changes(Snapshot.of_commit(handle, commits[base], "base"), staged[candidate])
        == from_diff_tree
    )


def verdicts(base, candidate):
    """What every check says of the change, as plain data."""
    contract = choose(base, candidate)
    return [
        (r.hook, r.status, r.note, sorted(r.findings, key=Finding.sort_key))
        for r in judge(contract, base, candidate, NOW)
    ]


NOW = clock.now_from(oracle.NOW, {})  # the suite's clock, as the checks take it


@pytest.mark.parametrize("base, candidate", PAIRS + [("oracle", "oracle")] + SAMPLES)
def test_every_check_finds_the_same_on_memory_and_git_snapshots(catalogue, base, candidate):
    handle, commits, staged = catalogue
    on_git = verdicts(
        Snapshot.of_commit(handle, commits[base], "HEAD"),
        Snapshot.of_commit(handle, commits[candidate], "the candidate"),
    )
    on_memory = verdicts(
        memory(CATALOGUE[base], "HEAD"), memory(CATALOGUE[candidate], "the candidate")
    )
    assert on_memory == on_git
    staged[candidate].label = "the candidate"
    assert verdicts(Snapshot.of_commit(handle, commits[base], "HEAD"), staged[candidate]) == on_git
    if base == "oracle" and candidate != "oracle":
        assert any(r[3] for r in on_git), "the pair should give the checks something to find"
    if (base, candidate) == SAMPLES[0]:  # each check finds its sample's finding
        found = {hook: {f"{f.path}: {f.code}" for f in fs} for hook, _, _, fs in on_git}
        for check in CHECKS:
            assert check.sample().finding in found[check.id], check.id


@pytest.mark.parametrize(
    "base, candidate",
    [
        ("oracle", "oracle edited"),
        ("oracle", "oracle kinds"),
        ("oracle", "oracle"),
        ("empty", "oracle edited"),
        ("oracle", "empty"),
        *SAMPLES,
    ],
)
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_memory_repository_reports_what_the_command_reports(
    tmp_path, capsys, base, candidate, fmt
):
    """testing.trees.MemoryRepo stands in for a repository in the check tests: its
    report on HEAD and the index is byte for byte the command's."""
    repo = init_repo(tmp_path / "r")
    index = repo / ".git" / "index"
    if base != "empty":
        git(repo, "update-ref", "HEAD", _stage_tree(repo, index, CATALOGUE[base]))
    index.unlink(missing_ok=True)
    _stage_tree(repo, index, CATALOGUE[candidate])
    memory_repo = MemoryRepo()
    if base != "empty":
        memory_repo.commit(CATALOGUE[base])
    memory_repo.index = {}
    memory_repo.stage(CATALOGUE[candidate])
    hooks = ",".join(HOOKS)
    rc, out, err = run_guard(
        capsys, repo, "check", "--only", hooks, "--now", "2026-09-25", "--format", fmt
    )
    expected = memory_repo.check(*hooks.split(","), now="2026-09-25", fmt=fmt)
    if fmt == "json":  # the command adds what it judged (revisions, clock) to the findings
        doc = json.loads(out)
        out = {key: doc[key] for key in ("findings", "checks")}
        expected = (expected[0], json.loads(expected[1]), expected[2])
    assert (rc, out, err) == expected


# -- files_key: what keys a cached verdict on the files some patterns match ----------


def _files_keys(repo, patterns):
    handle = Git(str(repo))
    try:
        head = git(repo, "rev-parse", "HEAD").strip()
        return (
            Snapshot.of_commit(handle, head, "HEAD").files_key(patterns),
            Snapshot.of_index(handle).files_key(patterns),
        )
    finally:
        handle.close()


@pytest.mark.parametrize("anchored", [True, False], ids=["folders", "anywhere"])
def test_files_key_follows_the_files_the_patterns_can_match(tmp_path, anchored):
    repo = init_repo(tmp_path / "r")
    commit(repo, {"fx/a.bin": "a\n", "fx/d/b.bin": "b\n", "src/x.py": "x\n"})
    patterns = PatternSet(["fx/**"] if anchored else ["**/*.bin"])
    first = _files_keys(repo, patterns)
    assert all(first) and first[0] != first[1]
    commit(repo, {"src/x.py": "y\n"})  # no pattern's folder holds it
    outside = _files_keys(repo, patterns)
    # with folders, an unrelated change keeps the key; without, the whole tree counts
    assert (outside == first) is anchored
    commit(repo, {"fx/d/b.bin": "c\n"})  # a file the patterns match, deep down
    changed = _files_keys(repo, patterns)
    assert changed[0] != outside[0] and changed[1] != outside[1]
    git(repo, "update-index", "--chmod=+x", "fx/a.bin")  # the mode counts too
    assert _files_keys(repo, patterns)[1] != changed[1]


def test_files_key_of_a_folder_that_is_a_file(tmp_path):
    repo = init_repo(tmp_path / "r")
    commit(repo, {"fx": "a file where the folder would be\n", "other": "o\n"})
    patterns = PatternSet(["fx/**"])
    first = _files_keys(repo, patterns)
    commit(repo, {"fx": "changed\n"})
    second = _files_keys(repo, patterns)
    assert first[0] != second[0] and first[1] != second[1]


def test_snapshots_outside_git_key_no_verdict():
    patterns = PatternSet(["fx/**"])
    assert MemorySnapshot({"fx/a": b"a"}).files_key(patterns) is None
    assert Snapshot.empty().files_key(patterns) is None


def test_files_key_of_the_index_holds_every_entry_of_the_folder_and_no_neighbour(tmp_path):
    inside = ["fx/a", "fx/m/n", "fx/z"]
    # beside fx/ in git's order ('.' < '/' < '0'), and a name holding "\tfx/"
    beside = ["fx.txt", "fx0/b", "a\tfx/c", "zz\tfx/d"]
    repo = init_repo(tmp_path / "r")
    commit(repo, {path: "1\n" for path in inside + beside})
    patterns = PatternSet(["fx/**"])
    key = _files_keys(repo, patterns)[1]
    for path in beside[:3]:
        commit(repo, {path: "2\n"})
        assert _files_keys(repo, patterns)[1] == key, path
    for path in inside:
        commit(repo, {path: "3\n"})
        changed = _files_keys(repo, patterns)[1]
        assert changed != key, path
        key = changed


def test_the_index_answers_one_entry_without_parsing_the_listing(tmp_path):
    paths = ["fx/a", "fx/a b", "tab\there", "new\nline", "é.txt", "x"]
    repo = init_repo(tmp_path / "r")
    commit(repo, {path: f"{path}\n" for path in paths})
    git(repo, "update-index", "--chmod=+x", "x")
    handle = Git(str(repo))
    try:
        lazy = Snapshot.of_index(handle)
        asked = paths + ["fx", "fx/", "f", "a", "x/", "missing"]
        answers = {path: lazy.entry(path) for path in asked}
        assert lazy._entries is None  # nothing parsed yet
        full = handle.index_entries()
        assert answers == {path: full.get(path) for path in asked}
        assert answers["x"].mode == "100755"
        assert lazy.entries == full  # parsed on demand, the same
    finally:
        handle.close()


def test_an_unmerged_index_is_refused_before_any_entry_is_read(tmp_path):
    repo = init_repo(tmp_path / "r")
    commit(repo, {"a": "1\n"})
    git(repo, "checkout", "-q", "-b", "side")
    commit(repo, {"a": "2\n"})
    git(repo, "checkout", "-q", "main")
    commit(repo, {"a": "3\n"})
    subprocess.run(["git", "-C", str(repo), "merge", "-q", "side"], capture_output=True)
    handle = Git(str(repo))
    try:
        with pytest.raises(GitError, match="the index has unmerged entries \\('a'\\)"):
            Snapshot.of_index(handle)
    finally:
        handle.close()
