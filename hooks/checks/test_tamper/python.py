"""Python test code: the marks its syntax holds (stdlib ast; nothing is imported or run).

Names are resolved through the file's imports, so ``from sys import exit as
bye; bye()`` is ``sys.exit``, and ``getattr(__import__("sys"), "exit")`` is too.
What only running the code could tell (a name built from strings at run time,
an alias kept in a variable) is not followed: exec, eval, a computed getattr on
a module that matters, and a module-level ``__getattr__`` are findings of their
own, since they hide code from this reading.

The reading is in parts: names.py (the tables), scan.py (the byte prefilter),
syntax.py (ast helpers), and the reader, one concern a module, each class
built on the one before: resolve.py (names through the imports), settings.py
(Hypothesis, hermetic paths), bindings.py (hooks and names pytest reads),
calls.py (expressions and calls), statements.py (the walk)."""

from __future__ import annotations

import ast
import gc
import re
from typing import FrozenSet, List

from oracle_guard.checks.test_tamper.marks import Mark, package_of
from oracle_guard.checks.test_tamper.names import OracleOf
from oracle_guard.checks.test_tamper.scan import plain, triggered
from oracle_guard.checks.test_tamper.statements import Reader

__all__ = [
    "Mark",
    "OracleOf",
    "Reader",
    "doctest_skips",
    "doctest_source",
    "marks",
    "package_of",
    "triggered",
]


def marks(
    data: bytes,
    package: str,
    hermetic: bool,
    oracle_of: OracleOf,
    conftest: bool = True,
    own: FrozenSet[str] = frozenset(),
) -> List[Mark]:
    """Every mark in one file's bytes. ``package`` is the dotted package the
    file is in (for relative imports); ``hermetic`` says whether the file lies
    in a hermetic path."""
    if not hermetic and plain(data) and not triggered(data, oracle_of, conftest):
        try:  # only whether it parses: compiling makes no Python objects, a tree does
            compile(data, "<test>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            return [_unparsable(exc)]
        return doctest_skips(data) if b"doctest" in data else []
    collecting = gc.isenabled()
    gc.disable()  # a tree holds no cycles: the collector would only walk it, over and over
    try:
        tree = ast.parse(data)
        reader = Reader(package, hermetic, oracle_of, conftest)
        reader.own = own
        reader.read(tree)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return [_unparsable(exc)]
    finally:
        if collecting:
            gc.enable()
    return reader.marks + (doctest_skips(data) if b"doctest" in data else [])


def _unparsable(exc: BaseException) -> Mark:
    if isinstance(exc, SyntaxError):
        where = f" (column {exc.offset})" if exc.offset else ""
        return Mark(
            "test-unparsable",
            exc.lineno or 1,
            "syntax",
            "",
            f"does not parse: {exc.msg}{where}",
        )
    if isinstance(exc, (RecursionError, MemoryError)):
        return Mark("test-unparsable", 1, "syntax", "", "does not parse: nested too deeply")
    return Mark("test-unparsable", 1, "syntax", "", f"does not parse: {exc}")


_PROMPT = re.compile(rb"^([ \t]*)(?:>>>|\.\.\.)(?: |$)(.*)$")


def doctest_source(data: bytes) -> bytes:
    """A doctest file's examples as one module: each example line at its own line
    (prompts and their indent dropped), every other line blank, so a mark keeps
    the line it has in the file."""
    lines = []
    for line in data.split(b"\n"):
        match = _PROMPT.match(line.rstrip(b"\r"))
        lines.append(match.group(2) if match else b"")
    return b"\n".join(lines) + b"\n"


# doctest's own directive syntax (doctest.DocTestParser._OPTION_DIRECTIVE_RE)
_DIRECTIVE = re.compile(rb"#\s*doctest:\s*([^\n'\"]*)$")


def doctest_skips(data: bytes) -> List[Mark]:
    """``# doctest: +SKIP`` on an example, in a doctest file or a docstring: the
    example never runs, and a failing one scores as a pass."""
    found = []
    for number, line in enumerate(data.split(b"\n"), 1):
        prompt = _PROMPT.match(line.rstrip(b"\r"))
        directive = _DIRECTIVE.search(prompt.group(2)) if prompt else None
        if directive is None:
            continue
        options = directive.group(1).replace(b",", b" ").split()
        if b"+SKIP" not in options:
            continue
        example = prompt.group(2)[: directive.start()].strip().decode("utf-8", "replace")  # type: ignore[union-attr]
        found.append(
            Mark(
                "skip-added",
                number,
                f"doctest +SKIP {example}",
                "",
                f"doctest directive +SKIP on {example[:40]!r}: a skipped example scores as a pass",
            )
        )
    return found
