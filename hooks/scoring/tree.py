"""The tree a score runs: the candidate's files, with every file of the oracle's
tests taken from the target, written into a scratch folder from git objects.

What the target decides: the files ``score.tests`` matches, every ``conftest.py``
and pytest configuration file in a folder on their way (present or absent as at
the target), and nothing else. Compiled files, and installed-package metadata
the target does not hold byte for byte, are left out: either could stand in for
source the run is meant to read."""

from __future__ import annotations

import os
import stat
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Set

from oracle_guard.errors import OracleGuardError
from oracle_guard.git.objects import Entry
from oracle_guard.git.plumbing import Git
from oracle_guard.parsing.patterns import PatternSet
from oracle_guard.snapshot import Snapshot

# the files pytest reads its configuration from, in the order it looks for them
CONFIG_FILES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
Reader = Callable[[str], bytes]  # a path's content
PYTHON_TEST_FILE = ("test_", "_test.py")


class ScoreTreeError(OracleGuardError):
    """The score cannot build its tree (exit 2)."""


class ScoredTree(NamedTuple):
    files: Dict[str, Entry]  # what the oracle session runs
    oracle: Set[str]  # the paths the target decides, present or not
    added_tests: Dict[str, Entry]  # test files only the candidate has
    dropped: List[str]  # candidate files left out (compiled, package metadata)
    arguments: List[str]  # the folders (or files) pytest is given
    config: Optional[str]  # the configuration file pytest would read, or None


def folders_on_the_way(paths: Sequence[str]) -> Set[str]:
    """Every folder holding one of ``paths``, and each folder above it ("" is the root)."""
    found = {""}
    for path in paths:
        parts = path.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            found.add("/".join(parts[:depth]))
    return found


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _left_out(path: str) -> bool:
    parts = path.split("/")
    return (
        "__pycache__" in parts
        or path.endswith((".pyc", ".pyo"))
        or any(part.endswith((".dist-info", ".egg-info")) for part in parts[:-1])
    )


def arguments_of(patterns: Sequence[str], files: Sequence[str]) -> List[str]:
    """What pytest is given: each pattern's folder before its first wildcard, so
    pytest collects as it would from there; a pattern that names a file, the file."""
    out: List[str] = []
    for pattern in patterns:
        literal = pattern.lstrip("/")
        cut = min((literal.find(c) for c in "*?[" if c in literal), default=-1)
        if cut == -1:
            target = literal
        else:
            target = literal[:cut].rsplit("/", 1)[0] if "/" in literal[:cut] else ""
        target = target.rstrip("/") or "."
        if target == "." or any(f == target or f.startswith(target + "/") for f in files):
            if target not in out:
                out.append(target)
    return out or ["."]


def build(
    target: Snapshot,
    candidate: Snapshot,
    tests: Sequence[str],
    read: Optional[Reader] = None,
) -> ScoredTree:
    """The scored tree of ``candidate`` under ``target``'s oracle (``tests``: the
    contract's score.tests patterns, read from the target)."""
    patterns = PatternSet(tests)
    target_tests = target.select(patterns)
    if not target_tests:
        raise ScoreTreeError(
            f"score.tests ({', '.join(tests)}) matches no file in {target.label}: "
            "there is nothing to score"
        )
    folders = folders_on_the_way(target_tests)
    oracle = set(target_tests)
    for folder in folders:
        oracle.add(_join(folder, "conftest.py"))
        for name in CONFIG_FILES:
            oracle.add(_join(folder, name))
    arguments = arguments_of(tests, target_tests)

    def collected_from(path: str) -> bool:  # pytest walks the argument folders
        return any(a == "." or path == a or path.startswith(a + "/") for a in arguments)

    # every conftest pytest could load while it walks them is the target's
    for snapshot in (target, candidate):
        oracle.update(
            p
            for p in snapshot.entries
            if p.rsplit("/", 1)[-1] == "conftest.py" and collected_from(p)
        )
    files: Dict[str, Entry] = {}
    added: Dict[str, Entry] = {}
    dropped: List[str] = []
    for path, entry in candidate.entries.items():
        if path in oracle or entry.mode == "160000":
            continue
        name = path.rsplit("/", 1)[-1]
        test_like = name.endswith(".py") and (
            name.startswith(PYTHON_TEST_FILE[0]) or name.endswith(PYTHON_TEST_FILE[1])
        )
        if patterns.matches(path) or (
            test_like and collected_from(path) and path not in target.entries
        ):
            if test_like:  # a test only the candidate has: a session of its own
                added[path] = entry
            continue  # the target's folder of tests holds only the target's files
        if _left_out(path) and target.entry(path) != entry:
            dropped.append(path)
            continue
        files[path] = entry
    for path in sorted(oracle):
        at_target = target.entry(path)
        if at_target is not None and at_target.mode != "160000":
            files[path] = at_target
    # a candidate file where the target has a folder: the folder wins
    shadowing = folders_on_the_way(list(files)) - {""}
    for path in [p for p in files if p in shadowing]:
        del files[path]
        dropped.append(path)
    return ScoredTree(files, oracle, added, sorted(dropped), arguments, None)


def config_file(files: Dict[str, Entry], arguments: Sequence[str], read: Reader) -> Optional[str]:
    """The configuration file pytest would pick for ``arguments`` (its locate_config:
    from their common folder upward, the first file with a pytest section)."""
    common = os.path.commonpath([a if a != "." else "" for a in arguments] or [""])
    if common and (common in files):  # a file argument: start at its folder
        common = common.rsplit("/", 1)[0] if "/" in common else ""
    folder: Optional[str] = common
    while folder is not None:
        for name in CONFIG_FILES:
            path = _join(folder, name)
            if path in files and files[path].is_regular and _has_pytest_section(name, read(path)):
                return path
        folder = (folder.rsplit("/", 1)[0] if "/" in folder else "") if folder else None
    return None


def _has_pytest_section(name: str, data: bytes) -> bool:
    if name in ("pytest.ini", ".pytest.ini"):
        return True
    text = data.decode("utf-8", "replace")
    if name == "pyproject.toml":
        # deferred: under 1 ms to import, only for _has_pytest_section()
        from oracle_guard.parsing.toml_reader import load_toml

        try:
            table = load_toml(data)
        except ValueError:  # pytest fails on it too; the run says so
            return True
        tool = table.get("tool")
        return isinstance(tool, dict) and isinstance(tool.get("pytest"), dict)
    header = "[pytest]" if name == "tox.ini" else "[tool:pytest]"
    return any(line.strip() == header for line in text.splitlines())


def write(folder: str, files: Dict[str, Entry], read: Reader) -> None:
    """Write ``files`` under ``folder`` (which is new and empty): regular files with
    their executable bit, symlinks as git stores them. No path is a folder of
    another (build leaves none), so nothing is written through a link."""
    os.makedirs(folder, exist_ok=True)
    made: Set[str] = {""}
    for path in sorted(files):
        entry = files[path]
        parts = path.split("/")
        if any(part in ("", ".", "..", ".git") for part in parts):
            raise ScoreTreeError(f"{path!r} is not a path a score writes")
        parent = "/".join(parts[:-1])
        if parent not in made:
            os.makedirs(os.path.join(folder, parent), exist_ok=True)
            made.update(folders_on_the_way([path]))
        full = os.path.join(folder, path)
        data = read(path)
        if entry.mode == "120000":
            os.symlink(os.fsdecode(data), full)
            continue
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        mode = 0o755 if entry.mode == "100755" else 0o644
        descriptor = os.open(full, flags, mode)
        with os.fdopen(descriptor, "wb") as out:
            out.write(data)
        if entry.mode == "100755":
            os.chmod(full, os.stat(full).st_mode | stat.S_IXUSR)


def blob_reader(git: Git, entries: Dict[str, Entry]) -> Reader:
    """read(path) of ``entries`` by blob id, through the open cat-file batch."""

    def read(path: str) -> bytes:
        return git.read_blob(entries[path].oid)

    return read
