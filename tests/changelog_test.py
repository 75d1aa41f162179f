"""CHANGELOG.md keeps Keep a Changelog 1.1.0's form, and its newest release is
the version the package says it is."""

from __future__ import annotations

import datetime
import re
from pathlib import Path
from typing import List, Optional, Tuple

import pytest

from oracle_guard import __version__

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")
RELEASE = re.compile(r"## \[(\d+)\.(\d+)\.(\d+)\] - (\d{4}-\d{2}-\d{2})")
LINK = re.compile(r"\[([^\]]+)\]: (https://\S+)")


def releases(text: str) -> List[Tuple[str, str]]:
    """(version, date) of each release heading, newest first."""
    return [
        (".".join(m.group(1, 2, 3)), m.group(4))
        for m in (RELEASE.fullmatch(line) for line in text.splitlines())
        if m
    ]


def problems(text: str) -> List[str]:
    """What keeps the text from Keep a Changelog's form, one line each."""
    found: List[str] = []
    lines = text.splitlines()
    if not lines or lines[0] != "# Changelog":
        found.append("the first line is not '# Changelog'")
    headings = [line for line in lines if line.startswith("## ")]
    if not headings or headings[0] != "## [Unreleased]":
        found.append("the first '##' heading is not '## [Unreleased]'")
    named: List[str] = ["Unreleased"] if "## [Unreleased]" in headings else []
    previous: Optional[Tuple[Tuple[int, ...], str]] = None
    for heading in headings[1:]:
        match = RELEASE.fullmatch(heading)
        if match is None:
            found.append(f"not a release heading: {heading!r}")
            continue
        version = tuple(int(part) for part in match.group(1, 2, 3))
        date = match.group(4)
        try:
            datetime.date.fromisoformat(date)
        except ValueError:
            found.append(f"not a date: {heading!r}")
        if previous is not None and not (version < previous[0] and date <= previous[1]):
            found.append(f"not older than the release above it: {heading!r}")
        previous = (version, date)
        named.append(".".join(map(str, version)))
    seen: List[str] = []
    for line in lines:
        if line.startswith("## "):
            seen = []
        elif line.startswith("### "):
            section = line[4:]
            if section not in SECTIONS:
                found.append(f"not a Keep a Changelog section: {line!r}")
            elif section in seen:
                found.append(f"a section twice in one release: {line!r}")
            seen.append(section)
    links = {m.group(1): m.group(2) for m in map(LINK.fullmatch, lines) if m}
    for name in named:
        if name not in links:
            found.append(f"no link reference for [{name}]")
    return found


def test_the_changelog_keeps_the_form():
    assert problems((ROOT / "CHANGELOG.md").read_text()) == []


def test_the_newest_release_is_the_package_version():
    text = (ROOT / "CHANGELOG.md").read_text()
    assert releases(text)[0] == (__version__, "2026-12-02")
    assert [version for version, _ in releases(text)] == ["0.2.0", "0.1.0"]


GOOD = """\
# Changelog

## [Unreleased]

## [1.1.0] - 2026-02-01

### Added

- a thing

### Fixed

- a bug

## [1.0.0] - 2026-01-01

### Added

- the start

[Unreleased]: https://example.com/compare/v1.1.0...HEAD
[1.1.0]: https://example.com/compare/v1.0.0...v1.1.0
[1.0.0]: https://example.com/releases/tag/v1.0.0
"""


def test_a_changelog_in_the_form_has_no_problems():
    # the near-miss the broken ones below are made from
    assert problems(GOOD) == []
    assert releases(GOOD) == [("1.1.0", "2026-02-01"), ("1.0.0", "2026-01-01")]


@pytest.mark.parametrize(
    "old, new, problem",
    [
        ("# Changelog\n", "# Changes\n", "the first line is not '# Changelog'"),
        ("## [Unreleased]\n\n", "", "the first '##' heading is not '## [Unreleased]'"),
        ("## [1.1.0] - 2026-02-01", "## 1.1.0 - 2026-02-01", "not a release heading: '## 1.1.0 - 2026-02-01'"),
        ("## [1.1.0] - 2026-02-01", "## [1.1.0] - 2026-02-31", "not a date: '## [1.1.0] - 2026-02-31'"),
        ("## [1.0.0] - 2026-01-01", "## [1.1.0] - 2026-01-01", "not older than the release above it: '## [1.1.0] - 2026-01-01'"),
        ("## [1.0.0] - 2026-01-01", "## [1.0.0] - 2026-03-01", "not older than the release above it: '## [1.0.0] - 2026-03-01'"),
        ("### Fixed", "### Fixes", "not a Keep a Changelog section: '### Fixes'"),
        ("### Fixed", "### Added", "a section twice in one release: '### Added'"),
        ("[1.0.0]: https://example.com/releases/tag/v1.0.0\n", "", "no link reference for [1.0.0]"),
    ],
)  # fmt: skip
def test_each_break_of_the_form_is_named(old, new, problem):
    assert old in GOOD
    assert problems(GOOD.replace(old, new, 1)) == [problem]
