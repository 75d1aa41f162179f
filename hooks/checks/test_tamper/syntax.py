"""Helpers on the standard library's ast: walks, bindings, spellings, and the
shapes of the calls the rules look at."""

from __future__ import annotations

import ast
from typing import Callable, Dict, Iterator, List, Optional, Set, Tuple

from oracle_guard.checks.test_tamper.names import FRAMEWORKS, OPTION_HOLDERS, SKIP_MARKER_NAMES


def statements(tree: ast.AST) -> Iterator[ast.AST]:
    """Every statement, however deeply nested in other statements."""
    stack = [tree]
    while stack:
        current = stack.pop()
        yield current
        kind = current.__class__
        if kind in _LEAVES:
            continue
        for name in _STATEMENT_FIELDS:
            children = getattr(current, name, None)
            if children.__class__ is list:
                stack.extend(children)
        for handler in getattr(current, "handlers", None) or getattr(current, "cases", None) or ():
            stack.extend(handler.body)


def bound_by(statement: ast.AST) -> Iterator[str]:
    """The names a statement binds (walrus and comprehension targets aside)."""
    targets: List[ast.expr] = []
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        targets = [statement.target]
    elif isinstance(statement, (ast.With, ast.AsyncWith)):
        targets = [item.optional_vars for item in statement.items if item.optional_vars]
    elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
        arguments = statement.args
        every = arguments.posonlyargs + arguments.args + arguments.kwonlyargs
        every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
        yield from (argument.arg for argument in every)
    for handler in getattr(statement, "handlers", ()):
        if handler.name:
            yield handler.name
    for target in targets:
        yield from (t.id for t in unpacked(target) if isinstance(t, ast.Name))


_STATEMENT_FIELDS = ("body", "orelse", "finalbody")
# the commonest statements, which hold no statements
_LEAVES = {ast.Expr, ast.Assert, ast.Assign, ast.AnnAssign, ast.Return, ast.Import, ast.ImportFrom}
_NOT_EXPRESSIONS = {"ctx", "op", "ops"}  # contexts and operators: nodes, but never a call or name
# a statement's fields that hold none of them (an import's aliases are nodes, but no child)
_NOT_CHILDREN = {"type_comment", "op", "names", "module", "level", "simple"}
_FIELDS: Dict[type, Tuple[str, ...]] = {}  # an expression's kind, or a statement's


SPELLINGS = (  # another spelling of a name, and the one the rules know
    ("unittest.case.", "unittest."),
    ("_pytest.mark.structures.MARK_GEN.", "pytest.mark."),
    ("_pytest.mark.MARK_GEN.", "pytest.mark."),
    ("pytest.MARK_GEN.", "pytest.mark."),
)
_SPELLED = tuple(spelling for spelling, _ in SPELLINGS)


def is_main_guard(test: ast.expr) -> bool:
    """if __name__ == "__main__":"""
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def is_framework(dotted: Optional[str]) -> bool:
    """pytest, unittest or pluggy themselves: patching them changes how every test scores."""
    return dotted is not None and dotted.split(".")[0] in FRAMEWORKS


def is_false(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and not value.value


def marker_named(node: ast.expr) -> bool:
    """add_marker("xfail"): a skip, xfail or rerun named by a string."""
    return constant_str(node) and node.value.partition("(")[0] in SKIP_MARKER_NAMES  # type: ignore[attr-defined]


def no_parameters(call: ast.Call) -> bool:
    """parametrize("x", []) or fixture(params=[]): nothing to run the test with."""
    values = call.args[1] if len(call.args) >= 2 else None
    for keyword in call.keywords:
        if keyword.arg in ("argvalues", "params"):
            values = keyword.value
    return values is not None and is_empty(values)


# builtins that make a collection of what they are given: empty when it is
_COLLECTORS = {"list", "tuple", "set", "frozenset", "sorted", "reversed", "iter", "dict"}


def is_empty(node: ast.expr) -> bool:
    """An expression whose value is an empty collection, as its syntax alone says:
    [], (), list(), range(0), range(3, 3), [x for x in []], [1] * 0, [] + []."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(isinstance(e, ast.Starred) and is_empty(e.value) for e in node.elts)
    if isinstance(node, ast.Dict):
        return not node.keys
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
        return any(
            is_empty(each.iter) or any(is_false(test) for test in each.ifs)
            for each in node.generators
        )
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Add):
            return is_empty(node.left) and is_empty(node.right)
        if isinstance(node.op, ast.Mult):
            left, right = node.left, node.right
            zero = any(isinstance(s, ast.Constant) and s.value == 0 for s in (left, right))
            return zero or is_empty(left) or is_empty(right)
        return False
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        name, given = node.func.id, node.args
        if name in _COLLECTORS:
            return not given or (len(given) == 1 and is_empty(given[0]))
        if name == "range" and 1 <= len(given) <= 3:
            bounds = [
                g.value for g in given if isinstance(g, ast.Constant) and type(g.value) is int
            ]
            if len(bounds) == len(given) and (len(bounds) < 3 or bounds[2] != 0):
                return len(range(*bounds)) == 0
    return False


def errors_only(call: ast.Call) -> bool:
    """A warnings filter that only turns warnings into errors (stricter)."""
    action = call.args[0] if call.args else None
    for keyword in call.keywords:
        if keyword.arg == "action":
            action = keyword.value
    if isinstance(action, ast.Constant) and isinstance(action.value, str):
        return action.value.partition(":")[0] == "error"
    return False


def canonical(name: str) -> str:
    if "." not in name:  # every spelling, and .__call__, has a dot: most names have none
        return name
    while name.endswith(".__call__"):  # f.__call__(...) is f(...)
        name = name[: -len(".__call__")]
    if not name.startswith(_SPELLED):  # one test for all of them: most names are none
        return name
    for spelling, canonical in SPELLINGS:
        if name.startswith(spelling):
            return canonical + name[len(spelling) :]
    return name


def statement_fields(kind: type) -> Tuple[str, ...]:
    """The fields of a statement's node kind that can hold statements, expressions,
    clauses or with-items: not names, operators, levels or type comments."""
    fields = _FIELDS.get(kind)
    if fields is None:
        fields = _FIELDS[kind] = tuple(f for f in kind._fields if f not in _NOT_CHILDREN)  # type: ignore[attr-defined]
    return fields


def expression_fields(kind: type) -> Tuple[str, ...]:
    """The fields of an expression's node kind that can hold expressions: not the
    contexts and operators, which hold nothing."""
    fields = _FIELDS.get(kind)
    if fields is None:
        fields = _FIELDS[kind] = tuple(f for f in kind._fields if f not in _NOT_EXPRESSIONS)  # type: ignore[attr-defined]
    return fields


def unpacked(target: ast.expr) -> List[ast.expr]:
    if isinstance(target, (ast.Tuple, ast.List)):
        return [each for element in target.elts for each in unpacked(element)]
    if isinstance(target, ast.Starred):
        return unpacked(target.value)
    return [target]


def items_of(value: ast.expr, show: Callable[[ast.AST], str]) -> List[str]:
    """The strings a list, tuple or string names; anything else, as ``show`` writes it."""
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return [value.value]
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        return [item for element in value.elts for item in items_of(element, show)]
    return [show(value)]


def global_key(target: ast.expr) -> Optional[str]:
    """NAME in ``globals()["NAME"]`` or ``vars()["NAME"]``: a binding of NAME."""
    if not isinstance(target, ast.Subscript) or not constant_str(target.slice):
        return None
    call = target.value
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and not call.args:
        if call.func.id in ("globals", "vars", "locals"):
            return target.slice.value  # type: ignore[attr-defined]
    return None


def constant_str(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def is_option(target: ast.Attribute, whole: bool = False) -> bool:
    """config.option.X, config.known_args_namespace.X, config.args; with
    ``whole``, also config.option itself (the namespace written through)."""
    if whole and target.attr in OPTION_HOLDERS:
        return True
    chain: Set[str] = set()
    value: ast.expr = target.value
    while isinstance(value, ast.Attribute):
        chain.add(value.attr)
        value = value.value
    return bool(chain & OPTION_HOLDERS) or (
        target.attr == "args" and isinstance(value, ast.Name) and "config" in value.id
    )


def option_name(target: ast.Attribute) -> str:
    return f"option.{target.attr}" if target.attr != "args" else "config.args"


def show(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:59] + "…"


def report_like(owner: Optional[str]) -> bool:
    """Is the object whose .outcome is written a test report (rep, report,
    call_report)? A project's own objects (self.outcome, game.outcome) are not."""
    if owner is None:
        return True
    return "rep" in owner.rpartition(".")[2].lower()
