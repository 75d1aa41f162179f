"""tamper.frozen_tests: existing tests are oracle, and only new ones may be added.

In each Python file the base holds under the contract's ``frozen_tests``
patterns, every module-level statement that binds a name (a test, a helper, a
fixture, a constant, an import) and every method of a class is a unit, named by
its qualified name. The base's units must be at the candidate with the same
code and decorators: compared on the standard library's ast dumped without
positions, so formatting, comments and blank lines do not count. So must the
fixtures those tests request (by argument or ``usefixtures``) from conftest.py
files at or above their folder, and those conftests' autouse fixtures.

A unit whose name is gone from its file is ``test-removed``, unless the same
code is in another file of the change under the same name (a move); one whose
code differs is ``test-changed``. A file that does not parse at the base has no
units; one that does not parse at the candidate has lost them all. Only files
the change touches are read, and conftests when a frozen file's tests may
request from them."""

from __future__ import annotations

import ast
import copy
from typing import Dict, Iterator, List, Optional, Set, Tuple

from oracle_guard.checks.test_tamper.marks import Mark
from oracle_guard.git.objects import BlobTooLarge
from oracle_guard.parsing.patterns import PatternSet
from oracle_guard.snapshot import Snapshot, changes

# qualified name -> (kind, line, normalized code)
Units = Dict[str, Tuple[str, int, str]]


def marks(
    patterns: PatternSet, base: Snapshot, candidate: Snapshot, limit: int
) -> List[Tuple[str, Mark]]:
    changed = [path for path, _, _ in changes(base, candidate)]
    frozen = [p for p in changed if p.endswith(".py") and patterns.matches(p)]
    conftests = [p for p in changed if _is_conftest(p)]
    if not frozen and not conftests:
        return []
    found: List[Tuple[str, Mark]] = []
    moved_here = _units_by_code(changed, candidate, limit)
    for path in frozen:
        before = _units(base, path, limit)
        if not before:
            continue
        after = _units(candidate, path, limit)
        found += [(path, m) for m in _compare(path, before, after, moved_here)]
    for path in conftests:
        if patterns.matches(path):
            continue  # a frozen conftest: judged whole above
        requested = _requested(path, base, patterns, limit)
        if requested is None:
            continue  # no frozen test at or below its folder
        before = {
            name: unit
            for name, unit in _units(base, path, limit).items()
            if name in requested or unit[0] == "autouse fixture"
        }
        if before:
            after = _units(candidate, path, limit)
            found += [(path, m) for m in _compare(path, before, after, moved_here)]
    return found


def _compare(
    path: str, before: Units, after: Units, moved_here: Set[Tuple[str, str]]
) -> Iterator[Mark]:
    for name, (kind, line, code) in before.items():
        now = after.get(name)
        if now is None:
            if (name, code) in moved_here:
                continue  # moved, unchanged, to another file of the change
            yield Mark(
                "test-removed",
                line,
                f"removed {name}",
                "",
                f"the {kind} {name} is gone: an existing test is oracle (tamper.frozen_tests); "
                "add a new test instead",
            )
        elif now[2] != code:
            yield Mark(
                "test-changed",
                now[1],
                f"changed {name}",
                "",
                f"the {kind} {name} is changed: an existing test is oracle "
                "(tamper.frozen_tests); add a new test instead",
            )


def _units(snapshot: Snapshot, path: str, limit: int) -> Units:
    entry = snapshot.entry(path)
    if entry is None or not entry.is_regular:
        return {}
    try:
        tree = ast.parse(snapshot.read(path, limit))
    except (BlobTooLarge, SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    out: Units = {}
    for node in tree.body:
        for name, kind, unit in _named(node):
            out[name] = (kind, getattr(unit, "lineno", 1), ast.dump(unit))
    return out


def _named(node: ast.stmt) -> Iterator[Tuple[str, str, ast.AST]]:
    """(qualified name, kind, node) of what a module-level statement binds."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        yield node.name, _function_kind(node), node
    elif isinstance(node, ast.ClassDef):
        methods = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        rest = copy.copy(node)  # its bases, decorators and attributes, not its methods
        rest.body = [n for n in node.body if n not in methods]
        yield node.name, "class", rest
        for method in methods:
            yield f"{node.name}.{method.name}", _function_kind(method), method
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        for alias in node.names:
            bound = alias.asname or alias.name.split(".")[0]
            single = copy.copy(node)  # one bound name a unit
            single.names = [alias]
            yield bound, "import", single
    elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    yield name.id, "helper", node


def _function_kind(node: ast.AST) -> str:
    name = getattr(node, "name", "")
    for decorator in getattr(node, "decorator_list", []):
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        spelled = ast.unparse(target)
        if spelled.endswith("fixture"):
            autouse = isinstance(decorator, ast.Call) and any(
                k.arg == "autouse" and isinstance(k.value, ast.Constant) and k.value.value
                for k in decorator.keywords
            )
            return "autouse fixture" if autouse else "fixture"
    return "test" if name.startswith("test") else "helper"


def _is_conftest(path: str) -> bool:
    return path.rpartition("/")[2].lower() == "conftest.py"


def _requested(
    conftest: str, base: Snapshot, patterns: PatternSet, limit: int
) -> Optional[Set[str]]:
    """The fixture names the base's frozen tests at or below the conftest's folder
    request (arguments, usefixtures); None when there is no such test."""
    folder = conftest.rpartition("/")[0]
    inside = [
        path
        for path in base.select(patterns)
        if path.endswith(".py") and (not folder or path.startswith(folder + "/"))
    ]
    if not inside:
        return None
    names: Set[str] = set()
    for path in inside:
        try:
            tree = ast.parse(base.read(path, limit))
        except (BlobTooLarge, SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                arguments = node.args
                names.update(a.arg for a in arguments.posonlyargs + arguments.args)
                names.update(a.arg for a in arguments.kwonlyargs)
            elif isinstance(node, ast.Call) and ast.unparse(node.func).endswith("usefixtures"):
                names.update(str(a.value) for a in node.args if isinstance(a, ast.Constant))
    return names


def _units_by_code(changed: List[str], candidate: Snapshot, limit: int) -> Set[Tuple[str, str]]:
    """(name, code) of every unit in the candidate's changed Python files: where a
    test moved to."""
    out: Set[Tuple[str, str]] = set()
    for path in changed:
        if path.endswith(".py"):
            out.update((name, unit[2]) for name, unit in _units(candidate, path, limit).items())
    return out
