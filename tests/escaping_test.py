"""What reaches a terminal or a CI log from a file name or message: never a
control character, an undecodable byte as such, or a runner command."""

from __future__ import annotations

import pytest

from oracle_guard.report.escaping import inert, printable, show_path, show_text


@pytest.mark.parametrize(
    ("path", "shown"),
    [
        (None, "."),
        ("src/a.py", "src/a.py"),
        ("café/naïve.txt", "café/naïve.txt"),
        ("a\\b", "a\\\\b"),  # a backslash is doubled, so '\x1b' below is unambiguous
        ("x\x1b[31m", "x\\x1b[31m"),
        ("raw\udcff.md", "raw\\xff.md"),  # a byte that is not UTF-8
        ("new\nline", "new\\nline"),
        ("del\x7f", "del\\x7f"),
        ("c1\x85", "c1\\x85"),
        ("ls\u2028ps\u2029", "ls\\u2028ps\\u2029"),
    ],
)
def test_show_path(path, shown):
    assert show_path(path) == shown


def test_show_text_escapes_like_show_path_but_keeps_backslashes():
    assert show_text("a\\b \x1b[2J \udc80") == "a\\b \\x1b[2J \\x80"


@pytest.mark.parametrize(
    ("line", "printed"),
    [
        ("src/a.py: write-denied: x", "src/a.py: write-denied: x"),
        ("::error::forged", "./::error::forged"),
        ("  \t::warning::forged", "./  \t::warning::forged"),
        ("a: ##[group]b", "a: ##\\[group]b"),
        ("a: #[x] ## [y] :: z", "a: #[x] ## [y] :: z"),  # near misses stay as they are
    ],
)
def test_inert(line, printed):
    assert inert(line) == printed


def test_printable_shows_only_undecodable_bytes():
    assert printable("a\udcffb\x1b\n") == "a\\xffb\x1b\n"
