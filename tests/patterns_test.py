import os
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracle_guard.patterns import Pattern, PatternSet
from testing.git import init_repo


@pytest.mark.parametrize(("pattern", "path", "expected"), [
    # '*' stays inside one name
    ("*.json", "a.json", True),
    ("*.json", "deep/er/a.json", True),
    ("seeds/*.json", "seeds/a.json", True),
    ("seeds/*.json", "seeds/sub/a.json", False),
    ("a*b", "a/b", False),
    ("*", "anything/at/all", True),
    # '**' leading, middle, trailing
    ("**/x", "x", True),
    ("**/x", "a/b/x", True),
    ("**/x", "a/bx", False),
    ("a/**/b", "a/b", True),
    ("a/**/b", "a/x/y/b", True),
    ("a/**/b", "a/xb", False),
    ("a/**", "a/b/c", True),
    ("a/**", "a", False),
    ("a/**", "ab/c", False),
    ("***/b", "x/y/b", True),  # a whole segment of stars is '**'
    ("a*x**/b", "abx/c/b", False),  # '**' inside a name is '*'
    ("a*x**/b", "abxc/b", True),
    # ...except right after the literal start of a pattern, where git's
    # prefix shortcut makes it a segment start: 'a' + '**/b'
    ("a**/b", "ab", True),
    ("a**/b", "a/x/b", True),
    # '?' is one character, never '/'
    ("?.py", "a.py", True),
    ("?.py", "ab.py", False),
    ("a?b", "a/b", False),
    ("?.py", "\u00e9.py", True),  # one character, where git's wildmatch counts UTF-8 bytes
    # bracket expressions
    ("[ab].py", "b.py", True),
    ("[ab].py", "c.py", False),
    ("[!ab].py", "c.py", True),
    ("[!ab].py", "a.py", False),
    ("[^ab].py", "c.py", True),
    ("[a-c]x", "bx", True),
    ("[a-c]x", "dx", False),
    ("[]]x", "]x", True),
    ("[!]]x", "]x", False),
    ("[[:digit:]]x", "7x", True),
    ("[[:digit:]]x", "ax", False),
    ("a[/]b", "a/b", False),    # a class never matches '/'...
    ("a[.-0]b", "a/b", False),  # ...not even through a range that spans it
    ("a[.-0]b", "a.b", True),
    ("[a/b]c", "ac", True),     # the '/' inside brackets does not split the pattern
    ("[x", "[x", False),        # malformed patterns match nothing, as in git
    ("a\\", "a\\", False),
    ("[[:nope:]]", "n", False),
    ("\\*star", "*star", True),
    ("\\*star", "xstar", False),
    # trailing '/': a folder and everything below it, never a file of that name
    ("src/", "src/x.py", True),
    ("src/", "lib/src/x.py", True),
    ("src/", "src", False),
    ("/src/", "lib/src/x.py", False),
    # leading '/' (or a slash in the middle) anchors to the root
    ("/README.md", "README.md", True),
    ("/README.md", "docs/README.md", False),
    ("doc/*.txt", "doc/a.txt", True),
    ("doc/*.txt", "x/doc/a.txt", False),
    # no slash: a name at any depth, and everything below a folder of that name
    ("README.md", "docs/README.md", True),
    ("oracle", "oracle/inputs/a.bin", True),
    ("oracle", "my-oracle/a.bin", False),
    # names may hold anything but '/'
    ("*", "new\nline", True),
    ("a b/*", "a b/c\td", True),
])
def test_pattern_matches(pattern, path, expected):
    assert Pattern(pattern).matches(path) is expected


def test_fold_case_matches_case_twins():
    pattern = Pattern("oracle/**")
    assert not pattern.matches("Oracle/x")
    assert pattern.matches("Oracle/x", fold_case=True)
    assert not pattern.matches("Oracles/x", fold_case=True)


def test_pattern_set_reports_first_matching_pattern():
    patterns = PatternSet(["src/**", "*.md"])
    assert patterns.first_match("src/README.md") == "src/**"
    assert patterns.first_match("docs/a.md") == "*.md"
    assert patterns.first_match("docs/a.txt") is None
    assert patterns.select(["b.md", "x", "a.md"]) == ["a.md", "b.md"]


# -- differential: the same answers as git itself ------------------------------

@pytest.fixture(scope="module")
def ignore_repo(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("ignore") / "r")
    subprocess.run(["git", "-C", str(repo), "config", "core.ignoreCase", "false"], check=True)
    return repo


def git_ignored(repo, pattern, paths):
    """{path: ignored?} from `git check-ignore --no-index` with only ``pattern``
    in .gitignore. Paths need not exist: a missing path is not a folder, so a
    trailing-slash pattern matches it only through a parent folder."""
    (repo / ".gitignore").write_bytes(pattern.encode() + b"\n")
    proc = subprocess.run(
        ["git", "-C", str(repo), "check-ignore", "--no-index", "--stdin", "-z", "-v", "-n"],
        input=b"".join(os.fsencode(p) + b"\0" for p in paths),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    fields = proc.stdout.split(b"\0")
    # records of four fields: source, line number, pattern, path (source empty: not ignored)
    return {os.fsdecode(fields[i + 3]): bool(fields[i]) for i in range(0, len(fields) - 1, 4)}


def assert_agrees_with_git(repo, pattern, paths):
    expected = git_ignored(repo, pattern, paths)
    assert set(expected) == set(paths)
    compiled = Pattern(pattern)
    disagree = {p: expected[p] for p in paths if compiled.matches(p) != expected[p]}
    assert disagree == {}, f"pattern {pattern!r}: git says {disagree}"


PATHS = [
    "a", "b", "x", "ab", "ax", "bx", "dx", "]x", "ac", "7x", "a.py", "b.py", "ab.py",
    "a/b", "a/b/c", "a/b/c/d", "a/x/b", "a/x/y/b", "a/bx", "a/c", "b/c", "b/x/c",
    "x/y", "y/x", "x/a/b/y", "src", "src/x", "x/src", "x/src/y", "README.md",
    "docs/README.md", "seeds/a.json", "seeds/sub/a.json", "z/seeds/a.json",
    "doc/a.txt", "doc/x/a.txt", "a.txt/b", "[x", "a[b", "*star", "xstar", "-x",
    "a b/c d", "Oracle/x", "oracle/x", "a.b", "a0b",
]

PATTERNS = [
    "*.json", "seeds/*.json", "/seeds/*.json", "**/x", "**/a/b", "/**/b", "a/**",
    "a/**/b", "a/**/", "**", "*", "***/b", "a**/b", "**x", "x**", "a/**b", "?.py",
    "a?b", "[ab].py", "[!ab].py", "[^ab].py", "[a-c]x", "[z-a]x", "[a-c-e]x", "[]]x",
    "[!]]x", "[]-a]x", "[\\]]x", "[[:digit:]]x", "[[:alpha:]]", "[[:nope:]]", "[x",
    "x]", "a[/]b", "a[.-0]b", "[a/b]c", "\\*star", "a\\[b", "a\\", "src/", "/src/", "src",
    "/README.md", "README.md", "a/b/", "a/*", "a/*/", "*/b", "doc/*.txt", "*.txt/",
    "a b/*", "oracle/**", "//b", "a//",
]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_agrees_with_git_check_ignore(ignore_repo, pattern):
    assert_agrees_with_git(ignore_repo, pattern, PATHS)


_PATTERN_CHARS = st.sampled_from(
    ["a", "b", "/", "*", "**", "?", "[", "]", "!", "^", "-", "\\", "[:alpha:]", "1", "."])
_NAME = st.text(alphabet="abAB1-]![\\^*? .", min_size=1, max_size=3).filter(
    lambda n: n.strip() == n and n not in (".", ".."))

# '!' and '#' at the start and trailing spaces are .gitignore file syntax, not
# pattern syntax (the contract rejects '!'; YAML keeps spaces as written).
_patterns = st.lists(_PATTERN_CHARS, min_size=1, max_size=8).map("".join).filter(
    lambda p: p.strip("/") and p[0] not in "!#" and not p.endswith(" "))
_paths = st.lists(st.lists(_NAME, min_size=1, max_size=4).map("/".join),
                  min_size=1, max_size=20, unique=True)


@settings(derandomize=True, max_examples=80, deadline=None)
@given(pattern=_patterns, paths=_paths)
def test_agrees_with_git_on_generated_patterns(ignore_repo, pattern, paths):
    assert_agrees_with_git(ignore_repo, pattern, paths)


WELL_FORMED = [p for p in PATTERNS if p not in ("[[:nope:]]", "[x", "a\\")]


@pytest.mark.parametrize("pattern", WELL_FORMED + ["a/**/b/**/c/**/d", "a*a*a*b",
                                                   "**/x/**/*.json", "*/**/[ab]?/**"])
def test_the_matcher_that_cannot_backtrack_agrees_with_the_regex(pattern):
    from oracle_guard.patterns import _Nfa, _regex

    compiled = Pattern(pattern)
    body = pattern[:-1] if compiled.dir_only else pattern
    anchored = "/" in body
    _, tokens = _regex(body[1:] if body.startswith("/") else body, anchored)
    nfa = _Nfa(tokens, 0)
    paths = PATHS + ["a/b/c/d", "a/x/b/y/c/z/d", "a/b/c/e", "aaab", "aab", "q/x/r/s.json",
                     "x/a.json", "z/ab/q", "z/q/ab/c"]
    for path in paths:
        regex_says = (not compiled.dir_only and compiled._rx.match(path)) or any(
            compiled._rx.match(path, 0, i) for i, ch in enumerate(path) if ch == "/")
        assert nfa.matches(path, compiled.dir_only) == bool(regex_says), (pattern, path)


def test_many_stars_against_a_deep_path_take_linear_time():
    import time

    deep = "a/" + "b/c/" * 5000 + "e"
    for pattern in ("a/**/b/**/c/**/d", "a*a*a*a*a*a*b"):
        started = time.monotonic()
        assert not Pattern(pattern).matches(deep)
        assert not Pattern(pattern).matches("a" * 3000)
        assert time.monotonic() - started < 2.0, pattern
