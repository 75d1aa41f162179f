"""Property tests: append-only seeds, the fixture lock, pattern sets against git.

CI replays a fixed seed and a bounded number of examples (testing/bounds.py,
``property_settings``). A longer exploratory run with a random seed:

    ORACLE_GUARD_EXPLORE=1 .venv/bin/python -m pytest tests/adversarial/properties_test.py

Seed and lock properties call the pure functions on in-memory snapshots; the
pattern properties ask git itself (tests/patterns_test.py already checks single
patterns against `git check-ignore`; here: pattern sets and case folding).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from typing import Dict, List

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from oracle_guard.checks import fixture_lock, seed_append_only
from oracle_guard.parsing.patterns import Pattern, PatternSet
from oracle_guard.snapshot import MemorySnapshot
from testing.bounds import property_settings
from testing.git import init_repo

SEED_PATH = "seeds/s.json"


def compare(fmt: str, old: bytes, new: bytes):
    base = MemorySnapshot({SEED_PATH: old}, "base")
    candidate = MemorySnapshot({SEED_PATH: new}, "candidate")
    return seed_append_only.compare(fmt, SEED_PATH, base, candidate)


def codes(findings) -> List[str]:
    return [f.code for f in findings]


# -- append-only ----------------------------------------------------------------

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=8)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)
seed_lists = st.lists(json_values, min_size=1, max_size=8)


def array(values) -> bytes:
    return json.dumps(values, ensure_ascii=False).encode()


def lines(values) -> bytes:
    return b"".join(json.dumps(v, ensure_ascii=False).encode() + b"\n" for v in values)


def same(a, b) -> bool:
    """Equal as seeds: type-strict (0, 0.0 and false differ), key order ignored."""
    return seed_append_only.strict_key(a) == seed_append_only.strict_key(b)


@property_settings()
@given(
    base=seed_lists,
    appended=st.lists(json_values, max_size=5),
    indent=st.sampled_from([None, 1, 4]),
    sort_keys=st.booleans(),
)
def test_json_array_append_passes_in_any_layout(base, appended, indent, sort_keys):
    new = json.dumps(base + appended, indent=indent, sort_keys=sort_keys).encode()
    assert compare("json-array", array(base), new) == []


@property_settings()
@given(base=seed_lists, appended=st.lists(json_values, max_size=5))
def test_jsonl_append_passes(base, appended):
    assert compare("jsonl", lines(base), lines(base + appended)) == []


@property_settings()
@given(base=seed_lists, data=st.data())
def test_deleting_a_seed_fails(base, data):
    i = data.draw(st.integers(0, len(base) - 1), label="deleted")
    kept = base[:i] + base[i + 1 :]
    assume(kept)  # an empty candidate is oracle-incomplete, tested on its own
    unique = sum(same(v, base[i]) for v in base) == 1
    for fmt, render in (("json-array", array), ("jsonl", lines)):
        found = codes(compare(fmt, render(base), render(kept)))
        assert len(found) == 1 and found[0] in ("seed-removed", "seed-reordered"), (fmt, found)
        if unique:  # nothing like it later on: it can only have been removed
            assert found == ["seed-removed"], fmt


@property_settings()
@given(base=st.lists(json_values, min_size=2, max_size=8), data=st.data())
def test_swapping_two_unequal_seeds_is_a_reorder(base, data):
    i = data.draw(st.integers(0, len(base) - 2), label="i")
    j = data.draw(st.integers(i + 1, len(base) - 1), label="j")
    assume(not same(base[i], base[j]))
    swapped = list(base)
    swapped[i], swapped[j] = base[j], base[i]
    for fmt, render in (("json-array", array), ("jsonl", lines)):
        found = compare(fmt, render(base), render(swapped))
        assert codes(found) == ["seed-reordered"], fmt


@property_settings()
@given(
    base=seed_lists,
    replacement=json_values,
    appended=st.lists(json_values, max_size=3),
    data=st.data(),
)
def test_mutating_a_seed_fails_even_with_appends(base, replacement, appended, data):
    i = data.draw(st.integers(0, len(base) - 1), label="mutated")
    assume(not same(base[i], replacement))
    mutated = base[:i] + [replacement] + base[i + 1 :] + appended
    later = any(same(v, base[i]) for v in mutated[i + 1 :])
    expected = "seed-reordered" if later else "seed-rewritten"
    for fmt, render in (("json-array", array), ("jsonl", lines)):
        assert codes(compare(fmt, render(base), render(mutated))) == [expected], fmt


# Equal in Python, different seeds: each pair must be a rewrite, at any depth.
LOOKALIKES = [
    (0, 0.0),
    (0, False),
    (0.0, False),
    (1, True),
    (1, 1.0),
    (1.0, True),
    (-0.0, 0.0),
    (None, False),
    ("1", 1),
    ([], {}),
]


@st.composite
def nested_pair(draw):
    """Two values alike but for one lookalike pair buried at a generated depth."""
    old, new = draw(st.sampled_from(LOOKALIKES + [(b, a) for a, b in LOOKALIKES]))
    for _ in range(draw(st.integers(0, 3))):
        if draw(st.booleans()):
            before = draw(st.lists(json_values, max_size=2))
            old, new = before + [old], before + [new]
        else:
            key = draw(st.text(max_size=3))
            others = draw(st.dictionaries(st.text(max_size=3), json_values, max_size=2))
            others.pop(key, None)
            old, new = {**others, key: old}, {**others, key: new}
    return old, new


@property_settings()
@given(prefix=st.lists(json_values, max_size=3), pair=nested_pair())
def test_equality_is_type_strict(prefix, pair):
    old, new = pair
    # the changed element is the last, so no later element can hold the old value
    assert codes(compare("json-array", array(prefix + [old]), array(prefix + [new]))) == [
        "seed-rewritten"
    ]
    assert codes(compare("jsonl", lines(prefix + [old]), lines(prefix + [new]))) == [
        "seed-rewritten"
    ]
    if isinstance(old, dict) and isinstance(new, dict):
        assert codes(compare("json-object", array(old), array(new))) == ["seed-rewritten"]


# -- the lock -------------------------------------------------------------------

ROOT = "oracle/inputs"
LOCK = "oracle/fixtures.lock"
ENTRY = {"lock": LOCK, "root": ROOT, "paths": [f"{ROOT}/**"]}

_name = st.text(alphabet="abZ09-_. é", min_size=1, max_size=6).filter(
    lambda n: n not in (".", "..")
)
_relative = st.lists(_name, min_size=1, max_size=3).map("/".join)
fixture_sets = st.dictionaries(
    _relative, st.binary(min_size=1, max_size=64), min_size=1, max_size=6
).filter(
    # a file and a folder of the same name cannot both exist
    lambda files: not any(other.startswith(p + "/") for p in files for other in files)
)


def lock_text(files: Dict[str, bytes], style: str) -> bytes:
    """The lock, written here from hashlib, not by the code under test."""
    digests = {p: hashlib.sha256(d).hexdigest() for p, d in sorted(files.items())}
    if style == "json":
        return json.dumps(digests, indent=2).encode()
    if style == "digest":
        return (next(iter(digests.values())) + "\n").encode()
    return "".join(f"{d}  {p}\n" for p, d in digests.items()).encode()


def styles(files) -> List[str]:
    return ["json", "sha256sum"] + (["digest"] if len(files) == 1 else [])


def check_lock(files: Dict[str, bytes], lock: bytes):
    tree = {f"{ROOT}/{p}": d for p, d in files.items()}
    tree[LOCK] = lock
    return [
        (f.code, f.path)
        for f in fixture_lock.check_entry(ENTRY, MemorySnapshot(tree, "the candidate"))
    ]


@property_settings()
@given(files=fixture_sets)
def test_a_lock_built_from_the_files_passes(files):
    for style in styles(files):
        assert check_lock(files, lock_text(files, style)) == [], style


@property_settings()
@given(files=fixture_sets, data=st.data())
def test_any_byte_flip_is_caught(files, data):
    path = data.draw(st.sampled_from(sorted(files)), label="file")
    at = data.draw(st.integers(0, len(files[path]) - 1), label="offset")
    mask = data.draw(st.integers(1, 255), label="mask")
    flipped = bytearray(files[path])
    flipped[at] ^= mask
    for style in styles(files):
        found = check_lock({**files, path: bytes(flipped)}, lock_text(files, style))
        assert found == [("fixture-mismatch", f"{ROOT}/{path}")], style


@property_settings()
@given(files=fixture_sets, extra=_relative, content=st.binary(max_size=16))
def test_an_added_file_is_caught(files, extra, content):
    assume(
        extra not in files
        and not any(p.startswith(extra + "/") or extra.startswith(p + "/") for p in files)
    )
    for style in styles(files):
        found = check_lock({**files, extra: content}, lock_text(files, style))
        if style == "digest":
            # one digest cannot lock two files: which finding depends on the names
            assert found, style
        else:
            assert found == [("fixture-unlocked", f"{ROOT}/{extra}")], style


@property_settings()
@given(files=fixture_sets, data=st.data())
def test_a_removed_file_is_caught(files, data):
    path = data.draw(st.sampled_from(sorted(files)), label="removed")
    rest = {p: d for p, d in files.items() if p != path}
    for style in styles(files):
        found = check_lock(rest, lock_text(files, style))
        assert found == [("fixture-missing", LOCK)], style


# -- pattern sets and case folding against git ------------------------------------


@pytest.fixture(scope="module")
def ignore_repos(tmp_path_factory):
    """Two repositories for `git check-ignore`: case-sensitive and case-folding."""
    repos = {}
    for fold in (False, True):
        repo = init_repo(tmp_path_factory.mktemp("ignore") / f"fold-{fold}")
        subprocess.run(
            ["git", "-C", str(repo), "config", "core.ignoreCase", str(fold).lower()], check=True
        )
        repos[fold] = repo
    return repos


def git_ignored(repo, patterns, paths) -> Dict[str, bool]:
    """{path: ignored?} with ``patterns`` as the whole .gitignore (no negation,
    so a path is ignored when any pattern matches it)."""
    (repo / ".gitignore").write_bytes(b"".join(p.encode() + b"\n" for p in patterns))
    proc = subprocess.run(
        ["git", "-C", str(repo), "check-ignore", "--no-index", "--stdin", "-z", "-v", "-n"],
        input=b"".join(os.fsencode(p) + b"\0" for p in paths),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    fields = proc.stdout.split(b"\0")
    return {os.fsdecode(fields[i + 3]): bool(fields[i]) for i in range(0, len(fields) - 1, 4)}


_segment = st.sampled_from(
    ["a", "b", "ab", "A", "B", "*", "**", "?", "[ab]", "[!a]", "[A-Z]", "a*", "*b", "x"]
)
_patterns = st.lists(
    st.lists(_segment, min_size=1, max_size=4)
    .map("/".join)
    .flatmap(lambda body: st.sampled_from([body, "/" + body, body + "/"])),
    min_size=1,
    max_size=5,
)
_paths = st.lists(
    st.lists(st.sampled_from(["a", "b", "ab", "A", "aB", "x", "ba"]), min_size=1, max_size=5).map(
        "/".join
    ),
    min_size=1,
    max_size=15,
    unique=True,
)


@property_settings(max_examples=60)
@given(patterns=_patterns, paths=_paths)
def test_pattern_set_agrees_with_git(ignore_repos, patterns, paths):
    expected = git_ignored(ignore_repos[False], patterns, paths)
    compiled = PatternSet(patterns)
    got = {p: compiled.first_match(p) is not None for p in paths}
    assert got == expected, patterns
    # first_match names a pattern that matches on its own
    for p in paths:
        first = compiled.first_match(p)
        assert first is None or Pattern(first).matches(p)


@property_settings(max_examples=60)
@given(patterns=_patterns, paths=_paths)
def test_fold_case_agrees_with_git_ignore_case(ignore_repos, patterns, paths):
    # ASCII paths: folding Unicode normalization changes nothing here, so the
    # answer is git's own with core.ignoreCase=true, except that a negated class
    # also takes a letter whose other case it matches (a case twin of the name
    # matches as written): then it may only protect more than git
    expected = git_ignored(ignore_repos[True], patterns, paths)
    compiled = PatternSet(patterns)
    got = {p: compiled.first_match(p, fold_case=True) is not None for p in paths}
    if any("[!" in p or "[^" in p for p in patterns):
        assert all(got[p] for p in paths if expected[p]), patterns
    else:
        assert got == expected, patterns
