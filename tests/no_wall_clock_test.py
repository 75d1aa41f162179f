"""No test asserts a wall-clock time: a loaded machine stretches every wall-clock
second, so such an assert fails for the machine, not for the code. Speed goals
are measured by benchmarks/; a test bounds CPU time (time.process_time,
resource.getrusage) or guards against a hang (testing.processes.wait_until).

The scan: in each function (and at module level) of tests/ and testing/, a
name bound from a wall-clock reading, or from a name so bound, is tainted; an
``assert`` that reads a wall clock or a tainted name fails this test."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator, List, Set, Union

import pytest

ROOT = Path(__file__).resolve().parent.parent
WALL_CLOCKS = {"time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns"}
DATETIME_NOW = {"now", "utcnow", "today"}

Scope = Union[ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda]


def _clock_names(tree: ast.Module) -> Set[str]:
    """Names ``from time import monotonic`` (and the like) bind in this module."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "time":
            names.update(a.asname or a.name for a in node.names if a.name in WALL_CLOCKS)
    return names


def _reads_wall_clock(node: ast.AST, clocks: Set[str]) -> bool:
    for sub in ast.walk(node):
        if not isinstance(sub, ast.Call):
            continue
        func = sub.func
        if isinstance(func, ast.Name) and func.id in clocks:
            return True
        if isinstance(func, ast.Attribute):
            owner = func.value
            if func.attr in WALL_CLOCKS and isinstance(owner, ast.Name) and owner.id == "time":
                return True
            if func.attr in DATETIME_NOW and (
                (isinstance(owner, ast.Name) and owner.id in ("datetime", "date"))
                or (isinstance(owner, ast.Attribute) and owner.attr in ("datetime", "date"))
            ):
                return True
    return False


def _own_nodes(scope: Scope) -> Iterator[ast.AST]:
    """The nodes of ``scope`` outside the functions nested in it."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


def _bound_names(target: ast.AST) -> Set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _bindings(scope: Scope):
    """(names bound, the expression they are bound from) for each assignment."""
    for node in _own_nodes(scope):
        if isinstance(node, ast.Assign):
            names = set().union(*(_bound_names(t) for t in node.targets))
            yield names, node.value
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            yield _bound_names(node.target), node.value
        elif isinstance(node, ast.NamedExpr):
            yield {node.target.id}, node.value


TRANSPARENT = {"abs", "min", "max", "round", "float", "int", "sum", "divmod"}


def _carries(node: ast.AST, tainted: Set[str]) -> bool:
    """Whether the value of ``node`` is a tainted name's, through arithmetic,
    comparisons, attributes and the builtins that keep a number a number; not
    through another call's arguments (``run(stamp)`` is what run returns)."""
    if isinstance(node, ast.Name):
        return node.id in tainted
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name) and func.id in TRANSPARENT:
            return any(_carries(a, tainted) for a in node.args)
        return isinstance(func, ast.Attribute) and _carries(func.value, tainted)
    if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    return any(_carries(child, tainted) for child in ast.iter_child_nodes(node))


def _tainted(scope: Scope, clocks: Set[str]) -> Set[str]:
    tainted: Set[str] = set()
    while True:
        grown = set(tainted)
        for names, value in _bindings(scope):
            if _reads_wall_clock(value, clocks) or _carries(value, tainted):
                grown |= names
        if grown == tainted:
            return tainted
        tainted = grown


# Asserts on the wall clock that no load can fail: the order of two readings.
ORDERED_READINGS = {
    # the fallback to the system clock: a reading between two others
    "tests/clock_test.py:test_system_clock_in_utc_when_neither",
}


def wall_clock_asserts(source: str, filename: str = "<test>") -> List[str]:
    """``FILE:LINE`` of each assert on a wall-clock time in ``source``."""
    tree = ast.parse(source, filename)
    clocks = _clock_names(tree)
    found = []
    scopes = [tree] + [
        n
        for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
    ]
    for scope in scopes:
        if f"{filename}:{getattr(scope, 'name', '')}" in ORDERED_READINGS:
            continue
        tainted = _tainted(scope, clocks)
        for node in _own_nodes(scope):
            if isinstance(node, ast.Assert) and (
                _reads_wall_clock(node.test, clocks) or _carries(node.test, tainted)
            ):
                found.append(f"{filename}:{node.lineno}")
    return sorted(found)


def suite_files() -> List[Path]:
    return sorted((ROOT / "tests").rglob("*.py")) + sorted((ROOT / "testing").rglob("*.py"))


def test_no_test_asserts_a_wall_clock_time():
    found = []
    for path in suite_files():
        found += wall_clock_asserts(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert found == [], "assert CPU time (time.process_time, resource.getrusage) instead"


# -- the scan can fail ---------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        # the forms this suite once had
        "import time\n"
        "def test_x():\n"
        "    started = time.monotonic()\n"
        "    work()\n"
        "    assert time.monotonic() - started < 2.0\n",
        "import time\n"
        "def test_x():\n"
        "    start = time.monotonic()\n"
        "    work()\n"
        "    elapsed = time.monotonic() - start\n"
        "    assert elapsed < 20, elapsed\n",
        "import time\n"
        "def test_x():\n"
        "    deadline = time.monotonic() + 10\n"
        "    while not ready():\n"
        "        assert time.monotonic() < deadline\n",
        # through a second name, a walrus, an imported name, datetime
        "import time\n"
        "def test_x():\n"
        "    t0 = time.perf_counter()\n"
        "    t1 = t0 + 1\n"
        "    took = t1 - t0\n"
        "    assert took < 1\n",
        "import time\ndef test_x():\n    assert (t := time.time()) > 0 and t < 5\n",
        "from time import perf_counter as clock\n"
        "def test_x():\n"
        "    s = clock()\n"
        "    assert clock() - s < 5\n",
        "import datetime\n"
        "def test_x():\n"
        "    s = datetime.datetime.now()\n"
        "    assert (datetime.datetime.now() - s).total_seconds() < 5\n",
    ],
)
def test_the_scan_finds_an_assert_on_a_wall_clock_time(source):
    assert wall_clock_asserts(source) != []


@pytest.mark.parametrize(
    "source",
    [
        # the near misses: CPU time, a hang guard that raises, a clock read never asserted
        "import time\n"
        "def test_x():\n"
        "    started = time.process_time()\n"
        "    work()\n"
        "    assert time.process_time() - started < 2.0\n",
        "import time\n"
        "def wait(ready):\n"
        "    deadline = time.monotonic() + 120\n"
        "    while not ready():\n"
        "        if time.monotonic() > deadline:\n"
        "            raise AssertionError('hung')\n",
        "import time\n"
        "def test_x():\n"
        "    stamp = time.strftime('%Y', time.gmtime(time.time() + 6))\n"
        "    rc = run(stamp)\n"
        "    assert rc == 0\n",
        "import time\n"
        "def test_x():\n"
        "    started = time.monotonic()\n"
        "    def inner():\n"
        "        started = 1\n"
        "        assert started == 1\n",
    ],
)
def test_the_scan_passes_what_asserts_no_wall_clock_time(source):
    assert wall_clock_asserts(source) == []
