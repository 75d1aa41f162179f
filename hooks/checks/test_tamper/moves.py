"""Tests moved between files of a change: the skips that moved with them."""

from __future__ import annotations

from collections import Counter
from typing import Callable, List, Optional, Tuple

from oracle_guard.checks.test_tamper.marks import Mark
from oracle_guard.git.plumbing import Entry
from oracle_guard.snapshot import Snapshot


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
