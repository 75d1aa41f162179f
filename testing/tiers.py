"""The unit tier: the tests of the inner loop (``pytest -m unit -n 2``).

Every test is ``unit`` unless it is slow for one of the reasons written here:
its folder is a slow tier (``SLOW_FOLDERS``), its file is slow as a whole
(``SLOW_FILES``), or the test carries ``@pytest.mark.slow("why")``. The marker
is assigned at collection (``tests/conftest.py``), so no file moves.

A unit test that starts a slow program (``SLOW_PROGRAMS``: pre-commit, prek,
mkdocs, twine, ruff, mypy, pip, a pytest in the pytest, a server) fails: the
audit hook ``refuse_slow_programs`` stops the program before it starts and says
to mark the test slow. ``tests/unit_tier_test.py`` holds the rule.
"""

from __future__ import annotations

import os
import sys
from pathlib import PurePosixPath
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

UNIT = "unit"
SLOW = "slow"

# folder (relative to the checkout, with its slash): why none of its tests is unit
SLOW_FOLDERS: Dict[str, str] = {
    "tests/e2e/": "end to end: real repositories, pre-commit and prek runs, pushes, git daemon",
    "tests/adversarial/": "the attack catalogue in every context, property tests",
    "tests/conformance/": "the public suites through the loaders",
    "tests/hosts/": "sshd, gitolite and lighttpd on 127.0.0.1",
}

# file: why none of its tests is unit
SLOW_FILES: Dict[str, str] = {
    "tests/docs_test.py": "mkdocs build --strict, and every console session of the site run",
    "tests/release_test.py": "builds the sdist and the wheel, and runs twine check",
    "tests/lint_test.py": "ruff and mypy over the whole tree",
    "tests/build_info_test.py": "builds wheels with pip",
    "tests/prerequisites_test.py": "runs pytest in the pytest, with and without xdist",
    "tests/pack_test.py": "repacks repositories of large fixtures, one per test",
    "tests/generated_validators_test.py": "property tests of hundreds to thousands of examples",
    "tests/adding_a_check_test.py": "a copy of the checkout with a venv of its own, and a pytest in it",
}

# program names (the basename of argv[0], or the module of ``python -m``) a unit
# test may not start, each with why it is slow
SLOW_PROGRAMS: Dict[str, str] = {
    "pre-commit": "installs and runs hook environments",
    "pre_commit": "installs and runs hook environments",
    "prek": "installs and runs hook environments",
    "mkdocs": "builds the site",
    "twine": "checks built distributions",
    "ruff": "lints the tree",
    "mypy": "type-checks the tree",
    "pip": "installs packages",
    "build": "builds distributions",
    "venv": "makes a virtual environment",
    "pytest": "a whole pytest run in the pytest",
    "git-daemon": "a server",
    "sshd": "a server",
    "lighttpd": "a server",
}

# git subcommands a unit test may not run
SLOW_GIT: Dict[str, str] = {
    "daemon": "a server",
}

# git's options that take their value as the next argument
_GIT_VALUED = {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"}


def slow_reason(path: str, slow_marks: Sequence[Tuple[Any, ...]]) -> Optional[str]:
    """Why the test in ``path`` (relative to the checkout, with slashes) with
    these ``slow`` marks' arguments is not unit; None when it is."""
    for folder, why in SLOW_FOLDERS.items():
        if path.startswith(folder):
            return f"{folder}: {why}"
    if path in SLOW_FILES:
        return f"{path}: {SLOW_FILES[path]}"
    for args in slow_marks:
        if len(args) != 1 or not isinstance(args[0], str) or not args[0].strip():
            raise ValueError(
                f'{path}: slow takes one reason: @pytest.mark.slow("why"), not {args!r}'
            )
        return args[0]
    return None


def _program(word: str) -> str:
    return PurePosixPath(word).name


def slow_program(args: Any) -> Optional[str]:
    """The slow program ``args`` (a Popen argument list or string) would start,
    with why, or None."""
    if isinstance(args, (str, bytes, os.PathLike)):
        words = [os.fsdecode(args)] if not isinstance(args, str) else args.split()
    else:
        words = [os.fsdecode(word) for word in args]
    if not words:
        return None
    name = _program(words[0])
    if name.startswith("python") or words[0] == sys.executable:
        rest = words[1:]
        while rest and rest[0].startswith("-") and rest[0] not in ("-m", "-c"):
            rest = rest[2:] if rest[0] in ("-X", "-W") else rest[1:]
        if rest and rest[0] == "-c":
            return None  # a program of its own, not read here
        if len(rest) >= 2 and rest[0] == "-m":
            name = rest[1].split(".")[0]
        elif rest:
            name = _program(rest[0])
    if name in SLOW_PROGRAMS:
        return f"{name}: {SLOW_PROGRAMS[name]}"
    if name == "git":
        sub = _git_subcommand(words[1:])
        if sub in SLOW_GIT:
            return f"git {sub}: {SLOW_GIT[sub]}"
    return None


def _git_subcommand(words: Iterable[str]) -> Optional[str]:
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in _GIT_VALUED:
            skip = True
        elif not word.startswith("-"):
            return word
    return None


class SlowProgram(RuntimeError):
    """A unit test started a slow program."""


_guarded: Dict[str, Optional[str]] = {"test": None}


def guard(nodeid: Optional[str]) -> None:
    """From now on, refuse slow programs on behalf of the unit test ``nodeid``
    (None: refuse nothing)."""
    _guarded["test"] = nodeid


def _audit(event: str, args: Tuple[Any, ...]) -> None:
    if event != "subprocess.Popen" or _guarded["test"] is None:
        return
    why = slow_program(args[1] if args[1] is not None else args[0])
    if why is not None:
        raise SlowProgram(
            f"{_guarded['test']} is a unit test and starts {why}: "
            '@pytest.mark.slow("why") it, or make it cheaper (testing/tiers.py)'
        )


_installed: Dict[str, bool] = {"hook": False}


def refuse_slow_programs() -> None:
    """Install the audit hook once per process (an audit hook cannot be removed;
    ``guard`` turns it on and off)."""
    if not _installed["hook"]:
        sys.addaudithook(_audit)
        _installed["hook"] = True


REAL_PUSH = "a real push to a bare repository, judged by the hook it runs"


def contexts(names: Sequence[str]) -> List[Any]:
    """The contexts a test is parametrized over, its real push (``push``) marked
    slow: the unit tier judges the same change in the others."""
    import pytest

    return [
        pytest.param(name, marks=pytest.mark.slow(REAL_PUSH)) if name == "push" else name
        for name in names
    ]
