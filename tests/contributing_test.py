"""CONTRIBUTING.md and the dependencies page stay true to the tree: every path
CONTRIBUTING names exists, and every package setup.cfg installs is named where
the docs explain it."""

from __future__ import annotations

import configparser
import re
from pathlib import Path
from typing import List

import pytest

from testing import conformance

ROOT = Path(__file__).resolve().parent.parent
# files a user's repository holds, not this one
USERS_FILES = {".pre-commit-config.yaml"}
DATA_FOLDERS = {entry.split("/")[0] for entry in conformance.ENTRIES}
PATH_LIKE = re.compile(r"[\w.\-/]+")
SUFFIXES = (".py", ".yml", ".yaml", ".md", ".toml", ".cfg", ".json", ".txt")


def named_paths(markdown: str) -> List[str]:
    """The code spans that name a file or folder of the tree: a path with a
    slash, or a file name; placeholders (<module>) are not paths."""
    spans = re.findall(r"`([^`\n]+)`", markdown)
    return sorted(
        {
            span
            for span in spans
            if PATH_LIKE.fullmatch(span) and ("/" in span or span.endswith(SUFFIXES))
        }
    )


def missing_paths(markdown: str) -> List[str]:
    # the layer map names modules by their place under hooks/; the conformance
    # data's table, its folders (testing/conformance.py)
    return [
        path
        for path in named_paths(markdown)
        if path not in USERS_FILES
        and not (ROOT / path).exists()
        and not (ROOT / "hooks" / path).exists()
        and path.split("/")[0] not in DATA_FOLDERS
    ]


def test_every_path_contributing_names_exists():
    assert missing_paths((ROOT / "CONTRIBUTING.md").read_text()) == []


def test_a_path_that_is_not_there_is_named():
    # the near-miss first: a real module, by its path and by its place under hooks/
    assert missing_paths("`hooks/judge.py` and `checks/registry.py`") == []
    text = "`checks/registry.py`, `checks/regsitry.py`, `tests/nothing/` and `<module>_test.py`"
    assert missing_paths(text) == ["checks/regsitry.py", "tests/nothing/"]


def requirement_names(value: str) -> List[str]:
    lines = [line.split("#", 1)[0].strip() for line in value.splitlines()]
    return [re.split(r"[<>=;\[ ]", line, maxsplit=1)[0] for line in lines if line]


def setup_cfg() -> configparser.ConfigParser:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    return config


def extra(name: str) -> List[str]:
    return requirement_names(setup_cfg()["options.extras_require"][name])


def test_contributing_lists_every_package_of_the_test_extra():
    text = (ROOT / "CONTRIBUTING.md").read_text()
    listed = text.split("The test extra (`setup.cfg`) holds:", 1)[1].split("\n## ", 1)[0]
    assert [name for name in extra("test") if name not in listed] == []


@pytest.mark.parametrize("name", ["install_requires", "test", "docs", "bench"])
def test_the_dependencies_page_names_every_package(name):
    text = (ROOT / "docs/explanation/dependencies.md").read_text()
    if name == "install_requires":
        packages = requirement_names(setup_cfg()["options"]["install_requires"])
        assert len(packages) == 6
    else:
        packages = extra(name)
        assert f"| `{name}` |" in text
    assert packages and [p for p in packages if p.lower() not in text.lower()] == []


def test_requirement_names_are_read_out_of_setup_cfgs_syntax():
    assert requirement_names(
        "\n  pytest>=7\n  # a comment\n  tomli>=1.1; python_version < '3.11'\n"
    ) == ["pytest", "tomli"]
    assert "zizmor" in extra("test") and "pytest-xdist" in extra("test")
