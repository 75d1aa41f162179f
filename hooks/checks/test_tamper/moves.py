"""Tests moved between files of a change: the skips that moved with them; and
the skips on tests the change itself adds."""

from __future__ import annotations

import ast
from collections import Counter
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Set, Tuple

from oracle_guard.checks.test_tamper.marks import Mark
from oracle_guard.git.objects import Entry
from oracle_guard.parsing.patterns import PatternSet
from oracle_guard.snapshot import Snapshot

MOVE_SIMILARITY = 0.5  # git's default rename threshold


def skips_moved_dropped(
    tests: List[Tuple[str, Mark]],
    changed: List[Tuple[str, Optional[Entry], Optional[Entry]]],
    base: Snapshot,
    candidate: Snapshot,
    is_test: Callable[[str], bool],
    marks_of: Callable[[Snapshot, str, Entry], List[Mark]],
) -> List[Tuple[str, Mark]]:
    """The test code's new marks, skip-added following tests moved between files:
    a skip that left another file of the change with its test (the same test
    name, marker and condition) moved with it, and is no finding."""
    if not any(mark.rule == "skip-added" for _, mark in tests):
        return tests
    left: Counter = Counter()  # skip keys that left a file of the change
    for path, before, after in changed:
        if before is None or not before.is_regular or not is_test(path):
            continue
        had = Counter(m.key for m in marks_of(base, path, before) if m.rule == "skip-added")
        if not had:
            continue
        now = after is not None and after.is_regular
        kept = Counter(
            m.key
            for m in (marks_of(candidate, path, after) if now else [])  # type: ignore[arg-type]
            if m.rule == "skip-added"
        )
        left.update(had - kept)
    out: List[Tuple[str, Mark]] = []
    for path, mark in tests:
        if mark.rule != "skip-added":
            out.append((path, mark))
            continue
        if left[mark.key] > 0:
            left[mark.key] -= 1
            continue  # moved with its test from another file of the change
        out.append((path, mark))
    return out


# -- skips on tests the change itself adds ---------------------------------------

TestsOf = Callable[[Snapshot, str, Entry], Optional[FrozenSet[str]]]


def skips_on_new_tests(
    tests: List[Tuple[str, Mark]],
    changed: List[Tuple[str, Optional[Entry], Optional[Entry]]],
    base: Snapshot,
    candidate: Snapshot,
    frozen: Optional[PatternSet],
    tests_of: TestsOf,
) -> List[Tuple[str, Mark]]:
    """The test code's new marks without the skips (and warnings filters) on tests
    the change adds, in a
    file ``tamper.frozen_tests`` does not cover: with the tests writable, the
    change could as well leave such a test out, and a skip on it hides no test
    the base ran. A test is new when its file's base does not define it and no
    file of the change lost it (a test moved, or renamed across files, is not)."""
    exempt = [
        (path, mark)
        for path, mark in tests
        if (mark.rule == "skip-added" or _test_filter(mark))
        and mark.scope
        and not is_conftest(path)
        and not (frozen is not None and frozen.matches(path))
    ]
    if not exempt:
        return tests
    lost: Set[str] = set()
    entries = {path: (before, after) for path, before, after in changed}
    for path, before, after in changed:
        if before is None or not before.is_regular or not path.endswith(".py"):
            continue
        had = tests_of(base, path, before)
        now = tests_of(candidate, path, after) if after is not None and after.is_regular else None
        if had is None or (after is not None and after.is_regular and now is None):
            return tests  # a file that does not parse: nothing is taken to be new
        lost |= had - (now or frozenset())
    dropped: Set[int] = set()
    for path, mark in exempt:
        before, after = entries[path]
        if after is None or not after.is_regular:
            continue
        defined = tests_of(candidate, path, after) or frozenset()
        had = tests_of(base, path, before) if before is not None and before.is_regular else None
        if before is not None and before.is_regular and had is None:
            continue
        test = test_of(mark.scope, defined)
        if test is not None and test not in (had or frozenset()) and test not in lost:
            dropped.add(id(mark))
    return [(path, mark) for path, mark in tests if id(mark) not in dropped]


def _test_filter(mark: Mark) -> bool:
    """A filterwarnings mark: on a test, it filters that test's warnings only."""
    return mark.rule == "runner-options" and mark.subject.startswith("pytest.mark.filterwarnings")


def is_conftest(path: str) -> bool:
    return path.rpartition("/")[2].lower() == "conftest.py"


def test_of(scope: str, defined: FrozenSet[str]) -> Optional[str]:
    """The test a mark's scope lies in (a test function, a test class, or a
    method of one), or None when it lies in no test (a helper, a fixture)."""
    parts = scope.split(".")
    if len(parts) > 1 and f"{parts[0]}.{parts[1]}" in defined:
        return f"{parts[0]}.{parts[1]}"
    return parts[0] if parts[0] in defined else None


def test_names(data: bytes) -> Optional[FrozenSet[str]]:
    """The tests a module defines by pytest's default names, as qualnames: test*
    functions, Test* classes (and classes with bases, as a TestCase is) and their
    test* methods. A fixture named test_* is none. None: it does not parse."""
    import ast  # cold: only a change that adds a skip

    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names: Set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name.startswith("test") and not _is_fixture(node):
                names.add(node.name)
        elif isinstance(node, ast.ClassDef) and (node.name.startswith("Test") or node.bases):
            names.add(node.name)
            for method in node.body:
                if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                if method.name.startswith("test") and not _is_fixture(method):
                    names.add(f"{node.name}.{method.name}")
    return frozenset(names)


def _is_fixture(node: Any) -> bool:

    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if ast.unparse(target).endswith("fixture"):
            return True
    return False


def moved_from(
    path: str,
    entry: Entry,
    gone: Dict[str, Entry],
    base: Snapshot,
    candidate: Snapshot,
    reader: Any,
) -> Tuple[str, Optional[Entry]]:
    """The deleted file a new one was moved from, as far as the diff tells: the
    same blob, else the most similar by lines (at least half, as git's rename
    detection), preferring one of the same name."""
    for old_path, old in gone.items():
        if old.oid == entry.oid:
            return old_path, old
    if not gone:
        return path, None
    new_text = reader.text(candidate, path, entry)
    if new_text is None:
        return path, None
    # deferred: difflib: under 1 ms to import, only for moved_from()
    import difflib

    name = path.rpartition("/")[2]
    best: Tuple[float, str, Optional[Entry]] = (0.0, path, None)
    new_lines = new_text.splitlines()
    for old_path, old in sorted(gone.items()):
        old_text = reader.text(base, old_path, old)
        if old_text is None:
            continue
        matcher = difflib.SequenceMatcher(None, old_text.splitlines(), new_lines, autojunk=False)
        if matcher.real_quick_ratio() < MOVE_SIMILARITY or matcher.quick_ratio() < MOVE_SIMILARITY:
            continue
        ratio = matcher.ratio() + (0.01 if old_path.rpartition("/")[2] == name else 0.0)
        if ratio >= MOVE_SIMILARITY and ratio > best[0]:
            best = (ratio, old_path, old)
    return best[1], best[2]
