"""Hypothesis's settings, and what a hermetic path may not call."""

from __future__ import annotations

import ast
from typing import Optional

from oracle_guard.checks.test_tamper.names import (
    CLOCK,
    ENTROPY,
    ENTROPY_FILES,
    HYPOTHESIS_DEFAULT_EXAMPLES,
    NETWORK,
    SEAM_CLOCK,
    SEAM_ENTROPY,
    SEAM_NETWORK,
    SEEDED,
)
from oracle_guard.checks.test_tamper.resolve import Resolver
from oracle_guard.checks.test_tamper.syntax import constant_str, show


class Settings(Resolver):
    def _hypothesis(self, node: ast.Call, func: str) -> None:
        name = node.args[0].value if node.args and constant_str(node.args[0]) else None  # type: ignore[attr-defined]
        if func.endswith("load_profile") and name in self.clean_profiles:
            return  # registered above in this file, with nothing lowered
        if func.endswith("register_profile") and name is not None:
            before = len(self.marks)
            self._hypothesis_settings(node, func)
            clean = len(self.marks) == before and "parent" not in {k.arg for k in node.keywords}
            given = node.args[1:]
            if len(given) == 1 and isinstance(given[0], ast.Call):
                # register_profile(NAME, settings(...)): the settings are judged where
                # the walk reaches them; here only whether they lower anything
                self._hypothesis_settings(given[0], "hypothesis.settings")
                clean = clean and len(self.marks) == before
                del self.marks[before:]
                given = [] if self.dotted(given[0].func) == "hypothesis.settings" else given
            if clean and not given:
                self.clean_profiles.add(name)
            return
        self._hypothesis_settings(node, func)

    def _hypothesis_settings(self, node: ast.Call, func: str) -> None:
        if func.endswith("load_profile"):
            self.add(
                "runner-options",
                node,
                f"{func} {self.shape(node.args[0]) if node.args else ''}",
                f"loads a Hypothesis profile{self._in()}: it can lower the example count",
            )
            return
        for keyword in node.keywords:
            value = keyword.value
            if keyword.arg is None:
                self.add(
                    "runner-options",
                    node,
                    f"{func} **{self.shape(value)}",
                    f"sets Hypothesis settings from a mapping{self._in()}: they can lower the "
                    "example count or switch phases off",
                )
            elif keyword.arg == "max_examples":
                if isinstance(value, ast.Constant) and type(value.value) is int:
                    if value.value >= HYPOTHESIS_DEFAULT_EXAMPLES:
                        continue
                self.add(
                    "runner-options",
                    node,
                    f"max_examples={self.shape(value)}",
                    f"sets max_examples={show(value)}{self._in()}: fewer examples than "
                    f"Hypothesis's default {HYPOTHESIS_DEFAULT_EXAMPLES}",
                )
            elif keyword.arg == "deadline" and isinstance(value, ast.Constant):
                if value.value is None:
                    self.add(
                        "runner-options",
                        node,
                        "deadline=None",
                        f"sets deadline=None{self._in()}: it switches Hypothesis's deadline off",
                    )
            elif keyword.arg == "phases":
                self.add(
                    "runner-options",
                    node,
                    f"phases={self.shape(value)}",
                    f"sets phases{self._in()}: it can switch off generating examples",
                )

    def _hermetic(self, node: ast.Call, func: Optional[str]) -> None:
        device = None
        for argument in node.args:  # a loop, not a generator: this runs for every call
            if constant_str(argument) and argument.value in ENTROPY_FILES:  # type: ignore[attr-defined]
                device = argument.value  # type: ignore[attr-defined]
                break
        if device is not None:  # open("/dev/urandom"), Path("/dev/random")
            self.add(
                "non-hermetic",
                node,
                f"reads {device}",
                f"reads {device}{self._in()}: it draws unseeded entropy or the time: "
                f"{SEAM_ENTROPY}",
            )
            return
        if func is None:
            return
        if func in NETWORK:  # asyncio.open_connection(...): a call, not an import
            self.add(
                "non-hermetic",
                node,
                f"calls {func}",
                f"calls {func}{self._in()}, which reaches the network: {SEAM_NETWORK}",
            )
        elif func in CLOCK:
            self.add(
                "non-hermetic",
                node,
                func,
                f"{func} reads the wall clock{self._in()}: {SEAM_CLOCK}",
            )
        elif func in ENTROPY or func.startswith("secrets."):
            self.add(
                "non-hermetic",
                node,
                func,
                f"{func} draws unseeded entropy{self._in()}: {SEAM_ENTROPY}",
            )
        elif func in SEEDED:
            unseeded = not node.args and not node.keywords
            if node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value is None:
                unseeded = True
            if unseeded:
                self.add(
                    "non-hermetic",
                    node,
                    f"{func}()",
                    f"{func}() without a seed{self._in()} is seeded from the system: "
                    f"{SEAM_ENTROPY}",
                )
        elif func.startswith(("random.", "numpy.random.")):
            self.add(
                "non-hermetic",
                node,
                func,
                f"{func} uses the module's unseeded generator{self._in()}: {SEAM_ENTROPY}",
            )
