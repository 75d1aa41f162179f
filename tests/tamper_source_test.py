"""test-tamper's source-side rules (hooks/checks/test_tamper/source.py): the code
under test, outside the scoring tree, reaching into the runner or the oracle.
Each rule fires beside a near miss that passes; only what the change adds counts."""

from __future__ import annotations

import pytest

from testing.oracle import NOW
from testing.trees import judged, memory

CONTRACT = """\
version: 1
write_set:
  allow: ["src/**", "tests/**", "lib/**"]
  deny: ["oracle/**"]
tamper:
  paths: ["tests/**"]
"""
S = "src/app.py"


def found(before, after):
    base = memory({".oracle-guard.yaml": CONTRACT, **before}, "HEAD")
    candidate = memory({".oracle-guard.yaml": CONTRACT, **after})
    rc, out, err = judged(base, candidate, ["test-tamper"], NOW)
    assert err == "", err
    lines = out.splitlines()
    findings = lines[: next(n for n, line in enumerate(lines) if line.startswith("test-tamper: "))]
    assert rc == (1 if findings else 0), out
    return findings


ORACLE_READ = (
    "code under test that reads the oracle or the tests can answer them instead of computing"
)
RUNNER = "code under test that reaches the test runner can change how its tests run or score"
STACK = "code under test that reads its callers can tell a test from a real run"
EXIT = "importing the code under test ends the run with its status, not the tests'"
EQUAL = "an assertion of equality on it passes without checking anything"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import os\nos._exit(0)\n", f"2: process-exit: calls os._exit at import: {EXIT}"),
        (
            "import sys\nclass A:\n    sys.exit(0)\n",
            f"3: process-exit: calls sys.exit at import: {EXIT}",
        ),
        (
            "import atexit, os\natexit.register(os._exit, 0)\n",
            "2: process-exit: registers an exit with atexit: the run would end with its status, "
            "not the tests'",
        ),
        ("import _pytest.runner\n", f"1: source-reaches-runner: imports _pytest.runner: {RUNNER}"),
        (
            "import pytest\n\ndef skip_it():\n    pytest.skip('later')\n",
            f"1: source-reaches-runner: imports pytest: {RUNNER}",
        ),
        (
            "from unittest.case import TestCase\n",
            f"1: source-reaches-runner: imports unittest.case: {RUNNER}",
        ),
        (
            "import inspect\ndef f():\n    return inspect.stack()[1]\n",
            f"3: source-reaches-runner: calls inspect.stack: {STACK}",
        ),
        (
            "import sys\ndef f():\n    return sys._getframe(2)\n",
            f"3: source-reaches-runner: calls sys._getframe: {STACK}",
        ),
        (
            "import os\nX = os.environ.get('PYTEST_CURRENT_TEST')\n",
            f"2: source-reaches-runner: names PYTEST_CURRENT_TEST: {STACK.replace('reads its callers', 'reads it')}",
        ),
        (
            "import json\njson.loads = lambda s: {}\n",
            "2: oracle-patched: assigns json.loads: it replaces the standard library's loads for "
            "every module, the oracle's too",
        ),
        (
            "import builtins\nsetattr(builtins, 'open', print)\n",
            "2: oracle-patched: setattr() on builtins: it replaces the standard library's builtins "
            "for every module, the oracle's too",
        ),
        (
            "def f():\n    return open('oracle/expected.json').read()\n",
            f"2: oracle-read: names 'oracle/expected.json', which the contract protects "
            f"('oracle/**'): {ORACLE_READ}",
        ),
        (
            "def f():\n    return open('./tests/test_x.py').read()\n",
            f"2: oracle-read: names './tests/test_x.py', which lies in the scoring tree "
            f"(tamper.paths): {ORACLE_READ}",
        ),
        (
            "class Price:\n    def __eq__(self, other):\n        '''Equal.'''\n        return True\n",
            f"2: constant-equality: Price.__eq__ returns True whatever it is compared with: {EQUAL}",
        ),
        (
            "class Price:\n    __ne__ = lambda self, other: False\n",
            f"2: constant-equality: Price.__ne__ returns False whatever it is compared with: {EQUAL}",
        ),
    ],
)
def test_each_source_rule_fires(source, expected):
    assert found({}, {S: source}) == [f"{S}:{expected}"]


@pytest.mark.parametrize(
    "source",
    [
        "import sys\nif __name__ == '__main__':\n    sys.exit(0)\n",
        "import sys\ndef main():\n    sys.exit(0)\n",
        "import atexit\natexit.register(print, 'bye')\n",
        "from unittest import mock\nfrom unittest.mock import patch\n",
        "import logging\nlog = logging.getLogger(__name__)\n",
        "class A:\n    def f(self):\n        self.loads = 1\n",
        "import json\nDATA = json.loads('{}')\n",
        "import sys\nsys.stdout.fileno_hint = 1\n",  # an object's attribute, not the module's
        "import pdb\npdb.Pdb.prompt = '> '\n",
        "CONTENT_TYPE = 'application/json'\nURL = 'https://example.com/tests/x'\n",
        "class Price:\n    def __eq__(self, other):\n        return self.cents == other.cents\n",
        "class Price:\n    def __eq__(self, other):\n        return NotImplemented\n",
    ],
)
def test_honest_source_passes(source):
    assert found({}, {S: source}) == []


def test_what_the_base_already_held_is_not_new():
    old = "import pytest\n"
    assert found({S: old}, {S: old + "X = 1\n"}) == []
    assert found({S: old}, {S: old + "import inspect\ninspect.stack()\n"}) == [
        f"{S}:3: source-reaches-runner: calls inspect.stack: {STACK}"
    ]


def test_test_code_is_judged_by_the_test_reading_not_these_rules():
    # a test module outside the scoring tree may import pytest; a conftest too
    assert (
        found({}, {"lib/test_app.py": "import pytest\n", "lib/conftest.py": "import pytest\n"})
        == []
    )
