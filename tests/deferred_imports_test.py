"""An import inside a function says why it waits (CONTRIBUTING.md): a comment on
its line or the line above, such as ``# deferred: jsonschema: 52 ms to import, only
for problems()``. A run of imports shares the comment above its first. An import
with no reason to wait belongs at the top of its module."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import List

HOOKS = Path(__file__).resolve().parents[1] / "hooks"


def unexplained(source: str) -> List[int]:
    """The lines of function-level imports that carry no comment."""
    lines = source.splitlines()
    found = set()
    for function in ast.walk(ast.parse(source)):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(function):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    found.add((node.lineno, node.end_lineno or node.lineno))
    explained = set()
    missing = []
    for start, end in sorted(found):
        own = any("#" in line for line in lines[start - 1 : end])
        above = lines[start - 2].strip() if start >= 2 else ""
        if own or above.startswith("#") or (start - 1) in explained:
            explained.add(end)
        else:
            missing.append(start)
    return missing


def test_every_import_inside_a_function_says_why():
    missing = []
    for path in sorted(HOOKS.rglob("*.py")):
        name = path.relative_to(HOOKS).as_posix()
        if name.startswith("_generated/"):
            continue
        missing += [f"hooks/{name}:{line}" for line in unexplained(path.read_text("utf-8"))]
    assert missing == []


def test_an_import_without_a_comment_is_named():
    source = (
        "import os\n\n\n"
        "def f():\n"
        "    # deferred: yaml: 10 ms to import, only for f()\n"
        "    import yaml\n"
        "    from yaml import safe_load\n"  # the run the comment above heads
        "\n"
        "    import json\n"  # a blank line ends the run
        "    import re  # here: a reason of its own\n"
        "    return os, yaml, safe_load, json, re\n"
    )
    assert unexplained(source) == [9]
