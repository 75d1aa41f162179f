"""Hypothesis strategies for Python test files that hide what matters in their spelling.

The names test-tamper's rules know (markers, exits, hooks, outcome attributes,
the oracle's modules) are written the ways Python lets them be written without
their bytes: through an alias, as a string split into adjacent literals, with
escapes, across lines inside parentheses, inside definitions and blocks. Every
source generated parses; tests/adversarial/prefilter_test.py compares the byte
prefilter's answer with a full reading of each.
"""

from __future__ import annotations

from typing import List

from hypothesis import strategies as st

from oracle_guard.checks.test_tamper import names

# dotted names the rules know, and honest ones beside them
KNOWN = sorted(
    {
        *names.SKIP_MARKERS,
        *names.SKIP_CALLS,
        *names.EXITS,
        *names.HOOKED_DYNAMIC,
        *names.DYNAMIC,
        *names.WARNING_FILTERS,
        *names.HYPOTHESIS_SETTINGS,
        "oracle.scoring.grade",
        "builtins.open",
        "json.loads",
        "sys.modules",
        "os.path.join",
        "helpers.build",
    }
)
HOOKS = sorted(
    {*names.COLLECTION_HOOKS, *names.OUTCOME_HOOKS, *names.OPTION_HOOKS, "pytest_configure"}
)
ATTRIBUTES = sorted(
    {*names.OUTCOME_ATTRIBUTES, *names.SKIP_ATTRIBUTES, *names.TEST_FUNCTION_ATTRIBUTES}
    | {"runtest", "outcome", "items", "value"}
)
MODULES = ["sys", "os", "pytest", "unittest", "builtins", "oracle.scoring", "json", "helpers"]
NAMES = ["x", "result", "obj", "request.node", "config", "session", "item"]
PARAMETER_SETS = [
    "[]",
    "()",
    "range(0)",
    "range(2)",
    "list()",
    "[x for x in ()]",
    "[1] * 0",
    "[1, 2]",
]


@st.composite
def string_literal(draw, text: str) -> str:
    """``text`` as a string expression whose value is ``text``: in pieces side
    by side, each with its own quotes, some characters as escapes."""
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=3)))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)]) if a < b] or [""]
    spelled = []
    for piece in pieces:
        quote = draw(st.sampled_from(["'", '"', "'''", '"""']))
        out = []
        for char in piece:
            how = draw(st.sampled_from(["plain"] * 6 + ["hex", "octal", "unicode"]))
            if how == "hex":
                out.append(f"\\x{ord(char):02x}")
            elif how == "octal":
                out.append(f"\\{ord(char):03o}")
            elif how == "unicode":
                out.append(f"\\u{ord(char):04x}")
            else:
                out.append(char)
        prefix = draw(st.sampled_from(["", "", "u"]))
        spelled.append(f"{prefix}{quote}{''.join(out)}{quote}")
    between = draw(st.sampled_from([" ", "", "  ", "\n    ", " \\\n    ", "  # note\n    "]))
    if len(spelled) == 1:
        return spelled[0]
    return "(" + between.join(spelled) + ")"


@st.composite
def reference(draw) -> List[str]:
    """Lines that import a known name under some name, and the name to use it by."""
    dotted = draw(st.sampled_from(KNOWN))
    module, _, attribute = dotted.rpartition(".")
    alias = draw(st.sampled_from(["", "alias", "_m", "skipper"]))
    if not module:
        return ["", dotted]
    form = draw(st.sampled_from(["import", "from", "getattr", "import_module"]))
    if form == "import":
        top = module.split(".")[0]
        if alias:
            return [f"import {module} as {alias}", f"{alias}.{attribute}"]
        return [f"import {module}", f"{module}.{attribute}" if top else dotted]
    if form == "from":
        bound = alias or attribute
        tail = f" as {alias}" if alias else ""
        return [f"from {module} import {attribute}{tail}", bound]
    spelled = draw(string_literal(attribute))
    if form == "getattr":
        top = module.split(".")[0]
        return [f"import {top}", f"getattr({module}, {spelled})"]
    module_spelled = draw(string_literal(module))
    return ["import importlib", f"getattr(importlib.import_module({module_spelled}), {spelled})"]


@st.composite
def statement(draw) -> List[str]:
    """One or more lines: a use of a known name, a hook, a patch, a mark."""
    kind = draw(
        st.sampled_from(
            [
                *("call", "refer", "decorate", "hook", "setattr", "assign", "modules"),
                *("add_marker", "parameters", "methodcaller", "unload", "shared", "doctest"),
            ]
        )
    )
    if kind == "parameters":
        values = draw(st.sampled_from(PARAMETER_SETS))
        if draw(st.booleans()):
            return [
                "import pytest",
                f"@pytest.mark.parametrize('n', {values})",
                "def test_n(n):",
                "    pass",
            ]
        return [
            "import pytest",
            f"@pytest.fixture(params={values})",
            "def each(request):",
            "    pass",
        ]
    if kind == "methodcaller":
        method = draw(string_literal(draw(st.sampled_from(["_exit", "exit", "strip", "skip"]))))
        owner = draw(st.sampled_from(["os", "sys", "pytest", "text"]))
        return ["import operator, os, sys, pytest", f"operator.methodcaller({method}, 0)({owner})"]
    if kind == "unload":
        method = draw(st.sampled_from(["set_blocked", "unregister", "is_blocked", "get_plugin"]))
        return [f"config.pluginmanager.{method}({draw(string_literal('unittest'))})"]
    if kind == "shared":
        module = draw(st.sampled_from(["time", "random", "json", "os"]))
        attribute = draw(st.sampled_from(["time", "random", "perf_counter", "loads"]))
        how = draw(st.sampled_from(["assign", "setattr", "string"]))
        if how == "assign":
            return [f"import {module}", f"{module}.{attribute} = print"]
        if how == "setattr":
            return [f"import {module}", f"monkeypatch.setattr({module}, {attribute!r}, print)"]
        return [f"monkeypatch.setattr({draw(string_literal(f'{module}.{attribute}'))}, print)"]
    if kind == "doctest":
        flag = draw(st.sampled_from(["+SKIP", "+ELLIPSIS", "+ELLIPSIS, +SKIP", "-SKIP"]))
        return ['"""', f">>> run()  # doctest: {flag}", "1", '"""']
    if kind in ("call", "refer", "decorate"):
        imported, used = draw(reference())
        lines = [imported] if imported else []
        if kind == "call":
            return lines + [f"{used}({draw(st.sampled_from(['', '0', 'reason=1']))})"]
        if kind == "refer":
            return lines + [f"handler = {used}"]
        return lines + [f"@{used}", "def test_it():", "    pass"]
    if kind == "hook":
        name = draw(st.sampled_from(HOOKS))
        how = draw(st.sampled_from(["def", "assign", "globals", "for", "with", "walrus"]))
        if how == "for":
            return [f"for {name} in [print]:", "    pass"]
        if how == "with":
            return [f"with open(__file__) as {name}:", "    pass"]
        if how == "walrus":
            return [f"({name} := print)"]
        if how == "def":
            return [f"def {name}(*args):", "    return None"]
        if how == "assign":
            return [f"{name} = print"]
        return [f"globals()[{draw(string_literal(name))}] = print"]
    if kind == "setattr":
        owner = draw(st.sampled_from(NAMES + MODULES))
        attribute = draw(string_literal(draw(st.sampled_from(ATTRIBUTES))))
        imported = [f"import {owner}"] if owner in MODULES else []
        if owner in MODULES and draw(st.booleans()):  # under another name
            imported, owner = [f"import json, {owner} as alias"], "alias"
        elif owner == "unittest" and draw(st.booleans()):
            imported, owner = ["from unittest import mock"], "mock"
        call = draw(st.sampled_from(["setattr", "monkeypatch.setattr", "mock.patch.object"]))
        return imported + [f"{call}(  # patched\n    {owner}, {attribute}, 0)"]
    if kind == "assign":
        owner = draw(st.sampled_from(NAMES + MODULES))
        attribute = draw(st.sampled_from(ATTRIBUTES))
        imported = [f"import {owner}"] if owner in MODULES else []
        return imported + [f"{owner}.{attribute} = 0"]
    if kind == "modules":
        key = draw(string_literal(draw(st.sampled_from(MODULES))))
        return ["import sys", f"sys.modules[{key}] = None"]
    marker = draw(string_literal(draw(st.sampled_from(["skip", "xfail", "slow", "skipif"]))))
    return [f"request.node.add_marker({marker})"]


@st.composite
def source(draw) -> str:
    """A module of a few statements, some inside a function, class or block."""
    lines: List[str] = []
    for _ in range(draw(st.integers(1, 4))):
        body = draw(statement())
        imports = [line for line in body if line.startswith(("import ", "from "))]
        rest = [line for line in body if line not in imports]
        lines += imports
        where = draw(st.sampled_from(["module", "function", "class", "if", "with"]))
        if where == "module":
            lines += rest
            continue
        head = {
            "function": "def test_case(request, config, session, item):",
            "class": "class TestCase_:",
            "if": "if True:",
            "with": "with open(__file__) as handle:",
        }[where]
        lines.append(head)
        lines += ["    " + line.replace("\n", "\n    ") for line in rest]
    return "\n".join(lines) + "\n"
