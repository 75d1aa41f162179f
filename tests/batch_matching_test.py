"""Many paths at once: the batch matcher (``AnyOf.hits``/``misses``) against the
per-path one, the write set over a diff-tree without an object per path, the
history's one-commit shortcut, and the CLI's lean start."""

import gc
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oracle_guard.checks.write_set import WriteSet
from oracle_guard.contract import Contract
from oracle_guard.errors import GitError
from oracle_guard.git import history, trees
from oracle_guard.git.plumbing import Git
from oracle_guard.git.process import encode_path
from oracle_guard.parsing.patterns import AnyOf, Pattern, PatternSet, compile_pattern
from oracle_guard.snapshot import MemorySnapshot, Snapshot, changed_paths, changes
from testing.bounds import property_settings
from testing.git import commit, git, init_repo

# what patterns and names are made of: wildcards, classes, escapes, case and
# normalization twins, bytes that are no UTF-8 (surrogate escapes), a NUL
_PIECES = [
    "a", "b", "A", "é", "É", "e\u0301", "ß", "\u212a", "k", ".", "x.lock", "/", "*", "**",
    "**/", "/**", "?", "[ab]", "[!a]", "[A-Z]", "[[:upper:]]", "\\*", "\\", "[", "\udcff", "\0",
]  # fmt: skip
_NAME_PIECES = ["a", "b", "A", "é", "É", "e\u0301", "ß", "\u212a", "k", ".", "x.lock", "*", "[",
                "\\", "\udcff", " "]  # fmt: skip
_patterns = st.lists(st.sampled_from(_PIECES), min_size=1, max_size=6).map("".join)
_names = st.lists(st.sampled_from(_NAME_PIECES), min_size=1, max_size=3).map("".join)
_paths = st.lists(
    st.lists(_names, min_size=1, max_size=3).map("/".join), min_size=1, max_size=40, unique=True
)


def raw(paths):
    return [encode_path(p) for p in paths]


def per_path(any_of, paths, fold_case=False):
    return [encode_path(p) for p in paths if any_of.matches(p, fold_case)]


@property_settings(max_examples=300)
@given(patterns=st.lists(_patterns, min_size=1, max_size=4), paths=_paths)
def test_the_batch_matcher_agrees_with_the_per_path_one(patterns, paths):
    """Every pattern and path, exact and folded: the same paths match."""
    any_of = AnyOf([compile_pattern(p) for p in patterns])
    exact = per_path(any_of, paths)
    assert any_of.hits(raw(paths)) == set(exact), (patterns, paths)
    assert any_of.hits(raw(paths), fold_case=True) == set(per_path(any_of, paths, True))
    assert any_of.misses(raw(paths)) == [r for r in raw(paths) if r not in exact]


@property_settings(max_examples=100)
@given(pattern=_patterns, name=_names, many=st.integers(0, 60))
def test_a_needle_few_or_many_paths_hold_is_matched_alike(pattern, name, many):
    """A pattern's literal text in no path, a few (matched on those alone) or
    most (matched on every path): the per-path answer each time."""
    paths = [f"src/m{i}/{name}" for i in range(many)] + [f"other/f{i}" for i in range(60)]
    any_of = AnyOf([compile_pattern(pattern)])
    for fold_case in (False, True):
        assert any_of.hits(raw(paths), fold_case) == set(per_path(any_of, paths, fold_case))


@pytest.mark.parametrize(
    ("pattern", "hit", "near_miss"),
    [
        ("oracle/**", "oracle/a.json", "oracles/a.json"),  # anchored: the needle is its start
        ("x.lock", "deep/er/x.lock", "deep/x.lockx"),  # a name at any depth
        ("*.lock", "a/b.lock", "a/b.locks"),  # a short needle most paths hold
        ("docs/", "docs/a", "docs"),  # folders only
        ("/README", "README/x", "READMEx"),
        ("**/t/*.json", "a/t/b.json", "a/t/b/c.jsonx"),
    ],
)
def test_batch_hits_and_near_misses(pattern, hit, near_miss):
    any_of = AnyOf([compile_pattern(pattern)])
    paths = [near_miss, hit, "unrelated/file"]
    assert any_of.hits(raw(paths)) == {encode_path(hit)}
    assert any_of.misses(raw(paths)) == [encode_path(near_miss), b"unrelated/file"]


def test_no_batch_pattern_reaches_into_the_next_path():
    """Paths are NUL-separated in a batch: no wildcard, class or '**' takes a
    NUL, so a match never spans two paths."""
    paths = raw(["a", "b/c", "x"])
    for pattern in ("a*", "a?b/c", "a[^x]b/c", "a/**", "**/a/**", "a**c", "a\0b/c"):
        any_of = AnyOf([compile_pattern(pattern)])
        assert any_of.hits(paths) == set(per_path(any_of, ["a", "b/c", "x"])), pattern
    # a pattern with a NUL matches no name git lists, in a batch or alone
    assert AnyOf([compile_pattern("a\0b")]).hits(raw(["a\0b", "a", "b"])) == set()


def test_non_ascii_paths_are_folded_one_by_one():
    """A batch with a non-ASCII name compares its other forms (NFC, NFD,
    folded) as the per-path matcher does; ASCII names stay in the batch."""
    any_of = AnyOf([compile_pattern("café/**"), compile_pattern("k*")])
    paths = ["CAFE\u0301/x", "café/y", "\u212a", "K", "other", "cafe/z"]
    assert any_of.hits(raw(paths), fold_case=True) == set(per_path(any_of, paths, True))
    assert encode_path("CAFE\u0301/x") in any_of.hits(raw(paths), fold_case=True)
    assert b"cafe/z" not in any_of.hits(raw(paths), fold_case=True)


def test_empty_batches():
    any_of = AnyOf([compile_pattern("a")])
    assert any_of.hits([]) == set()
    assert any_of.misses([]) == []
    assert PatternSet([]).misses([b"a"]) == [b"a"]


# -- the write set over many paths --------------------------------------------


def write_set_of(data):
    return WriteSet(Contract(data, MemorySnapshot({}), from_base=True))


@property_settings(max_examples=100)
@given(paths=_paths, allow=st.lists(_patterns, max_size=2), deny=st.lists(_patterns, max_size=2))
def test_the_write_set_batch_agrees_with_each_path_alone(paths, allow, deny):
    data = {"version": 1, "write_set": {"deny": deny}}
    if allow:
        data["write_set"]["allow"] = allow
    batch = write_set_of(data).findings(raw(paths), opaque=raw(paths[:1]))
    alone = write_set_of(data)
    expected = {}
    for i, path in enumerate(paths):
        found = alone.finding(path, opaque=i == 0)
        if found is not None:
            expected[encode_path(path)] = found
    assert batch == expected


def test_the_write_set_asked_twice_answers_from_memory():
    write_set = write_set_of({"version": 1, "write_set": {"deny": ["oracle/**"]}})
    paths = [b"oracle/a", b"src/b"]
    first = write_set.findings(paths)
    assert write_set.findings(list(paths)) is first
    # the near miss: the same paths, one now a symlink, are judged again
    assert write_set.findings(paths, opaque=[b"src/b"]) is not first


@pytest.fixture
def repo(tmp_path):
    repo = init_repo(tmp_path / "r")
    commit(repo, {"src/a.py": "1\n", "oracle/x.json": "[1]\n", "keep": "k\n"}, "base")
    return repo


def test_changed_paths_between_commits_match_changes(repo):
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "rm", "-q", "keep")
    (repo / "link").symlink_to("src")
    head = commit(repo, {"src/a.py": "2\n", "src/é.py": "x\n", "oracle/x.json": "[2]\n"}, "head")
    handle = Git(str(repo))
    try:
        old = Snapshot.of_commit(handle, base, "base")
        new = Snapshot.of_commit(handle, head, "head")
        paths, opaque = changed_paths(old, new)
        listed = changes(old, new)
        assert sorted(paths) == sorted(encode_path(p) for p, _, _ in listed)
        assert opaque == [b"link"]
        # the near miss: the same change from entries in memory (the index's way)
        memory = MemorySnapshot({"src/a.py": b"2\n"})
        assert changed_paths(old, memory)[1] == []
    finally:
        handle.close()


def test_diff_paths_refuses_a_tree_that_lists_a_path_twice(repo):
    one = git(repo, "hash-object", "-w", "--stdin", input=b"1\n").strip()
    two = git(repo, "hash-object", "-w", "--stdin", input=b"2\n").strip()
    root = git(
        repo, "mktree", input=f"100644 blob {one}\ta\n100644 blob {two}\ta\n".encode()
    ).strip()
    dup = git(repo, "commit-tree", root, "-m", "dup", input=b"").strip()
    handle = Git(str(repo))
    try:
        with pytest.raises(GitError, match="lists 'a' twice"):
            handle.diff_paths(git(repo, "rev-parse", "HEAD").strip(), dup)
    finally:
        handle.close()


def test_a_path_that_looks_like_a_record_is_only_a_path(repo):
    """A name shaped like diff-tree's modes is checked in full: not opaque."""
    base = git(repo, "rev-parse", "HEAD").strip()
    head = commit(repo, {":120000 160000 x": "1\n"}, "odd")
    handle = Git(str(repo))
    try:
        assert handle.diff_paths(base, head) == ([b":120000 160000 x"], [])
    finally:
        handle.close()


@pytest.mark.parametrize(
    "out",
    [
        b"zz\0:100644 100644 a b M\0p\0",  # no commit id
        b"%s\0:100644 100644 a b M\0" % (b"a" * 40),  # a record without its path
        b"%s\0:100644 100644 a b M\0p" % (b"a" * 40),  # cut short
    ],
)
def test_a_history_diff_git_does_not_document_is_an_error(out):
    with pytest.raises(GitError):
        history._paths_by_commit(out)


def test_history_paths_by_commit():
    one, two = b"a" * 40, b"b" * 40
    out = one + b"\0:100644 100644 x y M\0p\0:000000 100644 x y A\0:q\0" + two + b"\0"
    out += b":100644 000000 x y D\0r\0"
    assert history._paths_by_commit(out) == {"a" * 40: [b"p", b":q"], "b" * 40: [b"r"]}


def test_a_one_commit_range_reuses_the_change_and_a_longer_one_runs_diff_tree(repo):
    base = git(repo, "rev-parse", "HEAD").strip()
    first = commit(repo, {"src/a.py": "2\n"}, "one")
    second = commit(repo, {"oracle/x.json": "[2]\n", "src/b.py": "b\n"}, "two")
    handle = Git(str(repo))
    try:
        diffed = handle.diff_paths(base, first)
        (only,) = handle.history(first, [base])()
        assert only.paths is diffed[0]  # the change's own list: no second diff-tree
        commits = handle.history(second, [base])()
        assert [(c.id, c.paths) for c in commits] == [
            (second, [b"oracle/x.json", b"src/b.py"]),
            (first, [b"src/a.py"]),
        ]
        # the root commit has no parent: diff-tree --root lists its files
        (root,) = handle.history(base, [])()
        assert root.paths == [b"keep", b"oracle/x.json", b"src/a.py"]
    finally:
        handle.close()


def test_history_in_a_missing_range_fails_closed(repo):
    handle = Git(str(repo))
    try:
        with pytest.raises(GitError, match="rev-list failed"):
            handle.history("0" * 40, [])()
    finally:
        handle.close()


# -- the CLI's start ----------------------------------------------------------


def test_a_command_imports_its_own_module_alone(repo):
    code = "import sys\nfrom oracle_guard.cli import main\nmain(['check', '--help'])\n"
    proc = subprocess.run(
        [sys.executable, "-c", code + "", "--"], capture_output=True, text=True, cwd=repo
    )
    assert "usage: oracle-guard check" in proc.stdout
    probe = (
        "import sys\n"
        "from oracle_guard import cli\n"
        "try:\n"
        "    cli.main(['check', '--version-bogus'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('oracle_guard.commands.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout
    assert "oracle_guard.commands.check" in out
    assert "oracle_guard.commands.doctor" not in out


def test_a_command_s_help_is_the_same_from_either_parser():
    from oracle_guard.cli import build_parser

    def help_of(parser):
        action = next(a for a in parser._actions if a.dest == "command")
        return action.choices["check"].format_help()

    assert help_of(build_parser("check")) == help_of(build_parser())


def test_the_collector_is_off_during_a_run_and_back_after(monkeypatch):
    from oracle_guard import cli

    seen = []

    def run(options):
        seen.append(gc.isenabled())
        return 0

    monkeypatch.setattr(cli, "build_parser", lambda only=None: _parser_running(run))
    assert gc.isenabled()
    assert cli.main(["check"]) == 0
    assert seen == [False]
    assert gc.isenabled()


def _parser_running(run):
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("command")
    parser.set_defaults(run=run)
    return parser


# -- diff-tree's output, cut anywhere -----------------------------------------

_RECORDS = [
    (b":100644 100644 %s %s M" % (b"1" * 40, b"2" * 40), b"src/a.py"),
    (b":000000 100644 %s %s A" % (b"0" * 40, b"2" * 40), b":100644 looks like a record"),
    (b":120000 100644 %s %s T" % (b"1" * 40, b"2" * 40), b"was/a/link"),
    (b":100755 000000 %s %s D" % (b"1" * 40, b"0" * 40), "é".encode()),
    (b":160000 160000 %s %s M" % (b"1" * 40, b"2" * 40), b"sub"),
]


@property_settings(max_examples=200)
@given(
    records=st.lists(st.sampled_from(_RECORDS), max_size=8, unique=True),
    cuts=st.lists(st.integers(0, 2000), max_size=6),
)
def test_diff_tree_output_parses_alike_wherever_a_read_ends(records, cuts):
    out = b"".join(meta + b"\0" + path + b"\0" for meta, path in records)
    edges = sorted({0, len(out), *(c for c in cuts if c < len(out))})
    chunks = [out[a:b] for a, b in zip(edges, edges[1:])]
    blocks, opaque = trees._changed_paths(chunks)
    assert trees._split_paths(blocks, "c" * 40) == [path for _, path in records]
    assert opaque == [
        p for m, p in records if m[1:3] in (b"12", b"16") or m[8:10] in (b"12", b"16")
    ]


@pytest.mark.parametrize(
    "out",
    [
        b":100644 100644 a b M\0path",  # cut short in a path
        b":100644 100644 a b M\0",  # a record without its path
        b"100644 100644 a b M\0path\0",  # no ':' where a record begins
        b":100644 100644 a b M\0p\0:100644 100644 a b M\0p\0",  # the same path twice
    ],
)
def test_diff_tree_output_it_does_not_document_is_an_error(out):
    with pytest.raises(GitError):
        trees._split_paths(trees._changed_paths([out])[0], "c" * 40)


def test_diff_tree_output_keeps_no_object_per_path_while_git_writes():
    """git holds every change until its last line: the parse beside it keeps
    each chunk's paths as one bytes, not 20,000 objects (about 1.1 MiB here)."""
    import tracemalloc

    record = b":100644 100644 %s %s M\0" % (b"1" * 40, b"2" * 40)
    out = b"".join(record + b"src/m%03d/f%06d.py\0" % (i % 1000, i) for i in range(20_000))
    chunks = [out[at : at + (1 << 20)] for at in range(0, len(out), 1 << 20)]
    tracemalloc.start()
    try:
        blocks, _ = trees._changed_paths(iter(chunks))
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 20_000 * 30  # the paths' bytes (20 each) and little more
    paths = trees._split_paths(blocks, "c" * 40)
    assert len(paths) == 20_000 and paths[-1] == b"src/m999/f019999.py"


def test_diff_paths_of_a_missing_commit_says_git_s_reason(repo):
    handle = Git(str(repo))
    try:
        with pytest.raises(GitError, match="git diff-tree -r failed"):
            handle.diff_paths("0" * 40, git(repo, "rev-parse", "HEAD").strip())
    finally:
        handle.close()


@property_settings(max_examples=150)
@given(patterns=st.lists(_patterns, min_size=1, max_size=4), paths=_paths)
def test_the_batch_matcher_agrees_with_emulated_atomic_groups(patterns, paths):
    """Before Python 3.11 an atomic group is a lookahead, a named group and a
    backreference: the batch regexes then hold more groups than the path's."""
    from oracle_guard.parsing import wildmatch

    original = wildmatch._atomic
    wildmatch._atomic = wildmatch._emulated_atomic
    try:
        any_of = AnyOf([Pattern(p) for p in patterns])  # compiled anew
        exact = per_path(any_of, paths)
        assert any_of.hits(raw(paths)) == set(exact), (patterns, paths)
        assert any_of.hits(raw(paths), fold_case=True) == set(per_path(any_of, paths, True))
        assert any_of.misses(raw(paths)) == [r for r in raw(paths) if r not in exact]
    finally:
        wildmatch._atomic = original
