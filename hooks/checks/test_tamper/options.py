"""pytest's configuration files: the runner options a change sets or drops."""

from __future__ import annotations

from typing import List, Optional

from oracle_guard.checks.test_tamper.marks import Mark

# The files pytest reads its options from, by name, wherever they are: a
# pytest.ini in tests/ is the configuration of `pytest tests/`.
CONFIG_NAMES = (
    "pytest.ini",
    ".pytest.ini",
    "pytest.toml",
    ".pytest.toml",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
)


def is_config(path: str) -> bool:
    return path.rpartition("/")[2] in CONFIG_NAMES


def changed_options(path: str, before: Optional[bytes], after: bytes) -> List[Mark]:
    """The runner options ``after`` sets, changes or drops compared with
    ``before`` (None: the file is new), as marks of rule runner-options (or
    test-unparsable when ``after`` does not load)."""
    raise NotImplementedError("being written")
