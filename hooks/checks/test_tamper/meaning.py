"""A skip marker's condition by meaning, not by text.

In one file (``written``): names the file imports are written as what they
stand for (``WIN`` from ``click._compat`` is ``click._compat.WIN``), a constant
the module binds once is replaced by its value, other names are ``_``, and the
platform and version tests that say the same thing are one spelling:
``sys.platform == "win32"``, ``sys.platform.startswith("win")``,
``platform.system() == "Windows"`` and ``os.name == "nt"`` are all
``__windows__``; ``sys.version_info[:2] >= (3, 10)`` is ``sys.version_info >=
(3, 10)``. ast dumps the rest, so formatting, parentheses and quotes do not count.

Across files (``resolved``): a name from the project's own module (a file the
snapshot holds) is replaced by the value that module binds it to once, read the
same way, so that renaming ``PY310`` to ``PY_3_10_PLUS`` in ``attr._compat``
changes no condition. Only skip marks that look new are read this way."""

from __future__ import annotations

import ast
import copy
from typing import Dict, List, Optional

from oracle_guard.checks.test_tamper.marks import Mark, new_marks
from oracle_guard.git.objects import BlobTooLarge
from oracle_guard.snapshot import Snapshot

DEPTH = 3  # constants defined through constants, this deep

# (the test's left side, as written out) -> {the value compared with: its token}
_EQUALS: Dict[str, Dict[str, str]] = {
    "sys.platform": {"win32": "__windows__", "darwin": "__macos__", "linux": "__linux__"},
    "platform.system()": {"Windows": "__windows__", "Darwin": "__macos__", "Linux": "__linux__"},
    "os.name": {"nt": "__windows__"},
    "sys.implementation.name": {"pypy": "__pypy__", "cpython": "__cpython__"},
    "platform.python_implementation()": {"PyPy": "__pypy__", "CPython": "__cpython__"},
}
_PREFIXES = {"win": "__windows__", "darwin": "__macos__", "linux": "__linux__"}


def written(node: ast.expr, imports: Dict[str, str], constants: Dict[str, ast.expr]) -> str:
    return ast.unparse(_written(node, imports, constants, DEPTH))


def _written(
    node: ast.expr, imports: Dict[str, str], constants: Dict[str, ast.expr], depth: int
) -> ast.expr:
    copied = copy.deepcopy(node)

    class Names(ast.NodeTransformer):
        def visit_Name(self, name: ast.Name) -> ast.expr:
            if name.id in imports:
                return ast.Name(id=imports[name.id], ctx=ast.Load())
            if name.id in constants and depth > 0:
                value = _written(constants[name.id], imports, constants, depth - 1)
                if environmental(value):
                    return value
            return ast.Name(id="_", ctx=ast.Load())

    return canonical(Names().visit(copied))


_TOKENS = frozenset(["__windows__", "__macos__", "__linux__", "__pypy__", "__cpython__"])


def environmental(node: ast.expr) -> bool:
    """Does a value test only the platform or the interpreter (``sys``,
    ``platform``, ``os.name``)? Only such constants are read for their value: what
    else a module binds once (``shutil.which("x")``) may be bound otherwise before."""
    names = [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]
    return bool(names) and all(
        name in _TOKENS or name.split(".")[0] in ("sys", "platform") or name == "os.name"
        for name in names
    )


def canonical(node: ast.expr) -> ast.expr:
    """The platform and version tests in ``node`` in one spelling each."""

    class Tests(ast.NodeTransformer):
        def visit_Compare(self, test: ast.Compare) -> ast.expr:
            self.generic_visit(test)
            if len(test.ops) != 1:
                return test
            op, right = test.ops[0], test.comparators[0]
            left = ast.unparse(test.left)
            value = right.value if isinstance(right, ast.Constant) else None
            token = _EQUALS.get(left, {}).get(value) if isinstance(value, str) else None
            if token is not None and isinstance(op, (ast.Eq, ast.NotEq)):
                named = ast.Name(id=token, ctx=ast.Load())
                return named if isinstance(op, ast.Eq) else ast.UnaryOp(ast.Not(), named)
            # v[:n] >= t and v[:n] < t are v >= t and v < t for a tuple t no longer than n
            cut = test.left
            if (
                isinstance(op, (ast.GtE, ast.Lt))
                and isinstance(cut, ast.Subscript)
                and ast.unparse(cut.value) == "sys.version_info"
                and isinstance(cut.slice, ast.Slice)
                and cut.slice.lower is None
                and cut.slice.step is None
                and isinstance(cut.slice.upper, ast.Constant)
                and isinstance(cut.slice.upper.value, int)
                and isinstance(right, ast.Tuple)
                and len(right.elts) <= cut.slice.upper.value
            ):
                test.left = cut.value
            return test

        def visit_Call(self, call: ast.Call) -> ast.expr:
            self.generic_visit(call)
            func = call.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr == "startswith"
                and ast.unparse(func.value) == "sys.platform"
                and len(call.args) == 1
                and not call.keywords
                and isinstance(call.args[0], ast.Constant)
                and isinstance(call.args[0].value, str)
                and call.args[0].value in _PREFIXES
            ):
                return ast.Name(id=_PREFIXES[call.args[0].value], ctx=ast.Load())
            return call

    return Tests().visit(node)


# -- across files ----------------------------------------------------------------


class Modules:
    """The project's modules a snapshot holds, read for their constants."""

    def __init__(self, snapshot: Snapshot, limit: int) -> None:
        self.snapshot = snapshot
        self.limit = limit
        self._read: Dict[str, Optional[Dict[str, ast.expr]]] = {}
        self._imports: Dict[str, Dict[str, str]] = {}

    def constant(self, dotted: str) -> Optional[ast.expr]:
        module, _, name = dotted.rpartition(".")
        if not module:
            return None
        values = self._values(module)
        if values is None or name not in values:
            return None
        value = _written(values[name], self._imports[module], values, DEPTH)
        return value if environmental(value) else None

    def _values(self, module: str) -> Optional[Dict[str, ast.expr]]:
        if module in self._read:
            return self._read[module]
        self._read[module] = None
        stem = module.replace(".", "/")
        forms = [f"{stem}.py", f"{stem}/__init__.py"]
        path = next(
            (f for f in forms + [f"src/{f}" for f in forms] if self.snapshot.entry(f)), None
        )
        if path is None:
            return None
        try:
            tree = ast.parse(self.snapshot.read(path, self.limit))
        except (BlobTooLarge, SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
        self._imports[module] = imports_of(tree, package)
        self._read[module] = constants_of(tree)
        return self._read[module]


def imports_of(tree: ast.Module, package: str) -> Dict[str, str]:
    """The names a module's top-level imports bind, to what they stand for."""
    out: Dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                out[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom):
            parts = package.split(".") if package and node.level else []
            if node.level > 1:
                parts = parts[: max(0, len(parts) - (node.level - 1))]
            module = ".".join(parts + ([node.module] if node.module else []))
            for alias in node.names:
                if alias.name != "*":
                    out[alias.asname or alias.name] = (
                        f"{module}.{alias.name}" if module else alias.name
                    )
    return out


def constants_of(tree: ast.Module) -> Dict[str, ast.expr]:
    """The names a module binds exactly once, at its top level, by a plain
    assignment: their values. A name bound anywhere else too is none."""
    counts: Dict[str, int] = {}
    values: Dict[str, ast.expr] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            counts[node.id] = counts.get(node.id, 0) + 1
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            counts[node.name] = counts.get(node.name, 0) + 1
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                counts[bound] = counts.get(bound, 0) + 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                counts[name] = counts.get(name, 0) + 2
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and counts.get(target.id) == 1:
                values[target.id] = node.value
    return values


def resolved(marks: List[Mark], modules: Modules) -> List[Mark]:
    """``marks`` with each skip marker's condition read across files."""
    return [_resolved(mark, modules) if mark.rule == "skip-added" else mark for mark in marks]


def _resolved(mark: Mark, modules: Modules) -> Mark:
    try:
        call = ast.parse(mark.subject, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return mark
    if not isinstance(call, ast.Call):
        return mark

    class Constants(ast.NodeTransformer):
        def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
            value = modules.constant(ast.unparse(node))
            return value if value is not None else node

    arguments = ast.Call(func=call.func, args=call.args, keywords=call.keywords)
    arguments.args = [canonical(Constants().visit(arg)) for arg in call.args]
    for keyword in arguments.keywords:
        keyword.value = canonical(Constants().visit(keyword.value))
    return mark._replace(subject=ast.unparse(arguments))


def renew(
    old: List[Mark], new: List[Mark], base: Snapshot, candidate: Snapshot, limit: int
) -> List[Mark]:
    """The candidate's new marks, skip markers compared by their conditions read
    across files: each side's through its own snapshot's modules."""
    read = resolved(new, Modules(candidate, limit))
    original = {id(after): before for after, before in zip(read, new)}
    kept = new_marks(resolved(old, Modules(base, limit)), read)
    return [original[id(mark)] for mark in kept]  # as the file's reading has them
