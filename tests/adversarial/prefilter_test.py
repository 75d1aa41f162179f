"""test-tamper's byte prefilter (checks/test_tamper/scan.py) never changes what a
full reading finds: over generated sources (testing/python_sources.py) that
spell the rules' names through aliases, adjacent string literals, escapes and
line continuations, ``python.marks`` equals the reader's walk of the whole tree.

A longer exploratory run with a random seed:

    ORACLE_GUARD_EXPLORE=1 .venv/bin/python -m pytest tests/adversarial/prefilter_test.py
"""

from __future__ import annotations

import ast

import pytest
from hypothesis import given

from oracle_guard.checks.test_tamper import python, scan
from oracle_guard.parsing.patterns import PatternSet
from testing.bounds import property_settings
from testing.python_sources import source

PROTECTED = PatternSet(["oracle/**"])


def oracle_of(module):
    stem = module.replace(".", "/")
    forms = [f"{stem}.py", f"{stem}/__init__.py"]
    return next((m for m in map(PROTECTED.first_match, forms) if m), None)


def full_reading(data: bytes, conftest: bool):
    reader = python.Reader("tests", False, oracle_of, conftest)
    reader.read(ast.parse(data))
    return reader.marks + python.doctest_skips(data)


@property_settings(max_examples=300)
@given(text=source())
def test_the_prefilter_never_changes_what_a_full_reading_finds(text):
    data = text.encode()
    for conftest in (True, False):
        assert python.marks(data, "tests", False, oracle_of, conftest) == full_reading(
            data, conftest
        )


@pytest.mark.parametrize(
    "text, rule",
    [
        # issue 31, change 6: adjacent literals join into a name no byte spells
        ('import os\ngetattr(os, "_ex" "it")(0)\n', "process-exit"),
        ("def pytest_configure(config):\n    setattr(config, 'tests' 'failed', 0)\n", None),
        ("import os\ngetattr(os, ('_e'  # it's\n    \"xit\"))(0)\n", "process-exit"),
        ('import os\ngetattr(os, ("_e"\r    "" r"xit"))(0)\n', "process-exit"),
        # escapes spell a name in other bytes
        ('import os\ngetattr(os, "_\\x65xit")(0)\n', "process-exit"),
        ("import os\ngetattr(os, '_\\145xit')(0)\n", "process-exit"),
        ('import os\ngetattr(os, "_\\u0065xit")(0)\n', "process-exit"),
        ('import os\ngetattr(os, "_\\N{LATIN SMALL LETTER E}xit")(0)\n', "process-exit"),
    ],
)
def test_names_spelled_in_pieces_or_escapes_are_read_in_full(text, rule):
    data = text.encode()
    assert scan.triggered(data, oracle_of)
    found = [m.rule for m in python.marks(data, "tests", False, oracle_of)]
    assert found == [rule or "outcome-changed"]


@pytest.mark.parametrize(
    "text",
    [
        'x = ""\ny = \'\'\n"""A docstring."""\n',
        'print("a", "b")\nvalue = "plain\\n"\n',
        'message = ("one part " "and another")\n',
    ],
)
def test_honest_strings_still_pass_the_prefilter_unread(text):
    """The near miss: empty strings, docstrings, \\n escapes and honest joined
    text need no full reading."""
    assert not scan.triggered(text.encode(), oracle_of)
