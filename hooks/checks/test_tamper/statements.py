"""The walk over a file's statements: definitions, decorators, imports and
assignments; expressions are judged in calls.py."""

from __future__ import annotations

import ast
from typing import Dict, Sequence, Union

from oracle_guard.checks.test_tamper.calls import Calls
from oracle_guard.checks.test_tamper.names import (
    CLAUSES,
    LISTS,
    NETWORK,
    OUTCOME_ATTRIBUTES,
    SEAM_NETWORK,
    SKIP_ATTRIBUTES,
    SKIP_MARKERS,
    TEST_FUNCTION_ATTRIBUTES,
    TEST_ITEMS,
    TESTCASE_RUNNERS,
    WARNING_SCOPES,
)
from oracle_guard.checks.test_tamper.resolve import bound_once, namespace_of
from oracle_guard.checks.test_tamper.syntax import (
    constant_str,
    global_key,
    is_main_guard,
    is_option,
    option_name,
    report_like,
    show,
    statement_fields,
    unpacked,
)

# statements that hold only expressions, the fields that hold them: the commonest
_PLAIN = {ast.Assert: ("test", "msg"), ast.Expr: ("value",), ast.Return: ("value",)}
_DEFINITIONS = {ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef}


class Reader(Calls):
    def read(self, tree: ast.Module) -> None:
        self.tree = tree
        self.bind(tree)
        self.mark_aliases = self._mark_aliases(tree)
        self._body(tree.body)

    def _mark_aliases(self, tree: ast.Module) -> Dict[str, ast.expr]:
        """Skip markers kept in a module-level name used only as a decorator
        (``needs_posix = pytest.mark.skipif(...)``): each is judged where it
        decorates a test, as if written there, and not at module level."""
        made: Dict[str, ast.expr] = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
                if isinstance(target, ast.Name) and target.id != "pytestmark":
                    func = value.func if isinstance(value, ast.Call) else value
                    if self.dotted(func) in SKIP_MARKERS and self.constants.get(target.id) is value:
                        made[target.id] = value
        if not made:
            return made
        decorators = {
            id(d)
            for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            for d in n.decorator_list
        }
        for used in ast.walk(tree):
            if isinstance(used, ast.Name) and used.id in made and isinstance(used.ctx, ast.Load):
                if id(used) not in decorators:
                    del made[used.id]  # used some other way: judged where it is made
        return made

    def _literal_code(self, call: ast.Call) -> bool:
        """exec, eval or compile of a string the file writes out (or a name the
        function binds once to one): that code is read as this file's, its marks
        at the call's line. Anything else is dynamic-code."""
        first = call.args[0] if call.args else None
        if isinstance(first, ast.Name):
            name = first.id
            local = [f for f in self.functions if name in _bound_names(f)]
            first = bound_once(local[-1], name, self) if local else self.constants.get(name)
        if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
            return False
        try:
            tree = ast.parse(first.value)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
        inner = Reader(self.package, self.hermetic, self.oracle_of, self.conftest)
        inner.own, inner.imports = self.own, dict(self.imports)
        inner.scope, inner.kinds = list(self.scope), list(self.kinds)
        inner.read(tree)
        self.marks += [mark._replace(line=call.lineno) for mark in inner.marks]
        return True

    def _body(self, body: Sequence[ast.stmt]) -> None:
        for statement in body:
            self._statement(statement)

    def _statement(self, node: ast.stmt) -> None:
        kind = node.__class__
        plain = _PLAIN.get(kind)
        if plain is not None:  # assert, an expression, return: only expressions in them
            for field in plain:
                value = getattr(node, field)
                if value is not None:
                    self._expression(value)
            return
        if kind in _DEFINITIONS:
            self._definition(node)  # type: ignore[arg-type]
            return
        if kind is ast.If and is_main_guard(node.test):  # type: ignore[attr-defined]
            # what runs only as a script is not what runs on import: its own scope
            self.scope.append("__main__")
            self._body(node.body)  # type: ignore[attr-defined]
            self.scope.pop()
            self._body(node.orelse)  # type: ignore[attr-defined]
            return
        if (
            kind is ast.Assign
            and self.mark_aliases
            and any(v is node.value for v in self.mark_aliases.values())  # type: ignore[attr-defined]
        ):
            return  # a skip marker kept for decorators: judged where each decorates
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            self._import(node)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            self._assignment(node)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                self._target(target, node, deleting=True)
        elif isinstance(node, ast.Raise) and node.exc is not None:
            self._raise(node)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
            # for NAME in ..., with ... as NAME: a binding pytest reads like any other
            bound = [node.target] if isinstance(node, (ast.For, ast.AsyncFor)) else []
            bound += [
                item.optional_vars for item in getattr(node, "items", ()) if item.optional_vars
            ]
            for target in bound:
                for each in unpacked(target):
                    if isinstance(each, ast.Name):
                        self._hook_name(each.id, node)
        # a filter set inside `with warnings.catch_warnings():` is undone when it ends
        scoped = isinstance(node, (ast.With, ast.AsyncWith)) and any(
            isinstance(item.context_expr, ast.Call)
            and self.dotted(item.context_expr.func) in WARNING_SCOPES
            for item in node.items
        )
        self.warnings_scoped += scoped
        for field in statement_fields(kind):
            value = getattr(node, field, None)
            for child in value if value.__class__ is list else (value,):
                if isinstance(child, ast.stmt):
                    self._statement(child)
                elif isinstance(child, ast.expr):
                    self._expression(child)
                elif isinstance(child, CLAUSES):
                    for grandchild in ast.iter_child_nodes(child):
                        if isinstance(grandchild, ast.stmt):
                            self._statement(grandchild)
                        elif isinstance(grandchild, ast.expr):
                            self._expression(grandchild)
                elif isinstance(child, ast.withitem):
                    self._expression(child.context_expr)
        self.warnings_scoped -= scoped

    def _definition(self, node: Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef]) -> None:
        name = node.name
        self._hook_name(name, node)
        if isinstance(node, ast.ClassDef) and any(
            (self.dotted(base) or "").endswith("TestCase") for base in node.bases
        ):
            for method in node.body:
                if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    if method.name in TESTCASE_RUNNERS:
                        self.add(
                            "outcome-changed",
                            method,
                            f"{name}.{method.name}",
                            f"defines {name}.{method.name}: it decides how unittest runs and "
                            "scores the case's tests",
                        )
        for decorator in node.decorator_list:
            # @pytest.hookimpl(specname="pytest_runtest_makereport") on any name
            for keyword in decorator.keywords if isinstance(decorator, ast.Call) else []:
                if keyword.arg == "specname" and constant_str(keyword.value):
                    self._hook_name(keyword.value.value, node)  # type: ignore[attr-defined]
        if (
            not self.scope
            and name in ("__getattr__", "__dir__")
            and not isinstance(node, ast.ClassDef)
        ):
            self.add(
                "dynamic-code",
                node,
                f"module {name}",
                f"defines a module-level {name}: the module's names (pytest's hooks among "
                "them) are then made at run time, where this reading cannot follow",
            )
        self.scope.append(name)
        self.kinds.append("class" if isinstance(node, ast.ClassDef) else "function")
        for decorator in node.decorator_list:
            self._decorator(decorator, name)
        if not isinstance(node, ast.ClassDef):
            arguments = node.args
            for default in arguments.defaults + [d for d in arguments.kw_defaults if d]:
                self._expression(default)
        else:
            for base in node.bases + [k.value for k in node.keywords]:
                self._kept_ending(node, base, "subclasses")
                self._expression(base)
        self.functions.append(node)
        self._body(node.body)
        self.functions.pop()
        self.scope.pop()
        self.kinds.pop()

    def _decorator(self, node: ast.expr, name: str) -> None:
        if isinstance(node, ast.Name) and node.id in self.mark_aliases:
            node = self.mark_aliases[node.id]
        target = node.func if isinstance(node, ast.Call) else node
        dotted = self.dotted(node) if isinstance(node, ast.Call) else None
        if dotted not in SKIP_MARKERS:  # getattr(pytest.mark, "skip") is the marker itself
            dotted = self.dotted(target)
        if dotted in SKIP_MARKERS:
            # its arguments are in its key: skipif(py < (3, 8)) is not skipif(py < (3, 80))
            given = self._marker_arguments(node, dotted) if isinstance(node, ast.Call) else ""
            self.add(
                "skip-added",
                node,
                f"{dotted}{given}",
                f"@{dotted} on {name}: {SKIP_MARKERS[dotted]}",
            )
            if isinstance(node, ast.Call):
                for arg in list(node.args) + [k.value for k in node.keywords]:
                    self._expression(arg)
            return
        self._expression(node)

    def _import(self, node: Union[ast.Import, ast.ImportFrom]) -> None:
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
            for alias in node.names:
                if alias.asname:
                    self._hook_name(alias.asname, node)
        else:
            module = self._absolute(node.module, node.level)
            modules = [module] + [f"{module}.{alias.name}" for alias in node.names]
            for alias in node.names:
                bound = alias.asname or alias.name
                self._hook_name(bound, node)
                if bound == "pytest_plugins":
                    self.add(
                        "collection-changed",
                        node,
                        f"imports pytest_plugins {module}",
                        f"imports pytest_plugins from {module}: the plugins it lists load, and a "
                        "plugin can change which tests run and how they score",
                    )
                elif alias.name == "*":
                    self.add(
                        "dynamic-code",
                        node,
                        f"import * {module}",
                        f"imports every name of {module or 'a module'}{self._in()}: which names "
                        "(pytest's hooks among them) this reading cannot see",
                    )
        if self.hermetic:
            for module in modules:
                # a package's submodule loads the package: requests.adapters is requests
                parts = module.split(".")
                prefixes = (".".join(parts[:end]) for end in range(1, len(parts) + 1))
                network = next((p for p in prefixes if p in NETWORK), None)
                if network is not None:
                    self.add(
                        "non-hermetic",
                        node,
                        f"import {network}",
                        f"imports {module}, which reaches the network: {SEAM_NETWORK}",
                    )
                    break

    def _assignment(self, node: Union[ast.Assign, ast.AugAssign, ast.AnnAssign]) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if isinstance(node, ast.AugAssign) and self.dotted(node.target) == "sys.modules":
            self._sys_modules(node, "|=", [node.value])  # sys.modules |= {...}
        for target in targets:
            for each in unpacked(target):
                self._target(each, node)
        value = node.value
        self._kept_ending(node, value, "keeps")
        for target in targets:
            if value is None:
                continue
            if isinstance(target, ast.Name):
                self._named_value(target.id, value, node)
            elif global_key(target) is not None:
                if "function" in self.kinds:  # a module global, from inside a function
                    self._hook_name(global_key(target), node, anywhere=True)  # type: ignore[arg-type]
                self._named_value(global_key(target), value, node)  # type: ignore[arg-type]

    def _target(self, target: ast.expr, node: ast.stmt, deleting: bool = False) -> None:
        verb = "deletes" if deleting else "assigns"
        if isinstance(target, ast.Name):
            bound = self.imports.get(target.id)
            found = self.oracle(bound) if bound and target.id in self.imports else None
            if found is not None and not deleting:
                self.add(
                    "oracle-patched",
                    node,
                    f"rebinds {bound}",
                    f"rebinds {target.id}, imported from {bound}, which the contract protects "
                    f"({found!r}): the test would compare against a stand-in",
                )
            return
        if isinstance(target, ast.Attribute):
            owner = self.dotted(target.value)
            if target.attr in SKIP_ATTRIBUTES:
                self.add(
                    "skip-added",
                    node,
                    f"{verb} .{target.attr}",
                    f"{verb} {show(target)}: {SKIP_ATTRIBUTES[target.attr]}",
                )
                return
            item = (owner or "").rpartition(".")[2] in TEST_ITEMS
            if item and target.attr in TEST_FUNCTION_ATTRIBUTES:
                self._test_function_replaced(node, f"{verb} {show(target)}")
                return
            if owner is not None and not deleting:
                if self._shared_reader(node, f"{owner}.{target.attr}", "assigns"):
                    return
            if target.attr == "items" and (owner or "").rpartition(".")[2] == "session":
                self.add(
                    "collection-changed",
                    node,
                    f"{verb} session.items",
                    f"{verb} {show(target)}: it changes which collected tests run",
                )
                return
            if target.attr == "runtest" or self._framework(owner):
                self.add(
                    "outcome-changed",
                    node,
                    f"{verb} {owner}.{target.attr}" if owner else f"{verb} .{target.attr}",
                    f"{verb} {show(target)}: it patches how pytest or unittest runs and "
                    "scores tests",
                )
                return
            if target.attr in OUTCOME_ATTRIBUTES:
                self.add(
                    "outcome-changed",
                    node,
                    f"{verb} .{target.attr}",
                    f"{verb} {show(target)}: it changes what the run reports",
                )
                return
            if target.attr == "outcome" and report_like(owner):
                self.add(
                    "outcome-changed",
                    node,
                    f"{verb} .outcome",
                    f"{verb} {show(target)}: it changes a test's reported outcome",
                )
                return
            if owner is not None and (owner == "builtins" or owner == "__builtins__"):
                self.add(
                    "oracle-patched",
                    node,
                    f"builtins.{target.attr}",
                    f"{verb} builtins.{target.attr}: it changes every module's {target.attr}",
                )
                return
            if is_option(target):
                self.add(
                    "runner-options",
                    node,
                    f"{verb} {option_name(target)}",
                    f"{verb} {show(target)}: it changes the command line's options",
                )
                return
            found = self.oracle(owner)
            if found is not None:
                self.add(
                    "oracle-patched",
                    node,
                    f"{owner}.{target.attr}",
                    f"{verb} {owner}.{target.attr}, which the contract protects ({found!r})",
                )
            return
        if isinstance(target, ast.Subscript):
            owner = self.dotted(target.value)
            table = target.value
            if (
                isinstance(table, ast.Call)
                and not table.args
                and self.dotted(table.func) in ("globals", "locals", "vars")
                and not constant_str(target.slice)
            ):
                self.add(
                    "dynamic-code",
                    node,
                    f"{verb} {self.dotted(table.func)}()[]",
                    f"{verb} {show(target)}{self._in()}: a name made at run time (a pytest hook "
                    "among them) cannot be judged",
                )
                return
            namespace = namespace_of(target.value, self)
            written = self.dotted(namespace) if namespace is not target.value else None
            if written is not None and self._namespace_patched(node, written, verb, target):
                return
            value = getattr(node, "value", None)
            if isinstance(target.value, ast.Name) and target.value.id in LISTS and value:
                self._named_value(target.value.id, value, node)  # collect_ignore[:] = [...]
                return
            if isinstance(target.value, ast.Attribute) and target.value.attr == "items":
                if (self.dotted(target.value.value) or "").rpartition(".")[2] == "session":
                    self.add(
                        "collection-changed",
                        node,
                        f"{verb} session.items[]",
                        f"{verb} {show(target)}: it changes which collected tests run",
                    )
                    return
            if owner in ("sys.meta_path", "sys.path_hooks"):
                self.add(
                    "dynamic-code",
                    node,
                    f"{verb} {owner}",
                    f"{verb} {show(target)}: it changes how imports are found",
                )
                return
            if isinstance(namespace, ast.Attribute) and is_option(namespace, whole=True):
                self.add(
                    "runner-options",
                    node,
                    f"{verb} option[]",
                    f"{verb} {show(target)}{self._in()}: it changes the command line's options",
                )
            elif owner in ("__builtins__", "builtins.__dict__"):
                self.add(
                    "oracle-patched",
                    node,
                    "builtins[]",
                    f"{verb} {show(target)}: it changes every module's builtins",
                )
            elif owner == "sys.modules":
                name = self.dotted(target)
                found = self.oracle(name)
                if found is not None:
                    self.add(
                        "oracle-patched",
                        node,
                        f"sys.modules {name}",
                        f"{verb} sys.modules[{name!r}], which the contract protects "
                        f"({found!r}): it replaces the oracle's module",
                    )


def _bound_names(function: ast.AST) -> Sequence[str]:
    """The names a definition binds anywhere in it: its arguments and stores."""
    names = []
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.append(node.id)
        elif isinstance(node, ast.arg):
            names.append(node.arg)
    return names
