"""Names resolved through a file's imports, and the marks a reading collects."""

from __future__ import annotations

import ast
import copy
from collections import Counter
from typing import Dict, FrozenSet, List, Optional, Set

from oracle_guard.checks.test_tamper.marks import Mark
from oracle_guard.checks.test_tamper.names import SYSTEM_EXITS, OracleOf
from oracle_guard.checks.test_tamper.syntax import (
    bound_by,
    canonical,
    constant_str,
    is_framework,
    show,
    statements,
)

# statements that bind no name (bound_by's answer is empty): the commonest skip it
_BINDS_NOTHING = {ast.Module, ast.Expr, ast.Assert, ast.Return, ast.Pass, ast.ClassDef, ast.If}


class Resolver:
    def __init__(
        self, package: str, hermetic: bool, oracle_of: OracleOf, conftest: bool = True
    ) -> None:
        self.package = package
        self.hermetic = hermetic
        self.oracle_of = oracle_of
        self.conftest = conftest  # a conftest or plugin: its module level runs at startup
        self.kinds: List[str] = []  # "class" or "function", for each name of the scope
        self.marks: List[Mark] = []
        self.imports: Dict[str, str] = {}  # bound name -> dotted name it stands for
        self.scope: List[str] = []
        self.assigned: Set[str] = set()  # names the file binds itself (variables, arguments)
        self.bindings: Counter = Counter()  # how often the file binds each of them
        self.dumped: Set[str] = set()  # names bound to pickle.dumps(...)
        self.functions: List[ast.AST] = []  # the definitions the walk is in, innermost last
        self.clean_profiles: Set[str] = set()  # Hypothesis profiles registered with no mark
        self.declared_global: Set[str] = set()  # names a function declares global
        self.warnings_scoped = 0  # how many `with warnings.catch_warnings():` hold the walk
        self.modules: Set[str] = set()  # the modules `import X` statements name
        self.tree: Optional[ast.Module] = None  # the module read, for its constants
        self._constants: Optional[Dict[str, ast.expr]] = None
        self.mark_aliases: Dict[str, ast.expr] = {}  # skip markers kept for decorators
        # the frameworks the repository is itself (pluggy's tests of pluggy): their
        # names are the code under test there, not the runner
        self.own: FrozenSet[str] = frozenset()

    # -- names ----------------------------------------------------------------------

    @property
    def constants(self) -> Dict[str, ast.expr]:
        """The names the module binds once, at its top: read only when a skip
        condition or an exec'd name asks (a walk of the whole tree)."""
        if self._constants is None:
            # deferred: 2 ms to import, only for constants()
            from oracle_guard.checks.test_tamper.meaning import constants_of

            self._constants = constants_of(self.tree) if self.tree is not None else {}
        return self._constants

    def bind(self, tree: ast.Module) -> None:
        """Every name the file imports or binds, wherever it is bound."""
        bindings = self.bindings
        for node in statements(tree):  # imports are statements: no expression holds one
            if node.__class__ in _BINDS_NOTHING:
                continue
            if isinstance(node, ast.Import):
                self.modules.update(alias.name for alias in node.names)
                for alias in node.names:
                    if alias.asname:
                        self.imports[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        self.imports[top] = top
            elif isinstance(node, ast.ImportFrom):
                module = self._absolute(node.module, node.level)
                for alias in node.names:
                    if alias.name != "*":
                        bound = alias.asname or alias.name
                        self.imports[bound] = f"{module}.{alias.name}" if module else alias.name
            elif isinstance(node, ast.Global):
                self.declared_global.update(node.names)
            else:
                names = list(bound_by(node))
                self.assigned.update(names)
                for name in names:  # not Counter.update: it asks whether names is a Mapping
                    bindings[name] += 1
                if isinstance(node, ast.Assign) and len(names) == 1:
                    value = node.value
                    if isinstance(value, ast.Call) and self.dotted(value.func) == "pickle.dumps":
                        self.dumped.add(names[0])

    def _absolute(self, module: Optional[str], level: int) -> str:
        if not level:
            return module or ""
        parts = self.package.split(".") if self.package else []
        if level > 1:
            parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
        if module:
            parts.append(module)
        return ".".join(parts)

    def dotted(self, node: ast.AST) -> Optional[str]:
        """The dotted name an expression stands for, through the imports, in its
        canonical spelling (unittest.case.skip is unittest.skip)."""
        kind = node.__class__
        if kind is ast.Name:  # the commonest, first: a name, through the imports
            found: Optional[str] = self.imports.get(node.id, node.id)  # type: ignore[attr-defined]
        elif kind is ast.Attribute:
            value = self.dotted(node.value)  # type: ignore[attr-defined]
            found = f"{value}.{node.attr}" if value is not None else None  # type: ignore[attr-defined]
        else:
            found = self._dotted(node)
        return canonical(found) if found is not None else None

    def _dotted(self, node: ast.AST) -> Optional[str]:
        if isinstance(node, ast.Call):
            return self.called(node, self.dotted(node.func)) if node.args else None
        if isinstance(node, ast.Subscript) and self.dotted(node.value) == "sys.modules":
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                return key.value
        return None

    def called(self, node: ast.Call, func: Optional[str]) -> Optional[str]:
        """The dotted name a call stands for (not yet in its canonical spelling),
        given ``func``, what it calls: the caller has it already."""
        if not node.args:
            return None
        if isinstance(node.func, ast.Call):
            getter = node.func  # operator.attrgetter("mark.skip")(pytest)
            if self.dotted(getter.func) == "operator.attrgetter" and getter.args:
                path = getter.args[0]
                value = self.dotted(node.args[0])
                if constant_str(path) and value is not None:
                    return f"{value}.{path.value}"  # type: ignore[attr-defined]
        first = node.args[0]
        constant = first.value if isinstance(first, ast.Constant) else None
        if func in ("__import__", "importlib.import_module") and isinstance(constant, str):
            return constant
        if func is not None and func.endswith(".__getattr__") and isinstance(constant, str):
            return f"{func[: -len('.__getattr__')]}.{constant}"
        if func == "getattr" and len(node.args) >= 2:
            name = node.args[1]
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                value = self.dotted(first)
                return f"{value}.{name.value}" if value is not None else None
        return None

    def _own(self, node: ast.expr) -> bool:
        """A bare name the file binds itself (``exit = proc.returncode``), not the builtin:
        what it was bound to is judged where the binding is written."""
        return (
            isinstance(node, ast.Name) and node.id in self.assigned and node.id not in self.imports
        )

    def _framework(self, dotted: Optional[str]) -> bool:
        return is_framework(dotted) and (dotted or "").split(".")[0] not in self.own

    def oracle(self, dotted: Optional[str]) -> Optional[str]:
        """The oracle file a dotted name lies in, trying each module prefix."""
        if not dotted:
            return None
        parts = dotted.split(".")
        for end in range(len(parts), 0, -1):
            found = self.oracle_of(".".join(parts[:end]))
            if found is not None:
                return found
        return None

    def _arguments(self, call: ast.Call) -> str:
        """A call's arguments as a key holds them (names no import binds as ``_``)."""
        given = [self.shape(arg) for arg in call.args]
        given += [f"{k.arg}={self.shape(k.value)}" for k in call.keywords]
        return f"({', '.join(given)})"

    def _marker_arguments(self, call: ast.Call, marker: str) -> str:
        """A skip marker's arguments by meaning: its condition and options, not the
        reason it gives (reason=, or skip's one string), which edits freely."""
        args = call.args
        if marker in ("pytest.mark.skip", "unittest.skip") and all(map(constant_str, args)):
            args = []
        # deferred: 2 ms to import, only for _marker_arguments()
        from oracle_guard.checks.test_tamper.meaning import written

        given = [written(arg, self.imports, self.constants) for arg in args]
        given += [
            f"{k.arg}={written(k.value, self.imports, self.constants)}"
            for k in call.keywords
            if k.arg != "reason"
        ]
        return f"({', '.join(given)})"

    def shape(self, node: ast.AST) -> str:
        """An expression as a mark's subject holds it: written out, with each name
        no import binds as ``_``, so that renaming a variable changes no key."""
        copied = copy.deepcopy(node)
        for child in ast.walk(copied):
            if isinstance(child, ast.Name) and child.id not in self.imports:
                child.id = "_"
        return show(copied)

    # -- where --------------------------------------------------------------------

    @property
    def where(self) -> str:
        return ".".join(self.scope)

    def _failure_only(self, dotted: Optional[str]) -> bool:
        """SystemExit raised in a function of a test module (not a conftest or a
        plugin) is caught by pytest and reported as that test's failure."""
        return dotted in SYSTEM_EXITS and not self.conftest and "function" in self.kinds

    def _in(self) -> str:
        return f" in {self.where}" if self.scope else " at module level"

    def add(
        self, rule: str, node: ast.AST, subject: str, message: str, scope: Optional[str] = None
    ) -> None:
        line = getattr(node, "lineno", 1)
        self.marks.append(
            Mark(rule, line, subject, self.where if scope is None else scope, message)
        )


def round_trip(call: ast.Call, reader: Resolver) -> bool:
    """pickle.loads(pickle.dumps(...)), or of a name the file binds once, to
    pickle.dumps(...): what it loads was made from the test's own objects."""
    made = call.args[0] if len(call.args) == 1 and not call.keywords else None
    if isinstance(made, ast.Name):
        if made.id in reader.dumped and reader.bindings[made.id] == 1:
            return True
        return bool(reader.functions) and _dumped_once(reader.functions[-1], made.id, reader)
    return isinstance(made, ast.Call) and reader.dotted(made.func) == "pickle.dumps"


def namespace_of(mapping: ast.expr, reader: Resolver) -> ast.expr:
    """The object whose attributes a mapping is: X for vars(X) and X.__dict__."""
    if isinstance(mapping, ast.Call) and reader.dotted(mapping.func) == "vars" and mapping.args:
        return mapping.args[0]
    if isinstance(mapping, ast.Attribute) and mapping.attr == "__dict__":
        return mapping.value
    return mapping


def bound_once(function: ast.AST, name: str, reader: Resolver) -> Optional[ast.expr]:
    """The value a function binds ``name`` to, when it binds it once, by a plain
    assignment, and nowhere else (no argument, global or nonlocal of that name)."""
    stores = [
        node
        for node in ast.walk(function)
        if isinstance(node, ast.Name)
        and node.id == name
        and not isinstance(node.ctx, ast.Load)
        or isinstance(node, ast.arg)
        and node.arg == name
        or isinstance(node, (ast.Global, ast.Nonlocal))
        and name in node.names
    ]
    if len(stores) != 1 or name in reader.declared_global:
        return None
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and node.targets[0] is stores[0]:
            return node.value
    return None


def _dumped_once(function: ast.AST, name: str, reader: Resolver) -> bool:
    """Two tests may each keep their own pickle in a variable of the same name."""
    value = bound_once(function, name, reader)
    return isinstance(value, ast.Call) and reader.dotted(value.func) == "pickle.dumps"
