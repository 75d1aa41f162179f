"""Source-side rules: the code under test reaching into the runner or the oracle.

Read: each Python file the change adds or modifies outside the scoring tree
that is no test module or conftest (those get the whole test reading), with the
standard library's ast; nothing is imported or run. Names resolve through the
file's imports, as in the test reading. A mark is new when the base's file (at
the same path) held fewer of its key. What is looked for, a short list that
honest production code almost never holds:

- a process exit at import (sys.exit, os._exit, ... at module level, outside
  ``if __name__ == "__main__":``) or one registered with ``atexit``:
  process-exit;
- an import of pytest, _pytest or pluggy, or of unittest's internals (any
  unittest module but unittest.mock): source-reaches-runner;
- a walk of the call stack (sys._getframe, inspect.stack, inspect.currentframe,
  traceback.extract_stack, ...) or PYTEST_CURRENT_TEST named:
  source-reaches-runner;
- an assignment to, or setattr() on, an attribute of a standard-library module
  (``json.loads = ...``, ``builtins.open = ...``): oracle-patched;
- a string naming a path the contract protects, or a path in the scoring tree
  (``open("tests/expected.json")``): oracle-read;
- an ``__eq__`` or ``__ne__`` whose body returns a constant True or False
  (after an optional docstring), as a def or a lambda: constant-equality.

Not read: files inside the scoring tree or test modules (judged as tests), and
what only running could tell (a path built at run time, an alias in a variable).
"""

from __future__ import annotations

import ast
from typing import Callable, List, Optional

from oracle_guard.checks.test_tamper.marks import Mark
from oracle_guard.checks.test_tamper.names import EXITS, OracleOf
from oracle_guard.checks.test_tamper.resolve import Resolver
from oracle_guard.checks.test_tamper.stdlib import STDLIB_MODULES
from oracle_guard.checks.test_tamper.syntax import is_main_guard, show

RUNNERS = ("pytest", "_pytest", "pluggy")
STACK_WALKS = {
    "sys._getframe",
    "sys._current_frames",
    "inspect.stack",
    "inspect.currentframe",
    "inspect.getouterframes",
    "inspect.trace",
    "traceback.extract_stack",
    "traceback.walk_stack",
    "traceback.format_stack",
    "traceback.print_stack",
}


def marks(
    data: bytes, package: str, oracle_of: OracleOf, protected: Callable[[str], Optional[str]]
) -> List[Mark]:
    """The source-side marks of one file. ``protected`` answers, for a path a
    string names, the contract's pattern (or the scoring tree's) it matches."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []  # code that does not parse cannot run either: the suite fails on it
    reader = Resolver(package, False, oracle_of, conftest=False)
    reader.bind(tree)
    found: List[Mark] = []

    def add(rule: str, node: ast.AST, subject: str, message: str) -> None:
        found.append(Mark(rule, getattr(node, "lineno", 1), subject, "", message))

    for top in _module_level(tree.body):
        for call in (n for n in ast.walk(top) if isinstance(n, ast.Call)):
            if _in_function(call, top):
                continue
            func = reader.dotted(call.func)
            if func in EXITS:
                add(
                    "process-exit",
                    call,
                    f"exit at import {func}",
                    f"calls {func} at import: importing the code under test ends the run with "
                    "its status, not the tests'",
                )
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = reader.dotted(node.func)
            if func == "atexit.register" and node.args:
                handler = node.args[0]
                exits = [reader.dotted(n) for n in ast.walk(handler)]
                if any(name in EXITS for name in exits if name):
                    add(
                        "process-exit",
                        node,
                        "atexit exit",
                        "registers an exit with atexit: the run would end with its status, not "
                        "the tests'",
                    )
            elif func in STACK_WALKS:
                add(
                    "source-reaches-runner",
                    node,
                    f"stack {func}",
                    f"calls {func}: code under test that reads its callers can tell a test from "
                    "a real run",
                )
            elif func in ("setattr", "builtins.setattr") and len(node.args) >= 2:
                owner = reader.dotted(node.args[0])
                if _stdlib_module(owner, reader):
                    add(
                        "oracle-patched",
                        node,
                        f"setattr {owner}",
                        f"setattr() on {owner}: it replaces the standard library's {owner} for "
                        "every module, the oracle's too",
                    )
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if not node.level
                else []
            )
            for module in modules:
                first, _, rest = module.partition(".")
                runner = first in RUNNERS or (first == "unittest" and rest not in ("", "mock"))
                if runner:
                    add(
                        "source-reaches-runner",
                        node,
                        f"import {module}",
                        f"imports {module}: code under test that reaches the test runner can "
                        "change how its tests run or score",
                    )
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Attribute):
                    owner = reader.dotted(target.value)
                    if _stdlib_module(owner, reader):
                        add(
                            "oracle-patched",
                            node,
                            f"assigns {owner}.{target.attr}",
                            f"assigns {owner}.{target.attr}: it replaces the standard library's "
                            f"{target.attr} for every module, the oracle's too",
                        )
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            if text == "PYTEST_CURRENT_TEST":
                add(
                    "source-reaches-runner",
                    node,
                    "PYTEST_CURRENT_TEST",
                    "names PYTEST_CURRENT_TEST: code under test that reads it can tell a test "
                    "from a real run",
                )
            elif _path_like(text):
                pattern = protected(text.lstrip("./"))
                if pattern is not None:
                    add(
                        "oracle-read",
                        node,
                        f"reads {text}",
                        f"names {text!r}, which {pattern}: code under test that reads the oracle "
                        "or the tests can answer them instead of computing",
                    )
        elif isinstance(node, ast.ClassDef):
            for member in node.body:
                constant = _constant_equality(member)
                if constant is not None:
                    name, value = constant
                    add(
                        "constant-equality",
                        member,
                        f"{node.name}.{name} {value}",
                        f"{node.name}.{name} returns {value} whatever it is compared with: an "
                        "assertion of equality on it passes without checking anything",
                    )
    return found


def _module_level(body: List[ast.stmt]) -> List[ast.AST]:
    """The statements that run at import: module level, through if/try/with
    blocks, but not under ``if __name__ == "__main__":``."""
    out: List[ast.AST] = []
    for node in body:
        if isinstance(node, ast.If) and is_main_guard(node.test):
            out += _module_level(node.orelse)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out += [*node.decorator_list, *node.args.defaults]
        elif isinstance(node, ast.ClassDef):
            out += _module_level(node.body)  # a class body runs at import
        else:
            out.append(node)
    return out


def _in_function(call: ast.AST, top: ast.AST) -> bool:
    """Is ``call`` inside a lambda or a def within ``top``?"""
    for node in ast.walk(top):
        if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)):
            if node is not top and any(inner is call for inner in ast.walk(node)):
                return True
    return False


def _stdlib_module(owner: Optional[str], reader: Resolver) -> bool:
    """Is ``owner`` a standard-library module itself (json, os.path, builtins),
    which the file imported? Its objects' attributes (sys.stdout.x, a class's
    methods) are not the module's readers."""
    if owner is None or owner.split(".")[0] not in STDLIB_MODULES | {"builtins"}:
        return False
    return owner == "builtins" or owner in reader.modules


def _path_like(text: str) -> bool:
    return 0 < len(text) < 300 and "/" in text and "\n" not in text and " " not in text


def _constant_equality(member: ast.stmt) -> Optional[tuple]:
    if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
        if member.name not in ("__eq__", "__ne__"):
            return None
        body = member.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring
        if len(body) == 1 and isinstance(body[0], ast.Return):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, bool):
                return member.name, show(value)
        return None
    if isinstance(member, ast.Assign) and isinstance(member.value, ast.Lambda):
        names = [t.id for t in member.targets if isinstance(t, ast.Name)]
        value = member.value.body
        equality = [n for n in names if n in ("__eq__", "__ne__")]
        if equality and isinstance(value, ast.Constant) and isinstance(value.value, bool):
            return equality[0], show(value)
    return None
