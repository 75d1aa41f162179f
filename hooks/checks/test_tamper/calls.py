"""Expressions and calls: skips, exits, patches, plugin loads, dynamic code."""

from __future__ import annotations

import ast
from typing import List, Optional, Sequence, Set, Union

from oracle_guard.checks.test_tamper.bindings import Bindings
from oracle_guard.checks.test_tamper.names import (
    CTYPES,
    DYNAMIC,
    EXITS,
    GUARDED_MODULES,
    HOOKED_DYNAMIC,
    HYPOTHESIS_SETTINGS,
    LISTS,
    MAPPING_WRITES,
    OUTCOME_ATTRIBUTES,
    PLUGIN_LOADS,
    PLUGIN_UNLOADS,
    REFERENCED,
    SHARED_READERS,
    SKIP_ATTRIBUTES,
    SKIP_CALLS,
    SKIP_MARKERS,
    TEST_FUNCTION_ATTRIBUTES,
    TEST_ITEMS,
    WARNING_FILTERS,
)
from oracle_guard.checks.test_tamper.resolve import namespace_of, round_trip
from oracle_guard.checks.test_tamper.syntax import (
    canonical,
    constant_str,
    errors_only,
    expression_fields,
    is_option,
    marker_named,
    no_parameters,
    report_like,
    show,
)

_NAME, _CONSTANT, _CALL, _ATTRIBUTE = ast.Name, ast.Constant, ast.Call, ast.Attribute
_LOAD, _NAMED = ast.Load, ast.NamedExpr
_LIST, _TUPLE, _KEYWORD = ast.List, ast.Tuple, ast.keyword


class Calls(Bindings):
    def _expression(self, node: ast.expr) -> None:
        """Every node of the expression (lambdas and comprehensions included), each
        judged as the walk reaches it: its parent comes first, so whether it is
        called, or the start of a longer name, is known by then. One pass, no
        generator, the commonest kinds inline: it is most of test-tamper's time."""
        # a name that is called, or that is the start of a longer one, is judged there
        called: Set[int] = set()
        inner: Set[int] = set()
        stack: List[ast.AST] = [node]
        pop, push, imports = stack.pop, stack.append, self.imports
        while stack:
            child = pop()
            kind = child.__class__
            if kind is _NAME:
                if (child.id in imports or child.id in REFERENCED) and child.ctx.__class__ is _LOAD:  # type: ignore[attr-defined]
                    self._referenced(child, called, inner)  # type: ignore[arg-type]
            elif kind is _CONSTANT:
                continue
            elif kind is _CALL:
                func = child.func  # type: ignore[attr-defined]
                called.add(id(func))
                inner.add(id(func))
                push(func)
                stack.extend(child.args)  # type: ignore[attr-defined]
                stack.extend(child.keywords)  # type: ignore[attr-defined]
                self._call(child, id(child) in called)  # type: ignore[arg-type]
            elif kind is _ATTRIBUTE:
                inner.add(id(child.value))  # type: ignore[attr-defined]
                push(child.value)  # type: ignore[attr-defined]
                if child.attr in REFERENCED and child.ctx.__class__ is _LOAD:  # type: ignore[attr-defined]
                    self._referenced(child, called, inner)  # type: ignore[arg-type]
            elif kind is _LIST or kind is _TUPLE:
                stack.extend(child.elts)  # type: ignore[attr-defined]
            elif kind is _KEYWORD:
                push(child.value)  # type: ignore[attr-defined]
            else:
                if kind is _NAMED and child.target.__class__ is _NAME:  # type: ignore[attr-defined]
                    self._hook_name(child.target.id, child)  # type: ignore[attr-defined]
                for field in expression_fields(kind):
                    value = getattr(child, field, None)
                    if value.__class__ is list:
                        stack.extend(c for c in value if isinstance(c, ast.AST))
                    elif isinstance(value, ast.AST):
                        push(value)

    def _referenced(
        self, child: Union[ast.Name, ast.Attribute], called: Set[int], inner: Set[int]
    ) -> None:
        """A name worth resolving where it is only referred to, not called."""
        dotted = self.dotted(child)
        if dotted in SKIP_MARKERS and id(child) not in called:  # a call: judged there
            self.add(
                "skip-added",
                child,
                dotted,
                f"{dotted}{self._in()}: {SKIP_MARKERS[dotted]}",
            )
        elif dotted is not None and dotted.endswith(".__path__"):
            found = self.oracle(dotted[: -len(".__path__")])
            if found is not None:
                self.add(
                    "oracle-patched",
                    child,
                    f"{dotted}",
                    f"reaches {dotted}{self._in()}: the folders the oracle's package is "
                    f"imported from, which the contract protects ({found!r})",
                )
        elif dotted in SKIP_CALLS and id(child) not in inner and not self._own(child):
            self.add(
                "skip-added",
                child,
                dotted,
                f"refers to {dotted}{self._in()} without calling it: whatever calls it "
                f"{SKIP_CALLS[dotted]}",
            )
        elif dotted in EXITS and id(child) not in inner and not self._own(child):
            self.add(
                "process-exit",
                child,
                dotted,
                f"refers to {dotted}{self._in()} without calling it: whatever calls it "
                "(an atexit handler, a finalizer) would end the run with its status, "
                "not the tests'",
            )

    def _call(self, node: ast.Call, called: bool = False) -> None:
        """``called``: the call's result is called in turn (getattr(os, "_exit")(0))."""
        plain = self.dotted(node.func)
        func = self._method_called(node) or plain
        name = node.func.attr if isinstance(node.func, ast.Attribute) else func
        found = self.called(node, plain)  # getattr(pytest.mark, "xfail") is the marker
        resolved = canonical(found) if found is not None else None
        if resolved in SKIP_MARKERS or func in SKIP_MARKERS:
            marker = resolved if resolved in SKIP_MARKERS else func
            # skipif(py < (3, 8)): the condition is in the key, the reason is not
            given = self._marker_arguments(node, marker) if func == marker else ""  # type: ignore[arg-type]
            self.add(
                "skip-added",
                node,
                f"{marker}{given}",
                f"{marker}{self._in()}: {SKIP_MARKERS[marker]}",  # type: ignore[index]
            )
        elif resolved in EXITS and func == "getattr" and not called:
            self.add(
                "process-exit",
                node,
                resolved,
                f"refers to {resolved}{self._in()} without calling it: whatever calls it would "
                "end the run with its status, not the tests'",
            )
        elif func in SKIP_CALLS:
            self.add(
                "skip-added",
                node,
                f"{func}{self._arguments(node)}",
                f"{func}(){self._in()} {SKIP_CALLS[func]}",
            )
        elif name in ("add_marker", "applymarker") and node.args and marker_named(node.args[0]):
            self.add(
                "skip-added",
                node,
                f"{name} {node.args[0].value}",  # type: ignore[attr-defined]
                f"{name}({node.args[0].value!r}){self._in()}: a skipped or xfail test scores "  # type: ignore[attr-defined]
                "as a pass",
            )
        elif func in ("pytest.mark.parametrize", "pytest.fixture") and no_parameters(node):
            self.add(
                "skip-added",
                node,
                f"{func} empty",
                f"{func} with an empty parameter set{self._in()}: pytest skips the tests it "
                "would parametrize",
            )
        elif name in ("__setattr__", "__delattr__"):
            self._dunder_setattr(node, func or name)
        elif func in ("dict.__setitem__", "dict.update", "dict.setdefault") and node.args:
            if self.dotted(node.args[0]) == "sys.modules":
                self._sys_modules(node, func, node.args[1:])
        elif func in ("pickle.loads", "pickle.load") and round_trip(node, self):
            pass  # pickle.loads(pickle.dumps(x)): only the code pickled here runs
        elif func in HOOKED_DYNAMIC or (func or "").startswith("ctypes."):
            self.add(
                "dynamic-code",
                node,
                func or "",
                f"calls {func}{self._in()}: {HOOKED_DYNAMIC.get(func or '', CTYPES)}",
            )
        elif func in WARNING_FILTERS and not errors_only(node) and not self.warnings_scoped:
            self.add(
                "runner-options",
                node,
                f"{func}{self._arguments(node)}",
                f"{func}{self._in()} can silence warnings that would fail tests",
            )
        elif name == "skipTest":
            self.add("skip-added", node, "skipTest", f"skipTest(){self._in()} skips the test")
        elif func in EXITS and not self._failure_only(func):
            self.add(
                "process-exit",
                node,
                f"{func}{self._arguments(node)}",  # sys.exit(pytest.main()) is not sys.exit(0)
                f"calls {func}{self._in()}: the run would end with its status, not the tests'",
            )
        elif func in DYNAMIC and self._literal_code(node):
            pass  # code written in the file as a string: read here, as if written out
        elif func in DYNAMIC:
            self.add(
                "dynamic-code",
                node,
                func,
                f"calls {func}{self._in()}: code made at run time cannot be judged",
            )
        elif func in ("__import__", "importlib.import_module", "importlib.__import__") and (
            not node.args or not constant_str(node.args[0])
        ):
            self.add(
                "dynamic-code",
                node,
                func,
                f"calls {func} with a computed name{self._in()}: the module it imports "
                "cannot be judged",
            )
        elif func == "getattr" and len(node.args) >= 2 and not constant_str(node.args[1]):
            owner = self.dotted(node.args[0])
            if owner is not None and owner.split(".")[0] in GUARDED_MODULES | {"__builtins__"}:
                self.add(
                    "dynamic-code",
                    node,
                    f"getattr {owner}",
                    f"getattr on {owner} with a computed name{self._in()}: what it reaches "
                    "cannot be judged",
                )
        elif name in ("setattr", "delattr", "setitem", "delitem", "patch", "object", "dict"):
            self._patch_call(node, func, name)
        elif name in MAPPING_WRITES and isinstance(node.func, ast.Attribute):
            self._mapping_write(node, node.func.value, func or name)
        elif name in ("append", "extend", "insert") and isinstance(node.func, ast.Attribute):
            listed = node.func.value
            if isinstance(listed, ast.Name) and listed.id in LISTS and node.args:
                self._named_value(listed.id, node.args[-1], node)
        elif name in PLUGIN_UNLOADS and func is not None and ".pluginmanager." in f".{func}":
            self.add(
                "collection-changed",
                node,
                f"pluginmanager.{name}",
                f"calls pluginmanager.{name}{self._in()}: it unloads or blocks a plugin, and "
                "pytest's own (unittest, skipping, python) decide which tests run and how they "
                "score",
            )
        elif name in PLUGIN_LOADS and func is not None and ".pluginmanager." in f".{func}":
            self.add(
                "collection-changed",
                node,
                "pluginmanager.register",
                f"registers a plugin{self._in()}: a plugin can change which tests run and "
                "how they score",
            )
        elif name == "addinivalue_line":
            key = node.args[0] if node.args else None
            if not (isinstance(key, ast.Constant) and key.value == "markers"):
                self.add(
                    "runner-options",
                    node,
                    f"addinivalue_line {self.shape(key) if key is not None else ''}",
                    f"adds to the ini option {show(key) if key is not None else '?'}"
                    f"{self._in()}: it changes how the suite runs",
                )
        elif name in ("force_result", "force_exception") and "pluggy" not in self.own:
            self.add(
                "outcome-changed",
                node,
                name,
                f"calls {name}{self._in()}: it replaces a hook's result",
            )
        elif func in HYPOTHESIS_SETTINGS:
            self._hypothesis(node, func)
        elif func == "hypothesis.seed":
            self.add(
                "runner-options",
                node,
                "hypothesis.seed",
                f"@hypothesis.seed{self._in()} fixes Hypothesis's seed: it explores one path only",
            )
        if self.hermetic:
            self._hermetic(node, func)

    def _literal_code(self, call: ast.Call) -> bool:
        return False  # the statements' reader reads it (statements.py)

    def _method_called(self, node: ast.Call) -> Optional[str]:
        """operator.methodcaller("_exit", 0)(os) calls os._exit."""
        maker = node.func
        if not (isinstance(maker, ast.Call) and maker.args and len(node.args) == 1):
            return None
        method = maker.args[0]
        if self.dotted(maker.func) != "operator.methodcaller" or not constant_str(method):
            return None
        owner = self.dotted(node.args[0])
        return f"{owner}.{method.value}" if owner is not None else None  # type: ignore[attr-defined]

    def _shared_reader(self, node: ast.AST, target: str, how: str) -> bool:
        """A conftest that replaces time.*, random.* (...) replaces them for every
        module: the code under test's clock and draws, and the oracle's."""
        module = target.partition(".")[0]
        if not self.conftest or module not in SHARED_READERS or "." not in target:
            return False
        self.add(
            "oracle-patched",
            node,
            f"replaces {target}",
            f"{how} {target}{self._in()}: a conftest's stand-in is every module's {target}, "
            "the oracle's too",
        )
        return True

    def _patch_call(self, node: ast.Call, func: Optional[str], name: str) -> None:
        if name in ("object", "dict") and (func is None or ".patch." not in f".{func}"):
            return
        if not node.args:
            return
        first = node.args[0]
        how = func or name
        if isinstance(first, ast.Attribute) and is_option(first, whole=True):
            self.add(
                "runner-options",
                node,
                f"{name} option",
                f"{how} on {show(first)}{self._in()}: it changes the command line's options",
            )
            return
        modules = self.dotted(first) == "sys.modules" or (
            isinstance(first, ast.Constant) and first.value == "sys.modules"
        )
        if modules:
            self._sys_modules(node, how, node.args[1:] + [k.value for k in node.keywords])
            return
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            target = first.value
            found = self.oracle(target)
            if name != "delattr" and self._shared_reader(node, target, f"{how} on"):
                return
        else:
            owner = self.dotted(first)
            target = owner or show(first)
            found = self.oracle(owner)
            attribute = node.args[1] if len(node.args) >= 2 else None
            if attribute is not None and constant_str(attribute):
                target = f"{target}.{attribute.value}"  # type: ignore[attr-defined]
                if owner is not None and name in ("setattr", "object"):
                    if self._shared_reader(node, target, f"{how} on"):
                        return
                item = (owner or "").rpartition(".")[2] in TEST_ITEMS
                if name == "setattr" and item and attribute.value in TEST_FUNCTION_ATTRIBUTES:  # type: ignore[attr-defined]
                    self._test_function_replaced(node, f"{how} of {target}")
                    return
                if name in ("setattr", "delattr") and attribute.value in SKIP_ATTRIBUTES:  # type: ignore[attr-defined]
                    self.add(
                        "skip-added",
                        node,
                        f"{name} {attribute.value}",  # type: ignore[attr-defined]
                        f"{how} of {attribute.value}{self._in()}: "  # type: ignore[attr-defined]
                        f"{SKIP_ATTRIBUTES[attribute.value]}",  # type: ignore[attr-defined]
                    )
                    return
                named = attribute.value  # type: ignore[attr-defined]
                outcome = named in OUTCOME_ATTRIBUTES | {"runtest"} or (
                    named == "outcome" and report_like(owner)
                )
                if name in ("setattr", "delattr") and outcome:
                    self.add(
                        "outcome-changed",
                        node,
                        f"{name} .{attribute.value}",  # type: ignore[attr-defined]
                        f"{how} of {attribute.value}{self._in()}: it changes what the run "  # type: ignore[attr-defined]
                        "reports",
                    )
                    return
            if self._framework(owner):
                self.add(
                    "outcome-changed",
                    node,
                    f"{name} {target}",
                    f"{how} on {target}{self._in()}: it patches how pytest or unittest runs and "
                    "scores tests",
                )
                return
            if func in ("setattr", "delattr", "builtins.setattr", "builtins.delattr"):
                if owner in ("builtins", "__builtins__"):
                    self.add(
                        "oracle-patched",
                        node,
                        f"{name} builtins",
                        f"{name}() on builtins{self._in()}: it changes every module's builtins",
                    )
                    return
        if found is not None:
            self.add(
                "oracle-patched",
                node,
                f"{name} {target}",
                f"{how} on {target}{self._in()}, which the contract protects ({found!r})",
            )

    def _test_function_replaced(self, node: ast.AST, how: str) -> None:
        self.add(
            "outcome-changed",
            node,
            "replaces the test function",
            f"{how}{self._in()}: it replaces the function a collected test runs, so the "
            "test's own code never runs",
        )

    def _namespace_patched(self, node: ast.AST, written: str, how: str, shown: ast.AST) -> bool:
        """vars(X) or X.__dict__ written, for X the oracle, builtins or pytest itself."""
        found = self.oracle(written)
        if written in ("builtins", "__builtins__"):
            self.add(
                "oracle-patched",
                node,
                f"{how} vars(builtins)",
                f"{how} {show(shown)}: it changes every module's builtins",
            )
        elif found is not None:
            self.add(
                "oracle-patched",
                node,
                f"{how} vars({written})",
                f"{how} {show(shown)}{self._in()}: it writes {written}, which the contract "
                f"protects ({found!r})",
            )
        elif self._framework(written):
            self.add(
                "outcome-changed",
                node,
                f"{how} vars({written})",
                f"{how} {show(shown)}{self._in()}: it patches how pytest or unittest runs and "
                "scores tests",
            )
        else:
            return False
        return True

    def _dunder_setattr(self, node: ast.Call, how: str) -> None:
        """object.__setattr__(X, "a", v), type.__setattr__(...), X.__setattr__("a", v)."""
        func = node.func
        if how in ("object.__setattr__", "type.__setattr__", "object.__delattr__"):
            if node.args:
                self._patch_call(node, "setattr", "setattr")
            return
        if isinstance(func, ast.Attribute) and node.args and constant_str(node.args[0]):
            receiver = func.value
            written = self.dotted(receiver)
            if isinstance(receiver, ast.Attribute) and is_option(receiver, whole=True):
                self.add(
                    "runner-options",
                    node,
                    "__setattr__ option",
                    f"{how} on {show(receiver)}{self._in()}: it changes the command line's options",
                )
            elif written is not None:
                self._namespace_patched(node, written, how, node)

    def _mapping_write(self, node: ast.Call, mapping: ast.expr, how: str) -> None:
        """vars(config.option).update(...), config.option.__dict__[...], sys.modules.update(...)."""
        original = mapping
        mapping = namespace_of(mapping, self)
        written = self.dotted(mapping) if mapping is not original else None
        if written is not None and self._namespace_patched(node, written, how, node):
            return
        if isinstance(mapping, ast.Call) and self.dotted(mapping.func) in ("globals", "locals"):
            for keyword in node.keywords:  # globals().update(pytest_collection_modifyitems=f)
                if keyword.arg is not None:
                    self._hook_name(keyword.arg, node, anywhere=True)
            return
        if isinstance(mapping, ast.Attribute) and is_option(mapping, whole=True):
            self.add(
                "runner-options",
                node,
                f"{how.rpartition('.')[2]} option",
                f"{how} on {show(mapping)}{self._in()}: it changes the command line's options",
            )
        elif self.dotted(mapping) == "sys.modules":
            self._sys_modules(node, how, list(node.args))

    def _sys_modules(self, node: ast.AST, how: str, given: Sequence[ast.expr]) -> None:
        """sys.modules changed through a call: the oracle's modules named as keys or
        arguments are replaced (a key not written out could be any module)."""
        names: List[object] = []
        for value in given:
            if isinstance(value, ast.Dict):
                names += [k.value for k in value.keys if isinstance(k, ast.Constant)]
            elif isinstance(value, ast.Constant):
                names.append(value.value)
            elif isinstance(value, (ast.List, ast.Tuple)):  # update([("oracle.x", m)])
                pairs = [e for e in value.elts if isinstance(e, ast.Tuple) and e.elts]
                names += [p.elts[0].value for p in pairs if isinstance(p.elts[0], ast.Constant)]
        for name in names:
            found = self.oracle(name) if isinstance(name, str) else None
            if found is not None:
                self.add(
                    "oracle-patched",
                    node,
                    f"sys.modules {name}",
                    f"{how} replaces sys.modules[{name!r}]{self._in()}, which the contract "
                    f"protects ({found!r})",
                )
