"""test-tamper on trees in memory (hooks/checks/test_tamper/__init__.py and
python.py; the configuration files are tests/tamper_options_test.py's): each
rule fires with its exact code, line and message beside a near miss that must
pass; only what the change adds is judged (moves keep their history); the
tamper.allow list; the contract's section; a property (renaming variables and
reformatting create no findings and remove none); the verdict cache."""

from __future__ import annotations

import ast
import json
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oracle_guard.checks.test_tamper import python
from testing.bounds import property_settings
from testing.git import commit, git, init_repo, run_guard, stage
from testing.oracle import NOW
from testing.trees import MemoryRepo, gitlink, judged, link, memory

# src/ and tests/ writable, oracle/ denied; tests/ the scoring tree, tests/props/ hermetic
CONTRACT = """\
version: 1
write_set:
  allow: ["src/**", "tests/**"]
  deny: ["oracle/**"]
tamper:
  paths: ["tests/**"]
  hermetic: ["tests/props/**"]
"""
# The tables judge under tamper.frozen_tests, where a skip on a test the change
# adds is still a finding: they show what each form is. Without it such a skip is
# none (test_a_skip_on_a_test_the_change_adds_*).
FROZEN_TESTS = CONTRACT + '  frozen_tests: ["tests/**"]\n'
X = "tests/test_x.py"  # where the tables' code is added
P = "tests/props/test_p.py"  # the same, in the hermetic path

EXITS = "the run would end with its status, not the tests'"
DESELECTS = "it can deselect tests before they run"
PROTECTED = "which the contract protects ('oracle/**')"
CLOCK = "take the time from a fake clock fixture"
SEEDS = "use committed seeds (random.Random(SEED))"
NETWORK = "use a recorded transport (a fixture that replays recorded responses)"


def code(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def found(before, after, contract=CONTRACT):
    """The finding lines test-tamper prints when the files ``after`` replace
    ``before`` (the contract beside both); the exit code agrees with them."""
    base = memory({".oracle-guard.yaml": contract, **before}, "HEAD")
    candidate = memory({".oracle-guard.yaml": contract, **after})
    return report(judged(base, candidate, ["test-tamper"], NOW))


def report(result):
    rc, out, err = result
    assert err == "", err
    lines = out.splitlines()
    end = next(n for n, line in enumerate(lines) if line.startswith("test-tamper: "))
    findings = lines[:end]
    errors = [line for line in findings if " (warning): " not in line]
    assert rc == (1 if errors else 0), out
    return findings


def added(source, path=X):
    """The findings of a change that adds one file, its tests frozen once landed."""
    return found({}, {path: source}, FROZEN_TESTS)


def at(path, *lines):
    return [f"{path}:{line}" for line in lines]


# -- each rule fires, with its code, line and message ----------------------------------

SKIP_ADDED = [
    (
        code("import pytest", "", "@pytest.mark.skip", "def test_y():", "    pass"),
        ["3: skip-added: @pytest.mark.skip on test_y: a skipped test scores as a pass"],
    ),
    (
        code("import pytest", '@pytest.mark.skipif(True, reason="x")', "def test_y(): pass"),
        ["2: skip-added: @pytest.mark.skipif on test_y: a skipped test scores as a pass"],
    ),
    (
        code("import pytest", "@pytest.mark.xfail(strict=False)", "def test_y(): pass"),
        ["2: skip-added: @pytest.mark.xfail on test_y: a failing xfail test scores as expected"],
    ),
    (
        code("import pytest", "pytestmark = pytest.mark.skip"),
        ["2: skip-added: pytest.mark.skip at module level: a skipped test scores as a pass"],
    ),
    (
        code("import pytest", "class TestC:", "    pytestmark = [pytest.mark.skip]"),
        ["3: skip-added: pytest.mark.skip in TestC: a skipped test scores as a pass"],
    ),
    (
        code(
            "import pytest",
            '@pytest.mark.parametrize("n", [1, pytest.param(2, marks=pytest.mark.xfail)])',
            "def test_y(n): pass",
        ),
        ["2: skip-added: pytest.mark.xfail in test_y: a failing xfail test scores as expected"],
    ),
    (
        code("import pytest", "def test_y():", '    pytest.skip("later")'),
        ["3: skip-added: pytest.skip() in test_y skips the test"],
    ),
    (
        code("import pytest", "def test_y():", '    pytest.xfail("later")'),
        ["3: skip-added: pytest.xfail() in test_y marks the test as an expected failure"],
    ),
    (
        code("import pytest", 'np = pytest.importorskip("numpy")'),
        [
            "2: skip-added: pytest.importorskip() at module level skips the test when the "
            "import fails"
        ],
    ),
    (
        code("from _pytest.outcomes import skip", "def test_y():", "    skip()"),
        ["3: skip-added: _pytest.outcomes.skip() in test_y skips the test"],
    ),
    (
        code(
            "import unittest",
            "class T(unittest.TestCase):",
            '    @unittest.skip("later")',
            "    def test_m(self): pass",
            "    @unittest.expectedFailure",
            "    def test_n(self): pass",
            "    def test_o(self):",
            '        self.skipTest("later")',
        ),
        [
            "3: skip-added: @unittest.skip on test_m: a skipped test scores as a pass",
            "5: skip-added: @unittest.expectedFailure on test_n: a failing test scores as expected",
            "8: skip-added: skipTest() in T.test_o skips the test",
        ],
    ),
    (
        code("from unittest import SkipTest", "def test_y():", '    raise SkipTest("later")'),
        ["3: skip-added: raises unittest.SkipTest in test_y: a skipped test scores as a pass"],
    ),
    (
        code("__test__ = False"),
        ["1: skip-added: __test__ = False hides the module from collection: its tests never run"],
    ),
    (
        code("class TestC:", "    __test__ = 0"),
        ["2: skip-added: __test__ = 0 hides TestC from collection: its tests never run"],
    ),
    # aliases resolve through the imports
    (
        code("import pytest as pt", "@pt.mark.skip", "def test_y(): pass"),
        ["2: skip-added: @pytest.mark.skip on test_y: a skipped test scores as a pass"],
    ),
    (
        code("from pytest import mark", "@mark.skip", "def test_y(): pass"),
        ["2: skip-added: @pytest.mark.skip on test_y: a skipped test scores as a pass"],
    ),
]

COLLECTION_CHANGED = [
    (
        code("def pytest_collection_modifyitems(config, items):", "    items.clear()"),
        [
            "1: collection-changed: defines pytest_collection_modifyitems: it can deselect "
            "tests before they run"
        ],
    ),
    (
        code("def pytest_ignore_collect(collection_path, config):", "    return True"),
        [
            "1: collection-changed: defines pytest_ignore_collect: it can deselect tests before they run"
        ],
    ),
    # a hook bound by assignment, by import, by specname, through globals()
    (
        code("def reorder(items): pass", "pytest_collection_modifyitems = reorder"),
        [
            "2: collection-changed: defines pytest_collection_modifyitems: it can deselect "
            "tests before they run"
        ],
    ),
    (
        code("from plugin import pytest_collection_modifyitems"),
        [
            "1: collection-changed: defines pytest_collection_modifyitems: it can deselect "
            "tests before they run"
        ],
    ),
    (
        code(
            "import pytest",
            '@pytest.hookimpl(specname="pytest_collection_modifyitems")',
            "def reorder(items): pass",
        ),
        [
            "3: collection-changed: defines pytest_collection_modifyitems: it can deselect "
            "tests before they run"
        ],
    ),
    (
        code("def reorder(items): pass", 'globals()["pytest_deselected"] = reorder'),
        ["2: collection-changed: defines pytest_deselected: it can deselect tests before they run"],
    ),
    (
        code(
            'collect_ignore = ["test_pay.py"]',
            "collect_ignore_glob = []",
            'collect_ignore_glob.append("*pay*")',
        ),
        [
            "1: collection-changed: collect_ignore gains test_pay.py: pytest will not collect it",
            "3: collection-changed: collect_ignore_glob gains *pay*: pytest will not collect it",
        ],
    ),
    (
        code('pytest_plugins = ["shop.plugin"]'),
        [
            "1: collection-changed: pytest_plugins loads shop.plugin: a plugin can change which "
            "tests run and how they score"
        ],
    ),
    (
        code("def pytest_configure(config):", "    config.pluginmanager.register(Quiet())"),
        [
            "2: collection-changed: registers a plugin in pytest_configure: a plugin can change "
            "which tests run and how they score"
        ],
    ),
]

OUTCOME_CHANGED = [
    (
        code("def pytest_runtest_makereport(item, call):", "    pass"),
        [
            "1: outcome-changed: defines pytest_runtest_makereport: it can turn a failure into a pass"
        ],
    ),
    (
        code("from plugin import pytest_runtest_makereport"),
        [
            "1: outcome-changed: defines pytest_runtest_makereport: it can turn a failure into a pass"
        ],
    ),
    (
        code(
            "import pytest",
            '@pytest.hookimpl(specname="pytest_runtest_makereport", wrapper=True)',
            "def report(item, call):",
            "    return (yield)",
        ),
        [
            "3: outcome-changed: defines pytest_runtest_makereport: it can turn a failure into a pass"
        ],
    ),
    (
        code("def pytest_report_teststatus(report, config): pass"),
        ["1: outcome-changed: defines pytest_report_teststatus: it can turn a failure into a pass"],
    ),
    (
        code("def finish(session):", "    session.exitstatus = 0", "    session.testsfailed = 0"),
        [
            "2: outcome-changed: assigns session.exitstatus: it changes what the run reports",
            "3: outcome-changed: assigns session.testsfailed: it changes what the run reports",
        ],
    ),
    (
        code("def rewrite(report):", '    report.outcome = "passed"'),
        ["2: outcome-changed: assigns report.outcome: it changes a test's reported outcome"],
    ),
    (
        code("def rewrite(outcome):", "    outcome.force_result(None)"),
        ["2: outcome-changed: calls force_result in rewrite: it replaces a hook's result"],
    ),
]

PROCESS_EXIT = [
    (
        code("import sys", "sys.exit(0)"),
        [f"2: process-exit: calls sys.exit at module level: {EXITS}"],
    ),
    (
        code("from sys import exit as bye", "bye()"),
        [f"2: process-exit: calls sys.exit at module level: {EXITS}"],
    ),
    (
        code('getattr(__import__("sys"), "exit")(0)'),
        [f"1: process-exit: calls sys.exit at module level: {EXITS}"],
    ),
    (
        code("import importlib", 'importlib.import_module("os")._exit(0)'),
        [f"2: process-exit: calls os._exit at module level: {EXITS}"],
    ),
    (
        code(
            "import os, pytest",
            "@pytest.fixture",
            "def done():",
            "    yield",
            "    os._exit(0)",
        ),
        [f"5: process-exit: calls os._exit in done: {EXITS}"],
    ),
    (
        code(
            "import os, signal",
            "def test_y():",
            "    os.kill(os.getpid(), 9)",
            "    os.abort()",
            '    os.execv("/bin/true", ["true"])',
            "    signal.raise_signal(signal.SIGKILL)",
        ),
        [
            f"3: process-exit: calls os.kill in test_y: {EXITS}",
            f"4: process-exit: calls os.abort in test_y: {EXITS}",
            f"5: process-exit: calls os.execv in test_y: {EXITS}",
            f"6: process-exit: calls signal.raise_signal in test_y: {EXITS}",
        ],
    ),
    (
        code("exit()", "quit(0)"),
        [
            f"1: process-exit: calls exit at module level: {EXITS}",
            f"2: process-exit: calls quit at module level: {EXITS}",
        ],
    ),
    (
        code("import pytest", 'pytest.exit("done", returncode=0)'),
        [f"2: process-exit: calls pytest.exit at module level: {EXITS}"],
    ),
    (
        code("raise SystemExit(0)"),
        [f"1: process-exit: raises SystemExit at module level: {EXITS}"],
    ),
    (
        code(
            "import pytest", "def test_y():", '    raise pytest.exit.Exception("x", returncode=0)'
        ),
        [f"3: process-exit: raises pytest.exit.Exception in test_y: {EXITS}"],
    ),
    (
        code("from _pytest.outcomes import Exit, exit", 'exit("done")', "raise Exit()"),
        [
            f"2: process-exit: calls _pytest.outcomes.exit at module level: {EXITS}",
            f"3: process-exit: raises _pytest.outcomes.Exit at module level: {EXITS}",
        ],
    ),
    # an exit handed to whatever calls it later
    (
        code("import atexit, os", "atexit.register(os._exit, 0)"),
        [
            "2: process-exit: refers to os._exit at module level without calling it: whatever "
            "calls it (an atexit handler, a finalizer) would end the run with its status, not "
            "the tests'"
        ],
    ),
]

ORACLE_PATCHED = [
    (
        code("from oracle import invariants", "invariants.check = lambda *a: True"),
        [f"2: oracle-patched: assigns oracle.invariants.check, {PROTECTED}"],
    ),
    (
        code(
            "from oracle import invariants",
            "def test_total(monkeypatch):",
            '    monkeypatch.setattr(invariants, "check", lambda *a: True)',
        ),
        [
            "3: oracle-patched: monkeypatch.setattr on oracle.invariants.check in test_total, "
            f"{PROTECTED}"
        ],
    ),
    (
        code(
            "def test_total(monkeypatch):",
            '    monkeypatch.setattr("oracle.invariants.check", len)',
        ),
        [
            "2: oracle-patched: monkeypatch.setattr on oracle.invariants.check in test_total, "
            f"{PROTECTED}"
        ],
    ),
    (
        code(
            "from unittest import mock",
            '@mock.patch("oracle.invariants.check")',
            "def test_total(m): pass",
        ),
        [
            "2: oracle-patched: unittest.mock.patch on oracle.invariants.check in test_total, "
            f"{PROTECTED}"
        ],
    ),
    (
        code(
            "from unittest import mock",
            "import oracle.invariants as inv",
            "def test_total():",
            '    with mock.patch.object(inv, "check"):',
            "        pass",
        ),
        [
            "4: oracle-patched: unittest.mock.patch.object on oracle.invariants.check in "
            f"test_total, {PROTECTED}"
        ],
    ),
    (
        code("from oracle.invariants import check", "check = len"),
        [
            "2: oracle-patched: rebinds check, imported from oracle.invariants.check, which the "
            "contract protects ('oracle/**'): the test would compare against a stand-in"
        ],
    ),
    # a relative import that climbs out of tests/ into the oracle
    (
        code(
            "from ..oracle import invariants",
            "def test_total(monkeypatch):",
            '    monkeypatch.setattr(invariants, "check", len)',
        ),
        [
            "3: oracle-patched: monkeypatch.setattr on oracle.invariants.check in test_total, "
            f"{PROTECTED}"
        ],
    ),
    (
        code("import sys", 'sys.modules["oracle.x"] = fake'),
        [
            "2: oracle-patched: assigns sys.modules['oracle.x'], which the contract protects "
            "('oracle/**'): it replaces the oracle's module"
        ],
    ),
    (
        code(
            "import builtins",
            "builtins.open = fake",
            'setattr(builtins, "print", fake)',
            '__builtins__["len"] = fake',
        ),
        [
            "2: oracle-patched: assigns builtins.open: it changes every module's open",
            "3: oracle-patched: setattr() on builtins at module level: it changes every module's "
            "builtins",
            "4: oracle-patched: assigns __builtins__['len']: it changes every module's builtins",
        ],
    ),
]

RUNNER_OPTIONS = [
    (
        code("def pytest_cmdline_main(config): pass"),
        [
            "1: runner-options: defines pytest_cmdline_main: it can rewrite the command line's options"
        ],
    ),
    (
        code("def pytest_load_initial_conftests(early_config, parser, args):", "    args[:] = []"),
        [
            "1: runner-options: defines pytest_load_initial_conftests: it can rewrite the command "
            "line's options"
        ],
    ),
    (
        code("def pytest_configure(config):", '    config.option.markexpr = "not slow"'),
        [
            "2: runner-options: assigns config.option.markexpr: it changes the command line's "
            "options"
        ],
    ),
    (
        code(
            "def pytest_configure(config):",
            '    config.addinivalue_line("filterwarnings", "ignore")',
        ),
        [
            "2: runner-options: adds to the ini option 'filterwarnings' in pytest_configure: it "
            "changes how the suite runs"
        ],
    ),
    (
        code("from hypothesis import settings", "@settings(max_examples=5)", "def test_y(): pass"),
        [
            "2: runner-options: sets max_examples=5 in test_y: fewer examples than Hypothesis's "
            "default 100"
        ],
    ),
    (
        code("import hypothesis", "@hypothesis.settings(deadline=None)", "def test_y(): pass"),
        ["2: runner-options: sets deadline=None in test_y: it switches Hypothesis's deadline off"],
    ),
    (
        code(
            "from hypothesis import Phase, settings",
            "@settings(phases=[Phase.explicit])",
            "def test_y(): pass",
        ),
        ["2: runner-options: sets phases in test_y: it can switch off generating examples"],
    ),
    (
        code(
            "from hypothesis import settings",
            'settings.register_profile("quick", max_examples=10)',
            'settings.load_profile("quick")',
        ),
        [
            "2: runner-options: sets max_examples=10 at module level: fewer examples than "
            "Hypothesis's default 100",
            "3: runner-options: loads a Hypothesis profile at module level: it can lower the "
            "example count",
        ],
    ),
    (
        code("from hypothesis import given, seed", "@seed(1729)", "def test_y(): pass"),
        [
            "2: runner-options: @hypothesis.seed in test_y fixes Hypothesis's seed: it explores "
            "one path only"
        ],
    ),
]

DYNAMIC_CODE = [
    (
        # a string written out is read as the code it is: the exit in it is found
        code('exec("import sys; sys.exit(0)")'),
        [f"1: process-exit: calls sys.exit at module level: {EXITS}"],
    ),
    (
        code("def test_y(make):", '    exec("x = 1" + make())'),
        ["2: dynamic-code: calls exec in test_y: code made at run time cannot be judged"],
    ),
    (
        code("def test_y(text):", "    eval(text)", '    compile(text, "t", "exec")'),
        [
            "2: dynamic-code: calls eval in test_y: code made at run time cannot be judged",
            "3: dynamic-code: calls compile in test_y: code made at run time cannot be judged",
        ],
    ),
    (
        code("import sys", 'name = "ex" + "it"', "getattr(sys, name)(0)"),
        [
            "3: dynamic-code: getattr on sys with a computed name at module level: what it "
            "reaches cannot be judged"
        ],
    ),
    (
        code("def __getattr__(name):", "    return None"),
        [
            "1: dynamic-code: defines a module-level __getattr__: the module's names (pytest's "
            "hooks among them) are then made at run time, where this reading cannot follow"
        ],
    ),
]

RULES = (
    SKIP_ADDED
    + COLLECTION_CHANGED
    + OUTCOME_CHANGED
    + PROCESS_EXIT
    + ORACLE_PATCHED
    + RUNNER_OPTIONS
    + DYNAMIC_CODE
)


@pytest.mark.parametrize(("source", "expected"), RULES)
def test_each_form_fires_with_its_code_line_and_message(source, expected):
    assert added(source) == at(X, *expected)


NON_HERMETIC = [
    (
        code(
            "import datetime, time",
            "from datetime import date",
            "def test_y():",
            "    time.time()",
            "    datetime.datetime.now()",
            "    date.today()",
            "    time.monotonic()",
            "    time.perf_counter()",
        ),
        [
            f"4: non-hermetic: time.time reads the wall clock in test_y: {CLOCK}",
            f"5: non-hermetic: datetime.datetime.now reads the wall clock in test_y: {CLOCK}",
            f"6: non-hermetic: datetime.date.today reads the wall clock in test_y: {CLOCK}",
            f"7: non-hermetic: time.monotonic reads the wall clock in test_y: {CLOCK}",
            f"8: non-hermetic: time.perf_counter reads the wall clock in test_y: {CLOCK}",
        ],
    ),
    (
        code("from time import time as now", "STARTED = now()"),
        [f"2: non-hermetic: time.time reads the wall clock at module level: {CLOCK}"],
    ),
    (
        code(
            "import os, random, secrets, uuid",
            "def test_y():",
            "    uuid.uuid4()",
            "    os.urandom(8)",
            "    secrets.token_hex()",
            "    random.random()",
            "    random.Random()",
            "    random.Random(None)",
            "    random.seed()",
        ),
        [
            f"3: non-hermetic: uuid.uuid4 draws unseeded entropy in test_y: {SEEDS}",
            f"4: non-hermetic: os.urandom draws unseeded entropy in test_y: {SEEDS}",
            f"5: non-hermetic: secrets.token_hex draws unseeded entropy in test_y: {SEEDS}",
            "6: non-hermetic: random.random uses the module's unseeded generator in test_y: "
            f"{SEEDS}",
            "7: non-hermetic: random.Random() without a seed in test_y is seeded from the system: "
            f"{SEEDS}",
            "8: non-hermetic: random.Random() without a seed in test_y is seeded from the system: "
            f"{SEEDS}",
            "9: non-hermetic: random.seed() without a seed in test_y is seeded from the system: "
            f"{SEEDS}",
        ],
    ),
    (
        code("import requests"),
        [f"1: non-hermetic: imports requests, which reaches the network: {NETWORK}"],
    ),
    (
        code("import json, socket as s"),
        [f"1: non-hermetic: imports socket, which reaches the network: {NETWORK}"],
    ),
    (
        code("from urllib import request"),
        [f"1: non-hermetic: imports urllib.request, which reaches the network: {NETWORK}"],
    ),
    (
        code("from http.client import HTTPConnection"),
        [f"1: non-hermetic: imports http.client, which reaches the network: {NETWORK}"],
    ),
    (
        code("from requests.adapters import HTTPAdapter"),
        [f"1: non-hermetic: imports requests.adapters, which reaches the network: {NETWORK}"],
    ),
]


@pytest.mark.parametrize(("source", "expected"), NON_HERMETIC)
def test_ambient_nondeterminism_fires_in_a_hermetic_path(source, expected):
    assert added(source, P) == at(P, *expected)


@pytest.mark.parametrize("source", [source for source, _ in NON_HERMETIC])
def test_ambient_nondeterminism_outside_the_hermetic_paths_passes(source):
    assert added(source, X) == []


@pytest.mark.parametrize(
    ("source", "path"),
    [(source, X) for source, _ in RULES] + [(source, P) for source, _ in NON_HERMETIC],
)
def test_a_form_already_in_the_base_is_not_new(source, path):
    # the same file with an unrelated edit: only what the change adds counts
    edited = "# reviewed\n" + source + "def test_more(): pass\n"
    assert found({path: source}, {path: edited}) == []


# -- near misses: honest test code passes ----------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        # names that only look like the rules'
        code(
            "def skip_header(line):",
            "    return line[1:]",
            "def test_y():",
            '    assert skip_header("#a") == "a"',
        ),
        code("def test_exit_code():", "    exit_code = 0", "    assert exit_code == 0"),
        code("def test_y(proc):", "    exit = proc.returncode", "    assert exit == 0"),
        code("import pytest", "def test_y(request):", '    request.node.add_marker("slow")'),
        code("class Report:", "    def __getattr__(self, name):", "        return name"),
        code("def test_y(thing):", '    assert getattr(thing, "na" + "me") is not None'),
        code("import sys", "def test_y():", '    assert getattr(sys, "argv")'),
        # sys.exit in a docstring, a comment and a string
        code(
            '"""The CLI calls sys.exit(2) on a bad flag; pytest.skip is never used."""',
            "# sys.exit(0) would end the run: see the README",
            "def test_y():",
            '    """Never os._exit here."""',
            '    message = "sys.exit() is for the CLI, pytest.mark.skip for nobody"',
            '    assert "exit" in message',
        ),
        # markers and calls that change nothing about scoring
        code("import pytest", '@pytest.mark.parametrize("n", [1, 2])', "def test_y(n): pass"),
        code("import pytest", "@pytest.mark.slow", "def test_y(): pass"),
        code(
            "import pytest",
            "def test_y():",
            "    with pytest.raises(SystemExit):",
            "        main([])",
        ),
        code(
            "def pytest_configure(config):",
            '    config.addinivalue_line("markers", "slow: a slow test")',
        ),
        code(
            "import hypothesis",
            "@hypothesis.settings(max_examples=500, deadline=1000)",
            "def test_y(): pass",
        ),
        code(
            "from hypothesis import given, strategies as st",
            "@given(st.integers())",
            "def test_y(n): pass",
        ),
        # patching the code under test, not the oracle
        code(
            "from src import pricing",
            "from oracle import invariants",
            "def test_total(monkeypatch):",
            '    monkeypatch.setattr(pricing, "rate", 0)',
            '    monkeypatch.setattr("src.pricing.rate", 0)',
            "    assert invariants.check(pricing.total())",
        ),
        # builtins patched for the length of one test, then restored
        code(
            "import builtins",
            "from unittest import mock",
            "def test_y(monkeypatch):",
            '    monkeypatch.setattr(builtins, "input", lambda: "y")',
            '    with mock.patch("builtins.open"):',
            "        pass",
        ),
        # tests/oracle is not the oracle: the relative import stays under tests/
        code(
            "from ..oracle import invariants",
            "def test_total(monkeypatch):",
            '    monkeypatch.setattr(invariants, "check", len)',
        ).replace("..oracle", ".oracle"),
    ],
)
def test_honest_test_code_passes(source):
    assert added(source) == []


@pytest.mark.parametrize(
    "source",
    [
        code(
            "import random",
            "RNG = random.Random(1729)",
            "def test_y():",
            "    assert RNG.random() < 1",
        ),
        code("import numpy as np", "def test_y():", "    np.random.default_rng(1729).random()"),
        code("import random", "def test_y():", "    random.seed(7)"),
        code(
            "import datetime",
            "def test_y(clock):",
            "    assert clock.now() > datetime.datetime(2026, 1, 1)",
        ),
        code("import json, urllib.parse", "def test_y():", '    assert urllib.parse.quote("a b")'),
    ],
)
def test_seeded_and_faked_code_passes_in_a_hermetic_path(source):
    assert added(source, P) == []


def test_the_clock_for_a_log_line_outside_the_hermetic_paths_passes():
    source = code(
        "import logging, time",
        "def test_y():",
        "    start = time.time()",
        '    logging.info("took %.1fs", time.time() - start)',
    )
    assert added(source, X) == []
    # the near miss: the same lines in a hermetic path
    assert added(source, P) == at(
        P,
        f"3: non-hermetic: time.time reads the wall clock in test_y: {CLOCK}",
        f"4: non-hermetic: time.time reads the wall clock in test_y: {CLOCK}",
    )


@pytest.mark.parametrize("path", ["tests/conftest.py", "src/conftest.py", "conftest.py"])
def test_a_hook_bound_by_assignment_or_import_in_a_conftest_fires(path):
    source = code(
        "from plugin import pytest_runtest_makereport",
        "from plugin import reorder as pytest_collection_modifyitems",
        "def rewrite(config): pass",
        "pytest_cmdline_main = rewrite",
    )
    assert added(source, path) == at(
        path,
        "1: outcome-changed: defines pytest_runtest_makereport: it can turn a failure into a pass",
        "2: collection-changed: defines pytest_collection_modifyitems: it can deselect tests "
        "before they run",
        "4: runner-options: defines pytest_cmdline_main: it can rewrite the command line's options",
    )


def test_renaming_the_variable_a_setting_reads_creates_nothing():
    before = code(
        "from hypothesis import settings",
        "def test_y(request):",
        "    count, key = 5, 'filterwarnings'",
        "    settings(max_examples=count)",
        "    request.config.addinivalue_line(key, 'ignore')",
    )
    after = before.replace("count", "examples").replace("key", "option_name")
    assert found({X: before}, {X: after}) == []


def test_a_relative_import_is_resolved_from_the_files_folder():
    source = code(
        "from ...oracle import invariants",
        "invariants.check = len",
    )
    # tests/unit/ three levels up is the root, where oracle/ is
    assert added(source, "tests/unit/test_x.py") == at(
        "tests/unit/test_x.py", f"2: oracle-patched: assigns oracle.invariants.check, {PROTECTED}"
    )
    # two levels up is tests/, and tests/oracle/ is no oracle
    assert added(source.replace("...", ".."), "tests/unit/test_x.py") == []


# -- names the quick look must not miss ------------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # Python folds identifiers with NFKC: this is sys.exit
        (
            code("import sys", "sys.\uff45\uff58\uff49\uff54(0)"),
            [f"2: process-exit: calls sys.exit at module level: {EXITS}"],
        ),
        # a coding cookie spells the name in other bytes
        (
            code("# coding: utf-7", "import sys", "sys.+AGUAeABpAHQ-(0)"),
            [f"3: process-exit: calls sys.exit at module level: {EXITS}"],
        ),
        (
            code("def test_y(request):", '    request.config.known_args_namespace.keyword = "x"'),
            [
                "2: runner-options: assigns request.config.known_args_namespace.keyword: it "
                "changes the command line's options"
            ],
        ),
        (
            code("def test_y(early_config):", "    early_config.args = []"),
            ["2: runner-options: assigns early_config.args: it changes the command line's options"],
        ),
        # imports the quick look does not read itself
        (
            code("x = 1; from oracle.invariants import check", "check.limit = 0"),
            [f"2: oracle-patched: assigns oracle.invariants.check.limit, {PROTECTED}"],
        ),
        (
            code("if True: import oracle.invariants as inv", "inv.limit = 0"),
            [f"2: oracle-patched: assigns oracle.invariants.limit, {PROTECTED}"],
        ),
        (
            code("from oracle \\", "    import invariants", "invariants.limit = 0"),
            [f"3: oracle-patched: assigns oracle.invariants.limit, {PROTECTED}"],
        ),
    ],
)
def test_names_spelled_unusually_are_read(source, expected):
    assert added(source.encode("utf-8")) == at(X, *expected)


def test_a_latin_1_file_with_a_cookie_is_read_and_passes():
    source = "# -*- coding: latin-1 -*-\nNAME = 'caf\xe9'\ndef test_y():\n    assert NAME\n"
    assert added(source.encode("latin-1")) == []


# -- test-unparsable -------------------------------------------------------------------

SMALL = CONTRACT.replace("version: 1\n", "version: 1\nlimits:\n  test_bytes: 1024\n")
JUDGED_AS_FILES = "test code is judged as regular files only"


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (
            X,
            b"def test_y(:\n    pass\n",
            "1: test-unparsable: does not parse: invalid syntax (column 12)",
        ),
        (
            X,
            b"NAME = 1\n\xff\n",
            "2: test-unparsable: does not parse: (unicode error) 'utf-8' codec can't decode byte "
            "0xff in position 0: invalid start byte (column 1)",
        ),
        (
            X,
            b"NAME = 1\x00\n",
            "1: test-unparsable: does not parse: source code string cannot contain null bytes",
        ),
        (
            X,
            b"x = 1\n" * 200,
            "1: test-unparsable: is 1,200 bytes, above the limit of 1,024: limits.test_bytes is 1024",
        ),
        (
            X,
            link("../src/test_real.py"),
            "1: test-unparsable: is a symlink (mode 120000): pytest follows it, and "
            f"{JUDGED_AS_FILES}",
        ),
        (
            "tests/vendored",
            gitlink("a" * 40),
            "1: test-unparsable: is a submodule (mode 160000): its test code cannot be judged from "
            "this repository",
        ),
        (
            "tests/__pycache__/test_x.cpython-311.pyc",
            b"\xa7\r\r\n\x00\x00",
            "1: test-unparsable: is compiled code: it can run in the suite but cannot be read; "
            "commit the source",
        ),
        (
            "tests/_speedups.so",
            b"\x7fELF",
            "1: test-unparsable: is compiled code: it can run in the suite but cannot be read; "
            "commit the source",
        ),
        # a conftest.py outside the paths is judged all the same
        (
            "src/conftest.py",
            link("../tests/conftest.py"),
            "1: test-unparsable: is a symlink (mode 120000): pytest follows it, and "
            f"{JUDGED_AS_FILES}",
        ),
    ],
)
def test_a_file_that_cannot_be_judged_fires(path, value, expected):
    assert found({}, {path: value}, SMALL) == at(path, expected)


def test_a_syntax_error_is_reported_at_its_line():
    source = code("def test_y():", "    assert 1", "", "def test_z(:", "    pass")
    assert added(source) == at(X, "4: test-unparsable: does not parse: invalid syntax (column 12)")


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("tests/data/page.html", b"<html>\xff</html>"),  # data beside the tests
        ("tests/data/case.json", b"{"),
        ("tests/fixtures.py", b"x = 1\n" * 150),  # 900 bytes: under the limit
        ("src/link.py", link("../tests/test_x.py")),  # outside the paths, no conftest
        ("vendor/lib", gitlink("a" * 40)),
    ],
)
def test_a_file_that_is_no_test_code_passes(path, value):
    assert found({}, {path: value}, SMALL) == []


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        # over the limit before and after: the edit cannot be read, whatever it added
        (
            b"x = 1\n" * 200,
            b"import pytest\npytestmark = pytest.mark.skip\n" + b"x = 1\n" * 200,
            "1: test-unparsable: is 1,244 bytes, above the limit of 1,024: limits.test_bytes is 1024",
        ),
        (
            b"def test_y(:\n",
            b"import pytest\npytest.skip()\ndef test_y(:\n",
            "3: test-unparsable: does not parse: invalid syntax (column 12)",
        ),
    ],
)
def test_a_changed_file_that_cannot_be_judged_fires_though_the_base_could_not_be_either(
    before, after, expected
):
    assert found({X: before}, {X: after}, SMALL) == at(X, expected)


def test_an_oversized_base_file_leaves_everything_the_candidate_holds_new():
    after = code("import pytest", "pytestmark = pytest.mark.skip")
    assert found({X: b"x = 1\n" * 200}, {X: after}, SMALL) == at(
        X, "2: skip-added: pytest.mark.skip at module level: a skipped test scores as a pass"
    )


def test_an_unjudgeable_file_moved_as_it_is_keeps_its_history():
    repo = MemoryRepo({".oracle-guard.yaml": SMALL, X: b"x = 1\n" * 200})
    repo.commit()
    repo.move(X, "tests/unit/test_x.py")
    assert report(repo.check("test-tamper", now=NOW)) == []


# -- frozen-skipped --------------------------------------------------------------------

FROZEN = CONTRACT + 'freeze:\n  - {paths: ["freeze.json"], schema: freeze}\n'
SKIPPED = code(
    "import pytest",
    "class TestC:",
    "    @pytest.mark.skip",
    "    def test_m(self): pass",
    "    def test_n(self): pass",
    "@pytest.mark.skip",
    "def test_y(): pass",
    "def test_z(): pass",
    "def test_yy(): pass",
)


def freeze_file(*ids):
    return {"excluded_property_ids": list(ids), "reason": {i: "flaky upstream" for i in ids}}


def frozen(*ids, tests=SKIPPED):
    files = {"freeze.json": freeze_file(*ids), X: tests}
    return found(files, files, FROZEN)


def still_collected(line, frozen_id):
    return (
        f"{X}:{line}: frozen-skipped (warning): {frozen_id!r} is frozen in freeze.json, yet still "
        "collected with pytest.mark.skip: exclude it from collection instead"
    )


@pytest.mark.parametrize(
    ("frozen_id", "lines"),
    [
        ("tests/test_x.py::test_y", [6]),  # the marker's line
        ("tests/test_x.py::test_y[1-2]", [6]),  # a parametrized case names its test
        ("tests/test_x.py::TestC::test_m", [3]),
        ("x", [3, 6]),  # a property id is a module stem: test_x.py, every skip in it
        # near misses: a test with no skip, one whose name starts the same, another file
        ("tests/test_x.py::test_z", []),
        ("tests/test_x.py::TestC::test_n", []),
        ("tests/test_x.py::test_yy", []),
        ("tests/test_other.py::test_y", []),
        ("y", []),
    ],
)
def test_a_frozen_test_still_collected_with_a_skip_warns(frozen_id, lines):
    assert frozen(frozen_id) == [still_collected(line, frozen_id) for line in lines]


def test_a_skip_on_the_class_or_module_covers_its_frozen_tests():
    tests = code(
        "import pytest",
        "pytestmark = pytest.mark.skip",
        "@pytest.mark.skip",
        "class TestC:",
        "    def test_m(self): pass",
    )
    assert frozen("tests/test_x.py::TestC::test_m", tests=tests) == [
        still_collected(2, "tests/test_x.py::TestC::test_m"),
        still_collected(3, "tests/test_x.py::TestC::test_m"),
    ]


def test_a_frozen_test_whose_skip_is_new_is_an_error_and_a_warning():
    files = {"freeze.json": freeze_file("tests/test_x.py::test_y")}
    tests = code("import pytest", "@pytest.mark.skip", "def test_y(): pass")
    frozen_tests = FROZEN.replace(CONTRACT, FROZEN_TESTS)
    assert found(files, {**files, X: tests}, FROZEN)[1:] == []  # a test the change adds
    assert found(files, {**files, X: tests}, frozen_tests) == [
        f"{X}:2: frozen-skipped (warning): 'tests/test_x.py::test_y' is frozen in freeze.json, "
        "yet still collected with pytest.mark.skip: exclude it from collection instead",
        f"{X}:2: skip-added: @pytest.mark.skip on test_y: a skipped test scores as a pass",
    ]


# -- only what the change adds ---------------------------------------------------------

SUITE = code(
    "import pytest",
    "",
    "def test_a():",
    '    pytest.skip("flaky upstream")',
    "    assert 1",
    "",
    "def test_b():",
    "    assert 2",
)
SKIP_IN = "skip-added: pytest.skip() in {} skips the test"


def test_a_marker_already_in_the_base_is_not_new():
    assert found({X: SUITE}, {X: SUITE}) == []  # the file unchanged
    edited = SUITE.replace("assert 2", "assert 2 + 0") + "\ndef test_c():\n    assert 3\n"
    assert found({X: SUITE}, {X: edited}) == []  # the same file with an unrelated edit


def test_a_second_identical_skip_in_the_same_test_fires_once():
    twice = SUITE.replace("    assert 1\n", '    pytest.skip("flaky upstream")\n    assert 1\n')
    assert found({X: SUITE}, {X: twice}) == at(X, "5: " + SKIP_IN.format("test_a"))


def test_a_skip_moved_to_another_test_fires():
    moved = SUITE.replace('    pytest.skip("flaky upstream")\n', "").replace(
        "    assert 2\n", '    pytest.skip("flaky upstream")\n    assert 2\n'
    )
    assert found({X: SUITE}, {X: moved}) == at(X, "7: " + SKIP_IN.format("test_b"))


def test_renaming_the_test_a_marker_sits_on_fires_where_the_tests_are_frozen():
    renamed = SUITE.replace("def test_a", "def test_a_renamed")
    assert found({X: SUITE}, {X: renamed}, FROZEN_TESTS) == [
        f"{X}:3: test-removed: the test test_a is gone: an existing test is oracle "
        "(tamper.frozen_tests); add a new test instead",
        f"{X}:4: " + SKIP_IN.format("test_a_renamed"),
    ]
    # near miss: with the tests writable, the renamed test is one the change adds,
    # and its skip hides no test the base ran (the change could drop the test)
    assert found({X: SUITE}, {X: renamed}) == []


def test_moving_code_within_the_file_creates_nothing():
    swapped = code(
        "import pytest",
        "def test_b():",
        "    assert 2",
        "def test_a():",
        '    pytest.skip("flaky upstream")',
        "    assert 1",
    )
    assert found({X: SUITE}, {X: swapped}) == []


def test_deleted_files_produce_no_finding():
    before = {
        X: SUITE,
        "tests/conftest.py": code("def pytest_collection_modifyitems(items):", "    items.clear()"),
        "src/conftest.py": code("import sys", "sys.exit(0)"),
    }
    assert found(before, {}) == []


def test_a_file_outside_the_paths_is_read_only_when_it_is_a_conftest():
    """As test code, that is; the code under test gets the source-side rules
    (tests/tamper_source_test.py), which have no rule for a hook."""
    hook = code("def pytest_collection_modifyitems(items):", "    items[:] = []")
    assert found({}, {"src/helpers.py": hook, "scripts/run_tests.py": hook}) == []
    assert found({}, {"src/conftest.py": hook, "conftest.py": hook}) == [
        f"conftest.py:1: collection-changed: defines pytest_collection_modifyitems: {DESELECTS}",
        f"src/conftest.py:1: collection-changed: defines pytest_collection_modifyitems: {DESELECTS}",
    ]
    # nor is a file whose name only holds conftest
    assert found({}, {"src/my_conftest.py": hook, "src/conftest.py.orig": hook}) == []


def test_a_file_copied_beside_its_original_is_new():
    copied = {X: SUITE, "tests/test_copy.py": SUITE}
    assert found({X: SUITE}, copied, FROZEN_TESTS) == at(
        "tests/test_copy.py", "4: " + SKIP_IN.format("test_a")
    )
    assert found({X: SUITE}, copied) == []  # tests the change adds, tests writable


NEW_TEST_SKIPS = [
    code("import pytest", "@pytest.mark.skip", "def test_new(): pass"),
    code("import pytest", "def test_new():", "    pytest.skip('later')"),
    code("import pytest", "def test_new():", "    pytest.importorskip('yaml')"),
    code("import pytest", "@pytest.mark.parametrize('n', [])", "def test_new(n): pass"),
    code("import pytest", "@pytest.mark.filterwarnings('default')", "def test_new(): pass"),
    code("import pytest", "@pytest.mark.xfail", "class TestNew:", "    def test_m(self): pass"),
    code(
        "import sys, pytest",
        "class TestOld:",
        "    def test_old(self): pass",
        "",
        "    @pytest.mark.skipif(sys.platform == 'win32', reason='posix')",
        "    def test_new(self): pass",
    ),
]


@pytest.mark.parametrize("after", NEW_TEST_SKIPS)
def test_a_skip_on_a_test_the_change_adds_is_no_finding_while_tests_are_writable(after):
    """issue 31: without tamper.frozen_tests the change could as well leave the
    test out; its skip hides no test the base ran."""
    before = code("import pytest", "class TestOld:", "    def test_old(self): pass")
    assert found({X: before}, {X: after}) == []
    assert found({}, {"tests/test_new.py": after}) == []
    # near miss: where frozen_tests covers the file, the test lands frozen, skipped
    codes = [f.split(": ")[1] for f in found({}, {X: after}, FROZEN_TESTS)]
    assert codes == ["runner-options" if "filterwarnings" in after else "skip-added"]


def test_a_warnings_filter_on_a_test_the_base_ran_still_fires():
    after = code("import pytest", "@pytest.mark.filterwarnings('ignore')", "def test_y(): pass")
    findings = found({X: code("def test_y(): pass")}, {X: after})
    assert [f.split(": ")[1] for f in findings] == ["runner-options"], findings


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # an existing test gains the skip
        (
            {X: code("def test_y(): pass")},
            {X: code("import pytest", "@pytest.mark.skip", "def test_y(): pass")},
        ),
        # a new fixture named test_*, a new helper, a new setup method: they reach old tests
        (
            {X: code("def test_y(test_data): pass")},
            {
                X: code(
                    "import pytest",
                    "@pytest.fixture",
                    "def test_data():",
                    "    pytest.skip()",
                    "def test_y(test_data): pass",
                )
            },
        ),
        (
            {X: code("def test_y(): pass")},
            {
                X: code(
                    "import pytest", "def needs_db():", "    pytest.skip()", "def test_y(): pass"
                )
            },
        ),
        (
            {X: code("class TestC:", "    def test_y(self): pass")},
            {
                X: code(
                    "import pytest",
                    "class TestC:",
                    "    def setup_method(self):",
                    "        pytest.skip()",
                    "    def test_y(self): pass",
                )
            },
        ),
        # module level in a new file, and in a new conftest
        (
            {},
            {
                "tests/test_new.py": code(
                    "import pytest", "pytestmark = pytest.mark.skip", "def test_new(): pass"
                )
            },
        ),
        ({}, {"tests/conftest.py": code("import pytest", "def test_new():", "    pytest.skip()")}),
        # a test moved from another file of the change, a skip added on the way
        (
            {"tests/test_old.py": code("def test_z(): pass")},
            {"tests/test_new.py": code("import pytest", "@pytest.mark.skip", "def test_z(): pass")},
        ),
    ],
)
def test_a_skip_on_a_test_the_base_ran_still_fires(before, after):
    findings = found(before, after)
    assert [f.split(": ")[1] for f in findings] == ["skip-added"], findings


def moved_repo(contract=CONTRACT):
    """HEAD holds SUITE (a skip already in it) among other tests."""
    repo = MemoryRepo({".oracle-guard.yaml": contract, X: SUITE, "tests/test_other.py": OTHER})
    repo.commit()
    return repo


OTHER = code("import pytest", "", "@pytest.mark.xfail", "def test_other():", "    assert 3")


def test_a_moved_file_keeps_its_history():
    repo = moved_repo()
    repo.move(X, "tests/unit/test_x.py")  # git mv: the same blob
    assert report(repo.check("test-tamper", now=NOW)) == []
    repo.stage({"tests/unit/test_x.py": SUITE.replace("assert 2", "assert 1 + 1")})
    assert report(repo.check("test-tamper", now=NOW)) == []  # moved with a small edit


def test_files_moved_together_are_each_paired_with_their_own_source():
    repo = moved_repo()
    repo.move("tests/test_other.py", "tests/unit/test_other.py")
    repo.move(X, "tests/unit/test_x.py")
    assert report(repo.check("test-tamper", now=NOW)) == []


def test_a_moved_file_that_gains_a_skip_fires_once():
    repo = moved_repo()
    repo.move(X, "tests/unit/test_x.py")
    gained = SUITE.replace("    assert 2\n", '    pytest.skip("later")\n    assert 2\n')
    repo.stage({"tests/unit/test_x.py": gained})
    assert report(repo.check("test-tamper", now=NOW)) == at(
        "tests/unit/test_x.py", "8: " + SKIP_IN.format("test_b")
    )


def test_a_move_is_matched_with_the_most_similar_deleted_file():
    repo = moved_repo()
    repo.remove(X, "tests/test_other.py")
    # the other file, renamed: its xfail is its own, not new
    repo.stage({"tests/test_renamed.py": OTHER.replace("assert 3", "assert 4")})
    assert report(repo.check("test-tamper", now=NOW)) == []


@pytest.mark.parametrize(
    "extra",
    [
        15,  # the deleted file's 5 lines among 15 new ones: 2 x 5 of 25 alike, no file move
        5,  # among 5 new ones: 2 x 5 of 15 alike, a file move
    ],
)
def test_a_skip_that_moves_with_its_test_to_another_file_is_not_new(extra):
    """issue 31: skip-added follows a test between files of the change by its name,
    marker and condition, whether or not the files count as a move."""
    repo = moved_repo()
    repo.remove("tests/test_other.py")
    helpers = "".join(f"def helper_{n}(): pass\n" for n in range(extra))
    repo.stage({"tests/test_new.py": OTHER + helpers})
    assert report(repo.check("test-tamper", now=NOW)) == []


def test_a_skip_that_moves_to_another_test_in_another_file_fires():
    repo = moved_repo(FROZEN_TESTS)
    repo.remove("tests/test_other.py")
    repo.stage({"tests/test_new.py": OTHER.replace("test_other", "test_renamed")})
    assert report(repo.check("test-tamper", now=NOW)) == [
        "tests/test_new.py:3: skip-added: @pytest.mark.xfail on test_renamed: a failing xfail "
        "test scores as expected",
        "tests/test_other.py:4: test-removed: the test test_other is gone: an existing test is "
        "oracle (tamper.frozen_tests); add a new test instead",
    ]
    # a skip that stays in its file while a copy lands elsewhere is new there
    repo = moved_repo(FROZEN_TESTS)
    repo.stage({"tests/test_new.py": OTHER})
    assert report(repo.check("test-tamper", now=NOW)) == [
        "tests/test_new.py:3: skip-added: @pytest.mark.xfail on test_other: a failing xfail "
        "test scores as expected"
    ]


# -- tamper.allow ----------------------------------------------------------------------

ALLOWING = FROZEN_TESTS + '  allow:\n    - {rule: process-exit, path: "tests/cli/**"}\n'
EXIT_AND_SKIP = code(
    "import pytest, os", "def test_main():", "    os._exit(0)", "    pytest.skip()"
)


@pytest.mark.parametrize("path", ["tests/cli/test_main.py", "tests/cli/deep/conftest.py"])
def test_an_allow_entry_silences_its_rule_at_its_paths(path):
    # another rule at that path still fires
    assert found({}, {path: EXIT_AND_SKIP}, ALLOWING) == at(
        path, "4: skip-added: pytest.skip() in test_main skips the test"
    )


@pytest.mark.parametrize(
    "path",
    ["tests/test_main.py", "tests/client/test_main.py", "tests/cli.py", "src/cli/conftest.py"],
)
def test_an_allow_entry_leaves_its_rule_elsewhere(path):
    assert found({}, {path: EXIT_AND_SKIP}, ALLOWING) == at(
        path,
        f"3: process-exit: calls os._exit in test_main: {EXITS}",
        "4: skip-added: pytest.skip() in test_main skips the test",
    )


def test_an_allow_entry_the_change_adds_is_no_authority():
    files = {"tests/cli/test_main.py": EXIT_AND_SKIP, ".oracle-guard.yaml": ALLOWING}
    base = memory({".oracle-guard.yaml": FROZEN_TESTS}, "HEAD")
    assert report(judged(base, memory(files), ["test-tamper"], NOW)) == [
        f"tests/cli/test_main.py:3: process-exit: calls os._exit in test_main: {EXITS}",
        "tests/cli/test_main.py:4: skip-added: pytest.skip() in test_main skips the test",
    ]


@pytest.mark.parametrize(
    "comment",
    ["# noqa", "# noqa: process-exit", "# pragma: no cover", "# oracle-guard: allow process-exit"],
)
def test_a_comment_in_the_changed_file_silences_nothing(comment):
    source = code("import sys", f"sys.exit(0)  {comment}", comment, "sys.exit(1)")
    assert added(source) == at(
        X,
        f"2: process-exit: calls sys.exit at module level: {EXITS}",
        f"4: process-exit: calls sys.exit at module level: {EXITS}",
    )


# -- the contract's section ------------------------------------------------------------


@pytest.mark.parametrize(
    ("section", "line", "message"),
    [
        (
            '  hermetic: ["tests/**"]\n',
            2,
            "invalid contract at $.tamper: 'paths' is a required property",
        ),
        (
            '  paths: ["tests/**"]\n  hermit: ["tests/**"]\n',
            4,
            "invalid contract at $.tamper: Additional properties are not allowed ('hermit' was "
            "unexpected); did you mean 'hermetic'?",
        ),
        (
            '  paths: ["tests/**"]\n  allow:\n    - {rule: skip-add, path: "tests/**"}\n',
            5,
            "invalid contract at $.tamper.allow[0].rule: 'skip-add' is not one of ['skip-added', "
            "'collection-changed', 'outcome-changed', 'process-exit', 'oracle-patched', "
            "'module-shadowed', 'runner-options', 'non-hermetic', 'dynamic-code', "
            "'test-unparsable', 'startup-file', 'source-reaches-runner', 'oracle-read', 'constant-equality', 'test-removed', 'test-changed', 'frozen-skipped']",
        ),
        (
            '  paths: ["tests/**"]\n  allow:\n    - {rule: skip-added}\n',
            5,
            "invalid contract at $.tamper.allow[0]: 'path' is a required property",
        ),
        (
            '  paths: ["tests/**"]\n  allow:\n    - {rule: skip-added, path: "tests/**", why: x}\n',
            5,
            "invalid contract at $.tamper.allow[0]: Additional properties are not allowed ('why' "
            "was unexpected); the keys allowed here: path, rule",
        ),
    ],
)
def test_a_bad_tamper_section_is_one_contract_error(section, line, message):
    contract = "version: 1\ntamper:\n" + section
    base = memory({".oracle-guard.yaml": contract}, "HEAD")
    candidate = memory({".oracle-guard.yaml": contract, X: code("import sys", "sys.exit(0)")})
    rc, out, err = judged(base, candidate, ["test-tamper"], NOW)
    assert (rc, out) == (2, "")
    assert (
        err == f"oracle-guard: error: .oracle-guard.yaml:{line}: {message} (the contract in HEAD)\n"
    )


# -- a property: renaming variables and reformatting change no finding -----------------

LOCALS = ("alpha", "beta", "gamma")
RENAMES = ("total", "exit_code", "skip_count", "seed_value", "outcome_text", "n", "modules_seen")
HEADER = code(
    "import random",
    "import sys",
    "import time",
    "from unittest import mock",
    "",
    "import pytest",
    "from hypothesis import settings",
    "from oracle import invariants",
)
DECORATORS = (
    "",
    "@pytest.mark.skip",
    "@settings(max_examples=5)",
    "@settings(max_examples=500)",
    '@pytest.mark.parametrize("n", [1, 2])',
)
STATEMENTS = (
    # tamper forms
    "pytest.skip({a})",
    "{a} = settings(max_examples={b})",
    "settings.load_profile({a})",
    "sys.exit({a})",
    "{a} = sys.exit",
    'monkeypatch.setattr(invariants, "check", {a})',
    "{a}.outcome = {b}",
    "request.config.addinivalue_line({a}, {b})",
    "request.config.option.verbose = {a}",
    "eval({a})",
    'collect_ignore = [{a}, "test_pay.py"]',
    "getattr(sys, {a})",
    "{a} = time.time()",
    "random.shuffle({a})",
    "{a} = random.Random()",
    # honest ones
    "{a} = {b} + 1",
    'assert {a} >= {b}, "sys.exit is never called here"',
    'print("pytest.skip", {a})',
    "{a} = [{b} for _ in range(2)]",
    "{a} = random.Random({b})",
    "{a} = random.Random(1729)",
    'with mock.patch("builtins.open"):\n    {a} = {b}',
    "if {a}:\n    {b} = {a}\nelse:\n    {b} = 0",
    "for {a} in range(3):\n    {b} += {a}",
    "{a}, {b} = {b}, {a}",
    "{a} = lambda {b}: {b} * 2",
)
COMMENTS = ("# sys.exit(0)", "#", "# pytest.skip: see the README", "# import oracle")


def oracle_of(module):
    return "oracle/**" if module.split(".")[0] == "oracle" else None


@st.composite
def statements(draw):
    template = draw(st.sampled_from(STATEMENTS))
    a, b = draw(st.permutations(LOCALS))[:2]
    return template.format(a=a, b=b)


@st.composite
def generated_modules(draw):
    tests = []
    for name in ("test_one", "test_two"):
        body = ["alpha = beta = gamma = 1"] + draw(st.lists(statements(), min_size=1, max_size=5))
        lines = [line for statement in body for line in statement.split("\n")]
        decorator = draw(st.sampled_from(DECORATORS))
        tests.append(
            (decorator + "\n" if decorator else "")
            + f"def {name}(monkeypatch, request):\n"
            + "".join(f"    {line}\n" for line in lines)
        )
    return HEADER + "\n\n" + "\n\n".join(tests)


class Renamed(ast.NodeTransformer):
    def __init__(self, names):
        self.names = names

    def visit_Name(self, node):
        node.id = self.names.get(node.id, node.id)
        return node

    def visit_arg(self, node):
        node.arg = self.names.get(node.arg, node.arg)
        return node


def transformed(source, names, indent, blanks, comments):
    """``source`` with its local variables renamed, unparsed, re-indented with
    ``indent`` for each level, and blank and comment lines put before the lines
    ``blanks`` and ``comments`` name."""
    text = ast.unparse(Renamed(names).visit(ast.parse(source)))
    out = []
    for number, line in enumerate(text.split("\n")):
        if number in blanks:
            out.append("")
        if number in comments:
            out.append(comments[number])
        depth = (len(line) - len(line.lstrip(" "))) // 4
        out.append(indent * depth + line.lstrip(" "))
    return "\n".join(out) + "\n"


def keys(source, path):
    marks = python.marks(source.encode(), python.package_of(path), path == P, oracle_of)
    return Counter((mark.rule, mark.subject, mark.scope) for mark in marks)


def codes(lines):
    return Counter(line.split(": ")[1] for line in lines)


def test_the_transformation_renames_and_reformats():
    source = HEADER + code(
        "def test_one(monkeypatch, request):", "    alpha = 1", "    sys.exit(alpha)"
    )
    names = dict(zip(LOCALS, RENAMES))
    after = transformed(source, names, "\t", {9}, {10: "# sys.exit(0)"})
    assert after == code(
        "import random",
        "import sys",
        "import time",
        "from unittest import mock",
        "import pytest",
        "from hypothesis import settings",
        "from oracle import invariants",
        "",
        "def test_one(monkeypatch, request):",
        "",
        "\ttotal = 1",
        "# sys.exit(0)",
        "\tsys.exit(total)",
    )
    assert (
        keys(source, P)
        == keys(after, P)
        == Counter({("process-exit", "sys.exit(_)", "test_one"): 1})
    )


@property_settings(max_examples=50)
@given(
    source=generated_modules(),
    names=st.permutations(RENAMES).map(lambda renames: dict(zip(LOCALS, renames))),
    indent=st.sampled_from(["  ", "\t", "        ", "   "]),
    blanks=st.sets(st.integers(0, 40), max_size=6),
    comments=st.dictionaries(st.integers(0, 40), st.sampled_from(COMMENTS), max_size=4),
    path=st.sampled_from([X, P]),
)
def test_renaming_and_reformatting_create_no_finding_and_remove_none(
    source, names, indent, blanks, comments, path
):
    after = transformed(source, names, indent, blanks, comments)
    assert "test-unparsable" not in {rule for rule, _, _ in keys(source, path)}
    # (a) the change from one to the other holds nothing new
    assert found({path: source}, {path: after}) == []
    # (b) each, added, holds the same marks and so the same findings
    assert keys(after, path) == keys(source, path)
    assert codes(added(after, path)) == codes(added(source, path))


# -- the verdict cache: marks per blob id ----------------------------------------------

STAGED = {
    X: SUITE.replace("    assert 2\n", '    pytest.skip("later")\n'),
    "tests/conftest.py": code("def pytest_ignore_collect(collection_path):", "    return None"),
}
STAGED_FINDINGS = [
    "tests/conftest.py:1: collection-changed: defines pytest_ignore_collect: it can deselect "
    "tests before they run",
    f"{X}:8: " + SKIP_IN.format("test_b"),
]


def cached_repo(tmp_path):
    """HEAD holds SUITE; the index adds a skip to it and a conftest with a hook."""
    repo = init_repo(tmp_path / "r")
    commit(repo, {".oracle-guard.yaml": CONTRACT, X: SUITE})
    stage(repo, STAGED)
    return repo


def tamper_check(capsys, repo, *args):
    return run_guard(capsys, repo, "check", "--only", "test-tamper", "--now", NOW, *args)


def cache_doc(repo):
    return json.loads((repo / ".git" / "oracle-guard" / "cache.json").read_text())


def write_cache(repo, doc, checksum=True):
    from oracle_guard.cache import _checksum

    if checksum:
        doc["checksum"] = _checksum(doc["entries"])
    (repo / ".git" / "oracle-guard" / "cache.json").write_text(json.dumps(doc))


def tamper_key(repo, revision, path):
    """The cache key of the marks of ``path`` at ``revision`` ("" for the index)."""
    oid = git(repo, "rev-parse", f"{revision}:{path}").strip()
    (key,) = [key for key in cache_doc(repo)["entries"]["tamper"] if key.startswith(oid + ":")]
    return key


def test_a_warm_run_gives_the_findings_of_a_cold_one(tmp_path, capsys):
    repo = cached_repo(tmp_path)
    cold = tamper_check(capsys, repo)
    assert report(cold) == STAGED_FINDINGS
    entries = cache_doc(repo)["entries"]["tamper"]
    assert len(entries) == 3  # the base's test file, the index's, the conftest
    assert entries[tamper_key(repo, "HEAD", X)] == [
        [
            "skip-added",
            4,
            "pytest.skip('flaky upstream')",
            "test_a",
            "pytest.skip() in test_a skips the test",
        ]
    ]
    assert tamper_check(capsys, repo) == cold
    assert tamper_check(capsys, repo, "--no-cache") == cold


def test_a_sound_tamper_entry_is_believed(tmp_path, capsys):
    # the near miss of the spoiled entries below: a well-formed entry is what the run uses
    repo = cached_repo(tmp_path)
    tamper_check(capsys, repo)
    doc = cache_doc(repo)
    doc["entries"]["tamper"][tamper_key(repo, "", X)] = []
    write_cache(repo, doc)
    assert report(tamper_check(capsys, repo)) == STAGED_FINDINGS[:1]


@pytest.mark.parametrize(
    ("spoiled", "checksum"),
    [
        ([["skip-added", "8", "pytest.skip", "test_b", "x"]], True),  # a line that is no number
        ([["skip-added", 0, "pytest.skip", "test_b", "x"]], True),  # line 0
        ([["skip-added", 8, "pytest.skip", "test_b"]], True),  # four fields
        ({"marks": []}, True),
        ([], False),  # sound in shape, but not what the checksum covers
    ],
)
def test_a_corrupt_tamper_entry_is_ignored(tmp_path, capsys, spoiled, checksum):
    repo = cached_repo(tmp_path)
    cold = tamper_check(capsys, repo)
    key = tamper_key(repo, "", X)
    doc = cache_doc(repo)
    sound = doc["entries"]["tamper"][key]
    doc["entries"]["tamper"][key] = spoiled
    write_cache(repo, doc, checksum)
    assert tamper_check(capsys, repo) == cold
    assert cache_doc(repo)["entries"]["tamper"][key] == sound  # rebuilt


def test_the_same_blob_in_a_hermetic_path_is_read_again(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    clocked = code("import time", "def test_y():", "    assert time.time() > 0")
    commit(repo, {".oracle-guard.yaml": CONTRACT, "tests/test_p.py": clocked})
    stage(repo, {"tests/test_q.py": clocked})  # the cache now holds the blob's marks, none
    assert report(tamper_check(capsys, repo)) == []
    (repo / "tests" / "props").mkdir()
    git(repo, "mv", "tests/test_p.py", P)
    moved = tamper_check(capsys, repo)
    assert report(moved) == at(
        P, f"3: non-hermetic: time.time reads the wall clock in test_y: {CLOCK}"
    )
    assert tamper_check(capsys, repo, "--no-cache") == moved


# -- what an attack pass found (each turned the real pytest green) ----------------------

FAKE = "types.SimpleNamespace(check=lambda x: True)"
ANY_HOOK = "it runs inside the session and can change which tests run or how they score"
OPTIONS = "it changes the command line's options"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            code("def pytest_runtestloop(session):", "    return True"),
            ["1: outcome-changed: defines pytest_runtestloop: it can turn a failure into a pass"],
        ),
        (  # any pytest_* function is a hook to pytest, listed here or not
            code("def pytest_warning_recorded(warning_message):", "    pass"),
            [f"1: outcome-changed: defines pytest_warning_recorded, a pytest hook: {ANY_HOOK}"],
        ),
        (
            code("def pytest_generate_tests(metafunc):", "    metafunc.parametrize('x', [])"),
            [
                "1: collection-changed: defines pytest_generate_tests: it decides which "
                "parameter sets tests run with, and an empty set skips them"
            ],
        ),
        (
            code("def pytest_configure(config):", "    setattr(config.option, 'keyword', 'not a')"),
            [f"2: runner-options: setattr on config.option in pytest_configure: {OPTIONS}"],
        ),
        (
            code("def pytest_configure(config):", "    vars(config.option).update(keyword='x')"),
            [f"2: runner-options: update on config.option in pytest_configure: {OPTIONS}"],
        ),
        (
            code("def pytest_configure(config):", "    config.option.__dict__['keyword'] = 'x'"),
            [],  # a subscript of the namespace's __dict__: see the assertion below
        ),
        (
            code("import sys, types", f"sys.modules.update({{'oracle.invariants': {FAKE}}})"),
            [
                "2: oracle-patched: sys.modules.update replaces sys.modules['oracle.invariants'] "
                f"at module level, {PROTECTED}"
            ],
        ),
        (
            code(
                "import sys, types",
                "def test_y(monkeypatch):",
                f"    monkeypatch.setitem(sys.modules, 'oracle.invariants', {FAKE})",
            ),
            [
                "3: oracle-patched: monkeypatch.setitem replaces sys.modules['oracle.invariants'] "
                f"in test_y, {PROTECTED}"
            ],
        ),
        (
            code(
                "import sys, types",
                "from unittest import mock",
                "def test_y():",
                f"    with mock.patch.dict(sys.modules, {{'oracle.invariants': {FAKE}}}):",
                "        pass",
            ),
            [
                "4: oracle-patched: unittest.mock.patch.dict replaces "
                f"sys.modules['oracle.invariants'] in test_y, {PROTECTED}"
            ],
        ),
        (
            code('m = __import__("o" + "s")', "m._exit(0)"),
            [
                "1: dynamic-code: calls __import__ with a computed name at module level: the "
                "module it imports cannot be judged"
            ],
        ),
    ],
)
def test_what_the_attack_pass_found_fires(source, expected):
    findings = added(source)
    if not expected:  # the namespace written through its __dict__ is still an option
        assert [f.split(": ")[1] for f in findings] == ["runner-options"], findings
        return
    assert findings == at(X, *expected)


@pytest.mark.parametrize(
    "source",
    [
        code("def pytest_addoption(parser):", "    parser.addoption('--slow')"),
        code("def pytest_report_header(config):", "    return 'suite v2'"),
        code("def pytest_configure(config):", "    config.addinivalue_line('markers', 'slow')"),
        code("def test_y(monkeypatch):", "    monkeypatch.setitem(sys.modules, 'src.app', 1)"),
        code("import sys", "sys.modules.update({'src.app': None})"),
        code("import importlib", "def test_y():", "    importlib.import_module('src.app')"),
        code("def test_y(options):", "    vars(options).update(a=1)"),
    ],
)
def test_near_misses_of_what_the_attack_pass_found_pass(source):
    assert added(source) == []


SHADOW = (
    "shadows {0}, the oracle's module, {1}: with {2}/ on sys.path, importing {0} gets this file"
)


def test_a_new_module_that_shadows_an_oracle_module_fires():
    oracle_files = {
        "oracle/__init__.py": "",
        "oracle/invariants.py": "def check(x):\n    return x\n",
    }
    fake = {"tests/oracle/__init__.py": "", "tests/oracle/invariants.py": "def check(x):\n    1\n"}
    assert found(oracle_files, {**oracle_files, **fake}) == [
        "tests/oracle/__init__.py:1: module-shadowed: "
        + SHADOW.format("oracle", PROTECTED, "tests"),
        "tests/oracle/invariants.py:1: module-shadowed: "
        + SHADOW.format("oracle.invariants", PROTECTED, "tests"),
    ]
    # near misses: a name the oracle does not hold, and a protected folder with no module
    honest = {"tests/helpers/__init__.py": "", "tests/oracle_cases/test_a.py": "x = 1\n"}
    assert found(oracle_files, {**oracle_files, **honest}) == []
    assert found({}, fake) == []  # no oracle/ module in the tree: nothing is shadowed


def test_a_new_module_named_as_a_standard_library_module_fires():
    """issue 31, change 9: tests/fractions.py is fractions for every module once
    tests/ is on sys.path (pytest's default import mode puts it first)."""
    assert found({}, {"tests/fractions.py": "X = 1\n"}) == [
        "tests/fractions.py:1: module-shadowed: shadows fractions, a standard-library module: "
        "with tests/ on sys.path, importing fractions gets this file, in the code under test "
        "and the oracle too"
    ]
    # near misses: a name no library has; a submodule of a package folder; a module in place
    assert found({}, {"tests/fraction_cases.py": "X = 1\n"}) == []
    assert found({}, {"tests/helpers/__init__.py": "", "tests/helpers/json.py": "X = 1\n"}) == []
    assert found({"tests/fractions.py": "X = 1\n"}, {"tests/fractions.py": "X = 2\n"}) == []


def test_a_new_module_named_as_an_installed_module_the_oracle_imports_fires():
    oracle_files = {"oracle/__init__.py": "", "oracle/load.py": "import yaml.constructor\n"}
    assert found(oracle_files, {**oracle_files, "tests/yaml.py": "load = dict\n"}) == [
        "tests/yaml.py:1: module-shadowed: shadows yaml, an installed module the oracle's code "
        "imports: with tests/ on sys.path, importing yaml gets this file, in the code under "
        "test and the oracle too"
    ]
    # near miss: a module the oracle does not import
    assert found(oracle_files, {**oracle_files, "tests/toml.py": "load = dict\n"}) == []


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (
            "tests/CONFTEST.PY",
            "tests/CONFTEST.PY:1: collection-changed: defines pytest_collection_modifyitems: it "
            "can deselect tests before they run",
        ),
        (
            "src/Conftest.py",
            "src/Conftest.py:1: collection-changed: defines pytest_collection_modifyitems: it "
            "can deselect tests before they run",
        ),
    ],
)
def test_a_conftest_in_other_letter_case_is_read_as_a_case_insensitive_checkout_sees_it(
    path, expected
):
    hook = code("def pytest_collection_modifyitems(items):", "    items.clear()")
    assert found({}, {path: hook}) == [expected]
    assert found({}, {"src/conftest_helpers.py": hook}) == []  # near miss: not a conftest


def test_a_pytest_ini_in_other_letter_case_is_judged():
    findings = found({}, {"tests/PYTEST.INI": "[pytest]\naddopts = -k 'not a'\n"})
    assert findings and all(": runner-options: " in f for f in findings), findings
    assert found({}, {"tests/pytest.ini.orig": "[pytest]\naddopts = -k 'not a'\n"}) == []


REPLACES = (
    "runner-options: a new pytest.ini becomes the pytest configuration of the runs under "
    "tests/ (the nearest file wins), in place of the one they read and every option it set"
)


def test_a_new_configuration_that_replaces_one_pytest_read_fires():
    root = {"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '--strict-markers'\n"}
    new = {"tests/pytest.ini": "[pytest]\naddopts = -v\n"}
    assert found(root, {**root, **new}) == [f"tests/pytest.ini:1: {REPLACES}"]
    # in the same folder the options are compared: those the new file drops count
    above = {"tests/setup.cfg": "[tool:pytest]\nxfail_strict = true\n"}
    assert found(above, {**above, **new}) == [
        "tests/pytest.ini:1: runner-options: xfail_strict is removed (it was 'true'): an xfail "
        "test that passes no longer fails the run"
    ]


def test_a_first_configuration_is_judged_by_what_it_sets():
    """With nothing for it to replace, a new file is as good as what it holds: -v
    passes, -k does not (near miss: a pyproject.toml with no pytest table above)."""
    none = {"pyproject.toml": "[tool.ruff]\nline-length = 100\n", "tests/sub/pytest.ini": "x"}
    assert found(none, {**none, "tests/pytest.ini": "[pytest]\naddopts = -v\n"}) == []
    assert found({}, {"tests/pytest.ini": "[pytest]\nmarkers =\n  slow: slow tests\n"}) == []
    assert found({}, {"tests/pytest.ini": "[pytest]\naddopts = -k 'not a'\n"}) == [
        'tests/pytest.ini:2: runner-options: addopts adds -k "not a": it deselects tests'
    ]


ROOTDIR = (
    "runner-options: a new {} makes tests/ pytest's rootdir for the runs under it: conftest.py "
    "above it stop loading, and whatever they set up for the tests with them"
)


@pytest.mark.parametrize(
    ("name", "text"),
    [("pytest.ini", ""), ("pytest.ini", "[pytest]\n"), ("pyproject.toml", "[tool.black]\n")],
)
def test_a_new_configuration_that_cuts_the_root_conftest_off_fires(name, text):
    """issue 31, change 10: with nothing above to replace, a new configuration in
    tests/ still moves the confcutdir there, and the root conftest stops loading."""
    root = {"conftest.py": "import pytest\n", "setup.py": "setup()\n"}
    assert found(root, {**root, f"tests/{name}": text}) == [
        f"tests/{name}:1: " + ROOTDIR.format(name)
    ]


def test_a_new_configuration_that_cuts_nothing_off_passes():
    conftests = {"conftest.py": "import pytest\n"}
    counting = {**conftests, "pyproject.toml": "[tool.pytest.ini_options]\nxfail_strict = true\n"}
    # no conftest above; a pyproject.toml a file above outranks; a tox.ini with no
    # [pytest] section; a conftest below the new file
    assert found({}, {"tests/pytest.ini": ""}) == []
    assert found(counting, {**counting, "tests/pyproject.toml": "[tool.black]\n"}) == []
    assert found(conftests, {**conftests, "tests/tox.ini": "[tox]\nenvlist = py\n"}) == []
    below = {"tests/sub/conftest.py": "import pytest\n"}
    assert found(below, {**below, "tests/pytest.ini": ""}) == []


@pytest.mark.parametrize(
    ("path", "text", "effect"),
    [
        (
            "src/sitecustomize.py",
            "import os\nos.environ['PYTEST_ADDOPTS'] = '-k not discount'\n",
            "sitecustomize.py runs at every interpreter start with its folder on sys.path: it "
            "can set PYTEST_ADDOPTS, patch modules or exit before a test runs",
        ),
        (
            "lib/usercustomize.py",
            "X = 1\n",
            "usercustomize.py runs at every interpreter start with its folder on sys.path: it "
            "can set PYTEST_ADDOPTS, patch modules or exit before a test runs",
        ),
        (
            "src/hook.pth",
            "import os; os.environ['PYTEST_ADDOPTS'] = '-x'\n",
            "hook.pth is read at interpreter start in a site folder: its import lines run "
            "before a test does",
        ),
        (
            "src/X.dist-info/entry_points.txt",
            "[pytest11]\nx = tests.plug\n",
            "declares pytest11 entry points: pytest loads them as plugins at start-up, from "
            "X.dist-info on sys.path",
        ),
        (
            "src/x.egg-info/entry_points.txt",
            "[console_scripts]\nx = x:main\n",
            "its entry points load from the folder on sys.path at start-up, from x.egg-info on "
            "sys.path",
        ),
    ],
)
def test_a_start_up_file_anywhere_fires(path, text, effect):
    """issue 31, changes 5 and 12: files that run or load before any test does."""
    assert found({}, {path: text}) == [f"{path}:1: startup-file: {effect}"]
    assert found({path: "X = 0\n"}, {path: text}) == [f"{path}:1: startup-file: {effect}"]


def test_files_that_only_look_like_start_up_files_pass():
    honest = {
        "src/site_custom.py": "X = 1\n",
        "docs/entry_points.txt": "[pytest11]\nx = y\n",
        "src/X.dist-info/METADATA": "Name: x\n",
        "src/paths.pth.txt": "x\n",
    }
    assert found({}, honest) == []
    assert found({"src/sitecustomize.py": "X = 1\n"}, {}) == []  # deleted


# -- the second attack pass: each form turned the real pytest green -------------------

IMPORTS = "import os, sys, types, unittest, warnings, functools, operator, atexit\nimport pytest\n"
SECOND_PASS = [
    # process-exit: kept, subclassed, referred to through getattr, moved out of the guard
    ("err = SystemExit(0)\nraise err\n", ["process-exit"]),
    ("class Done(SystemExit):\n    pass\n", ["process-exit"]),
    ("Stop = pytest.exit.Exception\n", ["process-exit"]),
    ("atexit.register(getattr(os, '_exit'), 0)\n", ["process-exit"]),
    ("import ctypes\nctypes.CDLL(None)._exit(0)\n", ["dynamic-code"]),
    # skip-added: unittest.case, references, partial, add_marker by name, getattr markers
    ("@unittest.case.skipIf(True, '')\ndef test_y():\n    pass\n", ["skip-added"]),
    ("later = pytest.skip\n", ["skip-added"]),
    ("functools.partial(pytest.skip, 'x')()\n", ["skip-added"]),
    ("pytest.skip.__call__('x')\n", ["skip-added"]),
    ("def test_y(request):\n    request.node.add_marker('xfail')\n", ["skip-added"]),
    ("@getattr(pytest.mark, 'skip')\ndef test_y():\n    pass\n", ["skip-added"]),
    ("@pytest.mark.__getattr__('skip')\ndef test_y():\n    pass\n", ["skip-added"]),
    ("@operator.attrgetter('mark.skip')(pytest)\ndef test_y():\n    pass\n", ["skip-added"]),
    (
        "from _pytest.mark import MARK_GEN\n@MARK_GEN.xfail\ndef test_y():\n    pass\n",
        ["skip-added"],
    ),
    ("@pytest.mark.parametrize('case', [])\ndef test_y(case):\n    pass\n", ["skip-added"]),
    ("@pytest.fixture(autouse=True, params=[])\ndef each(request):\n    pass\n", ["skip-added"]),
    ("def test_y():\n    pass\ntest_y.__test__ = False\n", ["skip-added"]),
    ("class T(unittest.TestCase):\n    __unittest_skip__ = True\n", ["skip-added"]),
    ("class Later(unittest.SkipTest):\n    pass\n", ["skip-added"]),
    # outcome-changed: pytest and unittest patched, runtest, setattr of testsfailed
    ("pytest.Function.runtest = lambda self: None\n", ["outcome-changed"]),
    ("import _pytest.runner\n_pytest.runner.call_and_report = print\n", ["outcome-changed"]),
    ("unittest.TestCase.assertEqual = lambda *a, **k: None\n", ["outcome-changed"]),
    ("type.__setattr__(pytest.Function, 'runtest', print)\n", ["outcome-changed"]),
    ("def t(request):\n    setattr(request.session, 'testsfailed', 0)\n", ["outcome-changed"]),
    ("def t(request):\n    request.node.runtest = lambda: None\n", ["outcome-changed"]),
    (
        "class T(unittest.TestCase):\n    def run(self, result=None):\n        return result\n",
        ["outcome-changed"],
    ),
    # collection-changed: session.items, plugin loads, pytest_plugins imported
    ("def test_y(request):\n    request.session.items[:] = []\n", ["collection-changed"]),
    (
        "def pytest_configure(config):\n    config.pluginmanager.import_plugin('src.p')\n",
        ["collection-changed"],
    ),
    ("from src.plugin_list import pytest_plugins\n", ["collection-changed"]),
    ("collect_ignore = []\ncollect_ignore[:] = ['test_discount.py']\n", ["collection-changed"]),
    (
        "def f(items):\n    items.clear()\nglobals().update(pytest_collection_modifyitems=f)\n",
        ["collection-changed"],
    ),
    ("f = print\nlocals()['pytest_collection_modifyitems'] = f\n", ["collection-changed"]),
    # runner-options: __setattr__ on the options, _inicache, warnings filters, Hypothesis **
    (
        "def pytest_configure(config):\n    config.option.__setattr__('keyword', 'x')\n",
        ["runner-options"],
    ),
    (
        "def pytest_configure(config):\n    config._inicache['python_functions'] = ['t']\n",
        ["runner-options"],
    ),
    ("pytestmark = pytest.mark.filterwarnings('ignore')\n", ["runner-options"]),
    ("def test_y():\n    warnings.simplefilter('ignore')\n", ["runner-options"]),
    (
        "from hypothesis import settings\nQ = {}\nsettings.register_profile('q', **Q)\n",
        ["runner-options"],
    ),
    # oracle-patched: writes through vars(), __dict__, object.__setattr__, sys.modules forms
    ("import oracle.invariants as inv\ninv.__dict__['f'] = print\n", ["oracle-patched"]),
    ("import oracle.invariants as inv\nvars(inv).update(f=print)\n", ["oracle-patched"]),
    ("import oracle.invariants as inv\nobject.__setattr__(inv, 'f', print)\n", ["oracle-patched"]),
    ("import builtins\nvars(builtins).update(round=print)\n", ["oracle-patched"]),
    ("import oracle\noracle.__path__.insert(0, 'tests/stand_in')\n", ["oracle-patched"]),
    ("sys.modules |= {'oracle.invariants': types}\n", ["oracle-patched"]),
    ("dict.__setitem__(sys.modules, 'oracle.invariants', types)\n", ["oracle-patched"]),
    ("sys.modules.update([('oracle.invariants', types)])\n", ["oracle-patched"]),
    # dynamic-code: import machinery, loaders, tracing, star imports, computed globals
    ("sys.meta_path.insert(0, object())\n", ["dynamic-code"]),
    ("sys.settrace(print)\n", ["dynamic-code"]),
    ("import runpy\nrunpy.run_path('tests/data.txt')\n", ["dynamic-code"]),
    ("import pickle\npickle.loads(b'')\n", ["dynamic-code"]),
    ("from src.support import *\n", ["dynamic-code"]),
    ("name = 'pytest_' + 'x'\nglobals()[name] = print\n", ["dynamic-code"]),
]


@pytest.mark.parametrize(("source", "codes"), SECOND_PASS)
def test_what_the_second_attack_pass_found_fires(source, codes):
    findings = added(IMPORTS + source)
    assert sorted(f.split(": ")[1] for f in findings) == sorted(codes), findings


@pytest.mark.parametrize(
    "source",
    [
        "def test_y():\n    with pytest.raises(SystemExit):\n        raise_it()\n",
        "def test_y():\n    try:\n        run()\n    except SystemExit as exc:\n        assert exc.code\n",
        "def test_y():\n    with warnings.catch_warnings():\n        warnings.simplefilter('error')\n",
        "pytestmark = pytest.mark.filterwarnings('error')\n",
        "@pytest.mark.parametrize('case', [1, 2])\ndef test_y(case):\n    pass\n",
        "@pytest.fixture(scope='session')\ndef db():\n    return 1\n",
        "def test_y():\n    assert 0.1 + 0.2 == pytest.approx(0.3)\n",
        "class T(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(1, 1)\n",
        "def test_y(thing):\n    assert vars(thing) == {}\n",
        "def test_y(request):\n    assert request.session.items\n",
        "def test_y(request):\n    request.node.add_marker('slow')\n",
        "from src.support import helper\n",
    ],
)
def test_near_misses_of_the_second_attack_pass_pass(source):
    assert added(IMPORTS + source) == []


def test_a_marker_whose_arguments_change_fires():
    before = "import sys, pytest\npytestmark = pytest.mark.skipif(sys.version_info < (3, 8))\n"
    after = before.replace("(3, 8)", "(3, 80)")
    assert [f.split(": ")[1] for f in found({X: before}, {X: after})] == ["skip-added"]
    assert found({X: before}, {X: before + "\n# a comment\n"}) == []  # near miss


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (
            "@pytest.mark.skipif(sys.platform == 'win32', reason='posix')",
            "@pytest.mark.skipif(sys.platform == 'win32', reason='posix paths only')",
        ),
        ("@pytest.mark.skip('later')", "@pytest.mark.skip(reason='upstream bug 12')"),
        ("@unittest.skip('slow')", "@unittest.skip('slow on CI')"),
    ],
)
def test_a_skip_whose_reason_alone_is_edited_is_not_new(before, after):
    """issue 31: markers compare by meaning (mark, condition, scope), not text."""
    text = "import sys, unittest, pytest\n{}\ndef test_y():\n    pass\n"
    assert found({X: text.format(before)}, {X: text.format(after)}) == []
    # the attack beside it: the condition changed
    if "skipif" in before:
        changed = after.replace("'win32'", "'linux'")
        assert [
            f.split(": ")[1] for f in found({X: text.format(before)}, {X: text.format(changed)})
        ] == ["skip-added"]


def test_an_exit_moved_out_of_the_main_guard_fires():
    before = "import sys\n\nif __name__ == '__main__':\n    sys.exit(0)\n"
    after = "import sys\n\nsys.exit(0)\n"
    assert [f.split(": ")[1] for f in found({X: before}, {X: after})] == ["process-exit"]
    assert found({X: before}, {X: before.replace("0)", "0)  # done")}) == []


def test_a_doctest_file_is_read_as_the_python_it_runs():
    doctest = "Notes\n=====\n\n>>> import os\n>>> os._exit(0)\n"
    assert found({}, {"tests/test_notes.txt": doctest}) == [
        f"tests/test_notes.txt:5: process-exit: calls os._exit at module level: {EXITS}"
    ]
    assert found({}, {"tests/test_notes.txt": ">>> 1 + 1\n2\n"}) == []  # near miss
    assert found({}, {"tests/notes.txt": doctest}) == []  # not a doctest pytest collects


def test_a_test_module_outside_the_paths_is_read_and_compiled_code_anywhere_fires():
    exits = "import os\n\nos._exit(0)\n"
    assert found({}, {"src/test_zz_sanity.py": exits}) == [
        f"src/test_zz_sanity.py:3: process-exit: calls os._exit at module level: {EXITS}"
    ]
    # near miss: not collected by name, so judged as the code under test is
    assert found({}, {"src/sanity.py": exits}) == [
        "src/sanity.py:3: process-exit: calls os._exit at import: importing the code under test "
        "ends the run with its status, not the tests'"
    ]
    compiled = found({}, {"src/__pycache__/discount.cpython-311.pyc": b"\x00"})
    assert [f.split(": ")[1] for f in compiled] == ["test-unparsable"]


def test_a_new_module_that_shadows_the_code_under_test_fires():
    src = {"src/__init__.py": "", "src/discount.py": "def f():\n    return 1\n"}
    stand_in = {"tests/src/__init__.py": "", "tests/src/discount.py": "def f():\n    return 2\n"}
    shadowed = found(src, {**src, **stand_in})
    assert [f.split(": ")[1] for f in shadowed] == ["module-shadowed", "module-shadowed"]
    assert "the module in src/discount.py" in shadowed[1]
    assert found(src, {**src, "tests/helpers/__init__.py": ""}) == []  # near miss


# issue 31: what the third attack pass let through; each line is a test file's or a
# conftest's source (added at tests/conftest.py: what a conftest may not do is the point)
THIRD_PASS = [
    # the function a collected test runs, replaced
    (
        "@pytest.fixture(autouse=True)\ndef f(request):\n    request.node.obj = lambda **kw: None\n",
        ["outcome-changed"],
    ),
    (
        "def pytest_itemcollected(item):\n    setattr(item, 'obj', print)\n",
        ["collection-changed", "outcome-changed"],
    ),
    # an exit through operator.methodcaller
    ("operator.methodcaller('_exit', 0)(os)\n", ["process-exit"]),
    # pytest's own plugins unloaded or blocked
    (
        "def pytest_configure(config):\n    config.pluginmanager.set_blocked('unittest')\n",
        ["collection-changed"],
    ),
    (
        "def pytest_configure(config):\n    config.pluginmanager.unregister(name='skipping')\n",
        ["collection-changed"],
    ),
    # adjacent literals join into a name
    (
        "def pytest_configure(config):\n    setattr(config, 'tests' 'failed', 0)\n",
        ["outcome-changed"],
    ),
    # a skipped doctest example
    (
        'def f():\n    """\n    >>> f()  # doctest: +ELLIPSIS, +SKIP\n    3\n    """\n',
        ["skip-added"],
    ),
    # empty parameter sets that are no literal
    ("@pytest.mark.parametrize('n', range(0))\ndef test_y(n):\n    pass\n", ["skip-added"]),
    ("@pytest.mark.parametrize('n', list())\ndef test_y(n):\n    pass\n", ["skip-added"]),
    ("@pytest.mark.parametrize('n', [x for x in ()])\ndef test_y(n):\n    pass\n", ["skip-added"]),
    ("@pytest.mark.parametrize('n', [1] * 0)\ndef test_y(n):\n    pass\n", ["skip-added"]),
    ("@pytest.fixture(params=range(5, 5))\ndef each(request):\n    pass\n", ["skip-added"]),
    # hooks bound by for, with ... as, :=, and global
    ("for pytest_collection_modifyitems in [print]:\n    pass\n", ["collection-changed"]),
    ("with open('x') as pytest_runtest_call:\n    pass\n", ["outcome-changed"]),
    ("(pytest_runtest_call := print)\n", ["outcome-changed"]),
    (
        "def setup():\n    global pytest_runtest_call\n    pytest_runtest_call = print\n",
        ["outcome-changed"],
    ),
    # reruns until a pass
    ("@pytest.mark.flaky(reruns=5)\ndef test_y():\n    pass\n", ["skip-added"]),
    ("def test_y(request):\n    request.node.add_marker('flaky')\n", ["skip-added"]),
    # the clock and random draws replaced for every module
    ("import time\ntime.perf_counter = lambda: 0.0\n", ["oracle-patched"]),
    ("import random\nrandom.random = lambda: 0.5\n", ["oracle-patched"]),
    (
        "@pytest.fixture(autouse=True)\ndef frozen(monkeypatch):\n"
        "    monkeypatch.setattr('time.time', lambda: 0)\n",
        ["oracle-patched"],
    ),
]


@pytest.mark.parametrize(("source", "codes"), THIRD_PASS)
def test_what_the_third_attack_pass_found_fires(source, codes):
    findings = found({}, {"tests/conftest.py": IMPORTS + source})
    assert sorted(f.split(": ")[1] for f in findings) == sorted(codes), findings


@pytest.mark.parametrize(
    "source",
    [
        "def test_y(request):\n    assert request.node.obj is not None\n",
        "def test_y(thing):\n    thing.obj = 1\n",
        "operator.methodcaller('strip')(' x ')\n",
        "def pytest_configure(config):\n    config.pluginmanager.is_blocked('unittest')\n",
        "message = ('tests' 'passed')\n",
        'def f():\n    """\n    >>> f()  # doctest: +ELLIPSIS\n    3\n    """\n',
        "@pytest.mark.parametrize('n', range(3))\ndef test_y(n):\n    pass\n",
        "@pytest.mark.parametrize('n', [x for x in (1, 2)])\ndef test_y(n):\n    pass\n",
        "@pytest.fixture(params=[1] * 2)\ndef each(request):\n    pass\n",
        "for name in [print]:\n    pass\n",
        "with open('x') as handle:\n    pass\n",
        "(limit := 3)\n",
        "def setup():\n    global LIMIT\n    LIMIT = 3\n",
        "@pytest.mark.slow\ndef test_y():\n    pass\n",
        "import time\nSTARTED = time.perf_counter\n",
        "import random\nrng = random.Random(1729)\n",
    ],
)
def test_near_misses_of_the_third_attack_pass_pass(source):
    assert found({}, {"tests/conftest.py": IMPORTS + source}) == []


def test_replacing_the_clock_in_a_test_module_is_the_test_s_own_business():
    """A test module's monkeypatch of time.time lasts one test, and is how tests
    freeze the clock; a conftest's reaches every module, the oracle's too."""
    source = IMPORTS + "def test_y(monkeypatch):\n    monkeypatch.setattr('time.time', lambda: 0)\n"
    assert added(source) == []
    assert [f.split(": ")[1] for f in found({}, {"tests/conftest.py": source})] == [
        "oracle-patched"
    ]


def test_a_skipped_doctest_example_in_a_doctest_file_fires():
    skipped = ">>> 1 + 1  # doctest: +SKIP\n3\n"
    assert found({}, {"tests/test_notes.txt": skipped}) == [
        "tests/test_notes.txt:1: skip-added: doctest directive +SKIP on '1 + 1': a skipped "
        "example scores as a pass"
    ]
    assert found({}, {"tests/test_notes.txt": ">>> 1 + 1  # doctest: +ELLIPSIS\n2\n"}) == []
    assert found({"tests/test_notes.txt": skipped}, {"tests/test_notes.txt": "\n" + skipped}) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("time.clock_gettime(time.CLOCK_REALTIME)", "time.clock_gettime reads the wall clock"),
        (
            "asyncio.open_connection('h', 1)",
            "calls asyncio.open_connection in test_y, which reaches",
        ),
        ("open('/dev/urandom', 'rb').read(8)", "reads /dev/urandom in test_y"),
    ],
)
def test_the_third_pass_hermetic_holes_fire(source, expected):
    text = f"import asyncio, time\n\n\ndef test_y():\n    {source}\n"
    (finding,) = added(text, P)
    assert f"non-hermetic: {expected}" in finding
    assert added(text, X) == []  # near miss: outside the hermetic paths


@pytest.mark.parametrize(
    ("source", "codes"),
    [
        # a filter outside any scope, and one after the scope ends, still count
        ("def test_y():\n    warnings.simplefilter('ignore')\n", ["runner-options"]),
        (
            "def test_y():\n    with warnings.catch_warnings():\n        pass\n"
            "    warnings.simplefilter('ignore')\n",
            ["runner-options"],
        ),
        # a report's outcome written
        (
            "def pytest_runtest_logreport(report):\n    report.outcome = 'passed'\n",
            ["outcome-changed"] * 2,
        ),
        ("def f(rep):\n    setattr(rep, 'outcome', 'passed')\n", ["outcome-changed"]),
    ],
)
def test_precision_near_misses_have_their_attacks(source, codes):
    findings = added(IMPORTS + source)
    assert sorted(f.split(": ")[1] for f in findings) == sorted(codes), findings


@pytest.mark.parametrize(
    "source",
    [
        # issue 31's precision: a filter inside catch_warnings(record=True) is undone when it ends
        "def test_y():\n    with warnings.catch_warnings(record=True) as seen:\n"
        "        warnings.simplefilter('always')\n        run()\n    assert seen\n",
        "def test_y():\n    with pytest.warns(UserWarning):\n        warnings.simplefilter('always')\n",
        # a project's own attribute called outcome
        "class Game:\n    def end(self):\n        self.outcome = 'won'\n",
        "def test_y(game):\n    game.outcome = 'lost'\n    setattr(game, 'outcome', 'won')\n",
    ],
)
def test_precision_near_misses_pass(source):
    assert added(IMPORTS + source) == []


def test_a_framework_s_own_tests_of_itself_are_no_finding():
    """issue 31: in pluggy's repository, pluggy is the code under test; a change
    that adds the package is no way to make it so (the base decides)."""
    own = {"src/pluggy/__init__.py": "", "src/pluggy/_result.py": "X = 1\n"}
    test = code(
        "import pluggy",
        "def test_wrapper(monkeypatch):",
        "    monkeypatch.setattr(pluggy, 'HookimplMarker', object)",
        "    def wrapper(outcome):",
        "        outcome.force_result(3)",
    )
    assert found(own, {**own, X: test}) == []
    assert sorted(f.split(": ")[1] for f in found({}, {**own, X: test})) == [
        "outcome-changed",
        "outcome-changed",
    ]


def test_dropping_strict_flags_a_strict_setting_keeps_is_no_finding():
    """issue 31: pytest 9's strict = true in place of --strict-markers and --strict-config."""
    before = {
        "pyproject.toml": '[tool.pytest.ini_options]\naddopts = ["--strict-markers", "--strict-config"]\n'
    }
    after = {"pyproject.toml": "[tool.pytest]\nstrict = true\n"}
    assert found(before, after) == []
    dropped = {"pyproject.toml": "[tool.pytest]\naddopts = []\n"}
    assert [f.split(": ")[1] for f in found(before, dropped)] == ["runner-options"] * 2


def _every_source():
    """Each source the tables above judge, and those of the honest near misses."""
    sources = [source for source, _ in RULES + NON_HERMETIC]
    sources += [IMPORTS + source for source, _ in SECOND_PASS + THIRD_PASS]
    honest = (
        test_honest_test_code_passes,
        test_near_misses_of_what_the_attack_pass_found_pass,
        test_near_misses_of_the_second_attack_pass_pass,
        test_near_misses_of_the_third_attack_pass_pass,
    )
    for test in honest:
        (values,) = [m.args[1] for m in test.pytestmark if m.name == "parametrize"]
        sources += [v.values[0] if hasattr(v, "values") else v for v in values]
    return sources


@pytest.mark.parametrize("source", _every_source())
def test_the_prefilter_never_changes_what_a_full_reading_finds(source):
    """A file the byte scan lets through unread must be one a full reading finds
    nothing in: the scan only saves time."""
    from oracle_guard.checks.test_tamper import python
    from oracle_guard.parsing.patterns import PatternSet

    protected = PatternSet(["oracle/**"])

    def oracle_of(module):
        stem = module.replace(".", "/")
        return next(
            (m for m in map(protected.first_match, [f"{stem}.py", f"{stem}/__init__.py"]) if m),
            None,
        )

    data = source.encode()
    reader = python.Reader("tests", False, oracle_of)
    reader.read(__import__("ast").parse(data))
    full = reader.marks + python.doctest_skips(data)
    assert python.marks(data, "tests", False, oracle_of) == full


def test_system_exit_in_a_test_modules_function_is_a_failure_not_an_exit():
    """pytest catches SystemExit in a test or fixture and reports that test failed;
    at a conftest's (or a plugin's) module level, or anywhere in one, it ends the run."""
    in_test = code("import sys", "def test_cli():", "    sys.exit(3)", "    raise SystemExit(1)")
    assert added(in_test) == []
    assert [f.split(": ")[1] for f in found({}, {"tests/conftest.py": in_test})] == [
        "process-exit",
        "process-exit",
    ]
    assert [
        f.split(": ")[1] for f in added(code("import os", "def test_cli():", "    os._exit(0)"))
    ] == ["process-exit"]  # os._exit is caught by nobody


def test_a_pickle_round_trip_is_no_dynamic_code():
    assert added(code("import pickle", "def test_y(r):", "    pickle.loads(pickle.dumps(r))")) == []
    fires = added(code("import pickle", "def test_y(blob):", "    pickle.loads(blob)"))
    assert [f.split(": ")[1] for f in fires] == ["dynamic-code"]


def test_a_hook_name_bound_in_a_function_is_a_local():
    local = code("def test_y(request):", "    pytest_cap = request.getfixturevalue('x')")
    assert added(local) == []
    inner = code(
        "def test_y():", "    class Spec:", "        def pytest_timeout_set_timer(self): pass"
    )
    assert added(inner) == []
    registered = code(
        "def test_y(request):",
        "    class Plugin:",
        "        def pytest_runtest_call(self): pass",
        "    request.config.pluginmanager.register(Plugin())",
    )
    assert [f.split(": ")[1] for f in added(registered)] == ["collection-changed"]


def test_a_module_in_a_package_folder_shadows_nothing():
    flask = {"flask/__init__.py": "", "flask/app.py": "x = 1\n"}
    inner = {
        "tests/apps/__init__.py": "",
        "tests/apps/inner/__init__.py": "",
        "tests/apps/inner/flask.py": "x = 2\n",
    }
    assert found(flask, {**flask, **inner}) == []
    top = {"tests/flask.py": "x = 2\n"}  # tests/ is no package: it is on sys.path
    assert [f.split(": ")[1] for f in found(flask, {**flask, **top})] == ["module-shadowed"]


def test_a_symlink_to_data_inside_the_tree_is_judged_where_it_points():
    assert found({}, {"tests/certs/valid/ca": link("../expired/ca")}) == []
    out = found({}, {"tests/certs/ca": link("../../secrets/ca")})
    assert [f.split(": ")[1] for f in out] == ["test-unparsable"]
    named = found({}, {"tests/test_link.py": link("../src/evil.py")})
    assert [f.split(": ")[1] for f in named] == ["test-unparsable"]


def test_the_hint_for_test_tamper_alone_asks_the_owners_without_calling_it_an_oracle_edit():
    base = memory({".oracle-guard.yaml": CONTRACT}, "HEAD")
    candidate = memory({".oracle-guard.yaml": CONTRACT, X: "import pytest\npytest.skip()\n"})
    rc, out, err = judged(base, candidate, ["test-tamper"], NOW)
    hint = out.splitlines()[-1]
    assert rc == 1 and hint.startswith("hint: make the test pass"), out
    assert hint.endswith("; ask the oracle's owners. See 'oracle-guard explain skip-added'.")
    assert "oracle is human-owned" not in hint  # near miss of the other checks' hint


def test_a_pickle_round_trip_through_a_name_bound_once_is_no_dynamic_code():
    once = code("import pickle", "def test_y(r):", "    b = pickle.dumps(r)", "    pickle.loads(b)")
    assert added(once) == []
    twice = code(
        "import pickle",
        "def test_y(r, blob):",
        "    b = pickle.dumps(r)",
        "    b = blob",
        "    pickle.loads(b)",
    )
    assert [f.split(": ")[1] for f in added(twice)] == ["dynamic-code"]  # rebound: anything


def test_a_pickle_round_trip_through_a_name_each_test_binds_once_is_no_dynamic_code():
    """issue 31 (attrs' test_slots): two tests, each with its own ``a_pickled``."""
    test = "def test_{}(r):\n    a_pickled = pickle.dumps(r)\n    assert pickle.loads(a_pickled)\n"
    assert added("import pickle\n" + test.format("a") + test.format("b")) == []
    # near misses: a name an argument or a second assignment of the same test binds
    argument = "def test_c(a_pickled):\n    pickle.loads(a_pickled)\n"
    assert [f.split(": ")[1] for f in added("import pickle\n" + test.format("a") + argument)] == [
        "dynamic-code"
    ]
    rebound = test.format("d").replace("    assert", "    a_pickled = r.blob\n    assert")
    assert [f.split(": ")[1] for f in added("import pickle\n" + rebound)] == ["dynamic-code"]


@pytest.mark.parametrize(
    "source",
    [
        "def test_y():\n    ns = {}\n    exec(\"def f(x: 'Missing', y): pass\", ns)\n",
        'def test_y():\n    src = """\ndef example_hook():\n    pass\n"""\n    exec(src, {})\n',
        'SOURCE = "1 + 1"\ndef test_y():\n    assert eval(SOURCE) == 2\n',
    ],
)
def test_exec_of_code_the_file_writes_out_is_read_and_passes(source):
    """issue 31 (pluggy's tests): the string is the code; nothing in it is a finding."""
    assert added(source) == []
    # near misses: the same string with an exit in it, and a string bound twice
    exiting = source.replace("pass", "os._exit(0)").replace("1 + 1", "os._exit(0)")
    assert [f.split(": ")[1] for f in added("import os\n" + exiting)] == ["process-exit"]
    twice = "def test_y(text):\n    src = 'x = 1'\n    src = text\n    exec(src)\n"
    assert [f.split(": ")[1] for f in added(twice)] == ["dynamic-code"]


def test_loading_a_hypothesis_profile_registered_clean_in_the_file_passes():
    clean = code(
        "from hypothesis import settings",
        "settings.register_profile('patience', max_examples=500)",
        "settings.load_profile('patience')",
    )
    assert added(clean) == []
    lowered = clean.replace("max_examples=500", "max_examples=5")
    assert [f.split(": ")[1] for f in added(lowered)] == ["runner-options", "runner-options"]
    elsewhere = code("from hypothesis import settings", "settings.load_profile('quick')")
    assert [f.split(": ")[1] for f in added(elsewhere)] == ["runner-options"]


def test_a_profile_registered_with_a_settings_object_is_judged_by_its_settings():
    clean = code(
        "from hypothesis import settings",
        "settings.register_profile('patience', settings(deadline=500))",
        "settings.load_profile('patience')",
    )
    assert added(clean) == []
    off = clean.replace("deadline=500", "deadline=None")
    assert [f.split(": ")[1] for f in added(off)] == ["runner-options", "runner-options"]


# -- skip markers by meaning (meaning.py) --------------------------------------------------

COMPAT = {
    "src/shop/__init__.py": "",
    "src/shop/_compat.py": code(
        "import sys",
        "WIN = sys.platform.startswith('win')",
        "PY310 = sys.version_info[:2] >= (3, 10)",
    ),
}


def skipped(condition, imports="import sys, platform, os", reason="posix only"):
    return code(
        "import pytest",
        imports,
        f"@pytest.mark.skipif({condition}, reason={reason!r})",
        "def test_y(): pass",
    )


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (skipped("platform.system() == 'Windows'"), skipped("WIN", "from shop._compat import WIN")),
        (skipped("sys.platform == 'win32'"), skipped('os.name == "nt"', reason="no sed")),
        (skipped("(sys.platform != 'win32')"), skipped("not sys.platform.startswith('win')")),
        (skipped("sys.version_info[:2] >= (3, 10)"), skipped("sys.version_info >= (3, 10)")),
        (
            skipped("PY310", "from shop._compat import PY310"),
            skipped("PY_3_10_PLUS", "from shop._compat import PY_3_10_PLUS"),
        ),
        (
            skipped("sys.platform == 'darwin'"),
            skipped("MAC", "import sys\nMAC = sys.platform == 'darwin'"),
        ),
    ],
)
def test_a_skip_condition_rewritten_to_the_same_meaning_is_no_finding(before, after):
    """issue 31: the mark, its condition's syntax through the names it uses, its
    scope; not its reason, quotes, parentheses or the constant's name."""
    compat = {**COMPAT}
    renamed = {
        "src/shop/_compat.py": COMPAT["src/shop/_compat.py"].replace("PY310", "PY_3_10_PLUS")
    }
    assert (
        found({**compat, X: before}, {**compat, **(renamed if "PLUS" in after else {}), X: after})
        == []
    )


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (
            skipped("platform.system() == 'Windows'"),
            skipped("not WIN", "from shop._compat import WIN"),
        ),
        (skipped("sys.platform == 'win32'"), skipped("sys.platform == 'linux'")),
        (skipped("sys.version_info >= (3, 10)"), skipped("sys.version_info >= (3, 12)")),
        (skipped("sys.version_info[:1] >= (3, 10)"), skipped("sys.version_info >= (3, 10)")),
        # a constant that tests more than the platform is not read for its value
        (
            skipped("shutil.which('sed') is None", "import shutil"),
            skipped("SED", "import shutil\nSED = shutil.which('sed') is None"),
        ),
    ],
)
def test_a_skip_condition_that_says_something_else_fires(before, after):
    findings = found({**COMPAT, X: before}, {**COMPAT, X: after})
    assert [f.split(": ")[1] for f in findings] == ["skip-added"], findings


# -- runner-options on the configuration pytest reads (effective.py) -----------------------

SETUP_SECTION = '[metadata]\nname = shop\n\n[tool:pytest]\ntestpaths = tests\naddopts = -k "not slow" --strict-markers\n'
PYPROJECT_SECTION = '[project]\nname = "shop"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\naddopts = "-k \'not slow\' --strict-markers"\n'


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # the same options moved between files of one folder
        (
            {"setup.cfg": SETUP_SECTION},
            {"setup.cfg": "[metadata]\nname = shop\n", "pyproject.toml": PYPROJECT_SECTION},
        ),
        (
            {"tox.ini": "[tox]\n\n[pytest]\naddopts = -p no:cacheprovider\n"},
            {"tox.ini": "[tox]\n", "pytest.ini": "[pytest]\naddopts = -p no:cacheprovider\n"},
        ),
        # a section pytest never read: a pytest.ini outranks the tox.ini beside it
        (
            {
                "pytest.ini": "[pytest]\n",
                "tox.ini": "[tox]\n\n[pytest]\naddopts = --strict-markers\n",
            },
            {"pytest.ini": "[pytest]\n", "tox.ini": "[tox]\n"},
        ),
        (
            {
                "pyproject.toml": PYPROJECT_SECTION,
                "setup.cfg": "[tool:pytest]\nxfail_strict = true\n",
            },
            {
                "pyproject.toml": PYPROJECT_SECTION,
                "setup.cfg": '[tool:pytest]\naddopts = -k "not a"\n',
            },
        ),
        # pytest 9's strict = true for the flag, in another file
        (
            {"setup.cfg": "[tool:pytest]\naddopts = --strict-markers\n"},
            {"setup.cfg": "", "pyproject.toml": "[tool.pytest]\nstrict = true\n"},
        ),
    ],
)
def test_options_pytest_reads_unchanged_are_no_finding_whichever_file_holds_them(before, after):
    """issue 31: runner-options judges the configuration pytest reads, base
    against candidate, not each file against its own earlier text."""
    assert found(before, after) == []


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        # moved, and a flag dropped on the way
        (
            {"setup.cfg": SETUP_SECTION},
            {"setup.cfg": "", "pyproject.toml": PYPROJECT_SECTION.replace(" --strict-markers", "")},
            "pyproject.toml:6: runner-options: addopts drops --strict-markers",
        ),
        # the section pytest did read, dropped
        (
            {"tox.ini": "[tox]\n\n[pytest]\naddopts = --strict-markers\n"},
            {"tox.ini": "[tox]\n"},
            "tox.ini:1: runner-options: addopts drops --strict-markers",
        ),
        # pytest.ini deleted: the tox.ini beside it, which deselects, is read now
        (
            {"pytest.ini": "[pytest]\n", "tox.ini": '[pytest]\naddopts = -k "not a"\n'},
            {"tox.ini": '[pytest]\naddopts = -k "not a"\n'},
            'pytest.ini:1: runner-options: addopts adds -k "not a": it deselects tests',
        ),
        # tests/pytest.ini deleted: the root's setup.cfg is read for tests/ now
        (
            {
                "setup.cfg": '[tool:pytest]\naddopts = -k "not a"\n',
                "tests/pytest.ini": "[pytest]\n",
            },
            {"setup.cfg": '[tool:pytest]\naddopts = -k "not a"\n'},
            'tests/pytest.ini:1: runner-options: addopts adds -k "not a": it deselects tests',
        ),
    ],
)
def test_options_pytest_reads_that_change_fire_wherever_they_moved(before, after, expected):
    assert found(before, after) == [expected]


def test_a_skip_marker_kept_in_a_name_is_judged_on_the_tests_it_decorates():
    """issue 31 (click's needs_fd_capture): on tests the change adds, no finding;
    on a test the base ran, one, at the test (near miss and fire)."""
    marker = code(
        "import sys, pytest", "posix = pytest.mark.skipif(sys.platform == 'win32', reason='x')"
    )
    old = code("def test_old(): pass")
    new_test = marker + code("def test_old(): pass", "@posix", "def test_new(): pass")
    assert found({X: old}, {X: new_test}) == []
    on_old = marker + code("@posix", "def test_old(): pass")
    assert found({X: old}, {X: on_old}) == [
        f"{X}:2: skip-added: @pytest.mark.skipif on test_old: a skipped test scores as a pass"
    ]
    # used another way (a pytestmark list): judged where it is made, at module level
    listed = marker + code("pytestmark = [posix]", "def test_old(): pass")
    assert [f.split(": ")[1] for f in found({X: old}, {X: listed})] == ["skip-added"]


def test_a_new_configuration_read_from_two_changed_folders_is_judged_once():
    after = {
        "tests/pytest.ini": '[pytest]\naddopts = -k "not a"\n',
        "tests/sub/tox.ini": "[tox]\n",
    }
    assert found({}, after) == [
        'tests/pytest.ini:2: runner-options: addopts adds -k "not a": it deselects tests'
    ]
