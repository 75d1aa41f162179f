"""Names pytest reads by what they are bound to: hooks, skip attributes, the
module-level lists, and the exceptions that skip a test or end the run."""

from __future__ import annotations

import ast
from typing import Optional

from oracle_guard.checks.test_tamper.names import (
    COLLECTION_HOOKS,
    ENDINGS,
    EXIT_EXCEPTIONS,
    NOT_HOOKS,
    OPTION_HOOKS,
    OUTCOME_HOOKS,
    QUIET_HOOKS,
    SKIP_ATTRIBUTES,
    SKIP_EXCEPTIONS,
)
from oracle_guard.checks.test_tamper.settings import Settings
from oracle_guard.checks.test_tamper.syntax import is_false, items_of, show


class Bindings(Settings):
    def _hook_name(self, name: str, node: ast.AST, anywhere: bool = False) -> None:
        """A name pytest takes for a hook, however it is bound (def, assignment, import),
        where a plugin's attributes can hold it: at module level or in a class body
        (a name bound in a function is a local; a plugin made there is registered,
        which is a finding of its own). ``anywhere``: bound as a module global
        from wherever it is written (globals()["pytest_..."] = f)."""
        if "function" in self.kinds and not anywhere and name not in self.declared_global:
            return
        if name == "pytest_generate_tests":
            self.add(
                "collection-changed",
                node,
                name,
                f"defines {name}: it decides which parameter sets tests run with, and an "
                "empty set skips them",
            )
        elif name in COLLECTION_HOOKS:
            self.add(
                "collection-changed",
                node,
                name,
                f"defines {name}: it can deselect tests before they run",
            )
        elif name.startswith("pytest_runtest_") or name in OUTCOME_HOOKS:
            self.add(
                "outcome-changed",
                node,
                name,
                f"defines {name}: it can turn a failure into a pass",
            )
        elif name in OPTION_HOOKS:
            self.add(
                "runner-options",
                node,
                name,
                f"defines {name}: it can rewrite the command line's options",
            )
        elif name.startswith("pytest_") and name not in QUIET_HOOKS and name not in NOT_HOOKS:
            self.add(
                "outcome-changed",
                node,
                name,
                f"defines {name}, a pytest hook: it runs inside the session and can change "
                "which tests run or how they score",
            )

    def _named_value(self, name: str, value: ast.expr, node: ast.AST) -> None:
        if name in SKIP_ATTRIBUTES and name != "__test__" and not is_false(value):
            self.add(
                "skip-added",
                node,
                name,
                f"{name} = {show(value)} in {self.where or 'the module'}: {SKIP_ATTRIBUTES[name]}",
            )
        elif name == "__test__" and not (isinstance(value, ast.Constant) and value.value is True):
            where = self.where or "the module"
            self.add(
                "skip-added",
                node,
                "__test__",
                f"__test__ = {show(value)} hides {where} from collection: its tests never run",
            )
        elif name in ("collect_ignore", "collect_ignore_glob"):
            for item, shape in zip(items_of(value, show), items_of(value, self.shape)):
                self.add(
                    "collection-changed",
                    node,
                    f"{name} {shape}",
                    f"{name} gains {item}: pytest will not collect it",
                )
        elif name == "pytest_plugins":
            for item, shape in zip(items_of(value, show), items_of(value, self.shape)):
                self.add(
                    "collection-changed",
                    node,
                    f"pytest_plugins {shape}",
                    f"pytest_plugins loads {item}: a plugin can change which tests run and "
                    "how they score",
                )
        elif name == "pytestmark":
            pass  # its markers are found by _expression
        else:
            self._hook_name(name, node)

    def _ending(self, node: Optional[ast.expr]) -> Optional[str]:
        """The exception that skips or ends the run that ``node`` is, or makes."""
        if node is None:
            return None
        target = node.func if isinstance(node, ast.Call) else node
        dotted = self.dotted(target)
        if dotted in SKIP_EXCEPTIONS or dotted in ENDINGS:
            return dotted
        return None

    def _kept_ending(self, node: ast.AST, value: Optional[ast.expr], how: str) -> None:
        """An exception that skips or ends the run, subclassed or kept in a name:
        raised later under another name, it would not be seen at the raise."""
        dotted = self._ending(value)
        if dotted is None or self._failure_only(dotted):
            return
        rule = "skip-added" if dotted in SKIP_EXCEPTIONS or dotted == "SkipTest" else "process-exit"
        effect = "skips the test" if rule == "skip-added" else "ends the run with its status"
        self.add(
            rule,
            node,
            f"{how} {dotted}",
            f"{how} {dotted}{self._in()}: raised under another name, it {effect}",
        )

    def _raise(self, node: ast.Raise) -> None:
        exc = node.exc
        target = exc.func if isinstance(exc, ast.Call) else exc
        dotted = self.dotted(target) if target is not None else None
        if dotted in SKIP_EXCEPTIONS or dotted == "SkipTest":
            self.add(
                "skip-added",
                node,
                f"raise {dotted}",
                f"raises {dotted}{self._in()}: a skipped test scores as a pass",
            )
        elif dotted in ("SystemExit", "builtins.SystemExit") and not self._failure_only(dotted):
            self.add(
                "process-exit",
                node,
                "raise SystemExit",
                f"raises SystemExit{self._in()}: the run would end with its status, not the tests'",
            )
        elif dotted in EXIT_EXCEPTIONS:
            self.add(
                "process-exit",
                node,
                f"raise {dotted}",
                f"raises {dotted}{self._in()}: the run would end with its status, not the tests'",
            )
