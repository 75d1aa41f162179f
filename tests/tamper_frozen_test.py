"""tamper.frozen_tests (hooks/checks/test_tamper/frozen.py): the tests, helpers and
fixtures the base holds under the patterns must be at the candidate unchanged,
compared on their syntax; new tests may be added. Each rule fires beside a near
miss that passes."""

from __future__ import annotations

import pytest

from testing.oracle import NOW
from testing.trees import judged, memory

CONTRACT = """\
version: 1
write_set:
  allow: ["src/**", "tests/**", "/conftest.py"]
  deny: ["oracle/**"]
tamper:
  paths: ["tests/**"]
  frozen_tests: ["tests/**"]
"""
T = "tests/test_pricing.py"
TESTS = """\
from pricing import discount

EXPECTED = 180


def test_discount():
    assert discount(200, 10) == EXPECTED


class TestRounding:
    tolerance = 0

    def test_half(self, prices):
        assert discount(prices[0], 50) == 50
"""
ROOT_CONFTEST = """\
import pytest


@pytest.fixture
def prices():
    return [100, 200]


@pytest.fixture
def unused():
    return 0


@pytest.fixture(autouse=True)
def clean():
    yield
"""
BASE = {T: TESTS, "conftest.py": ROOT_CONFTEST}
ORACLE = "an existing test is oracle (tamper.frozen_tests); add a new test instead"


def found(after, contract=CONTRACT, before=None):
    before = BASE if before is None else before
    base = memory({".oracle-guard.yaml": contract, **before}, "HEAD")
    candidate = memory({".oracle-guard.yaml": contract, **{**before, **after}})
    rc, out, err = judged(base, candidate, ["test-tamper"], NOW)
    assert err == "", err
    lines = out.splitlines()
    findings = lines[: next(n for n, line in enumerate(lines) if line.startswith("test-tamper: "))]
    assert rc == (1 if findings else 0), out
    return findings


@pytest.mark.parametrize(
    ("after", "expected"),
    [
        # an expected value edited
        (
            {T: TESTS.replace("EXPECTED = 180", "EXPECTED = 200")},
            f"{T}:3: test-changed: the helper EXPECTED is changed: {ORACLE}",
        ),
        # an assertion weakened
        (
            {T: TESTS.replace("== EXPECTED", "is not None")},
            f"{T}:6: test-changed: the test test_discount is changed: {ORACLE}",
        ),
        # a decorator added
        (
            {
                T: "import pytest\n"
                + TESTS.replace("def test_discount", "@pytest.mark.slow\ndef test_discount")
            },
            f"{T}:8: test-changed: the test test_discount is changed: {ORACLE}",
        ),
        # a test deleted
        (
            {
                T: TESTS.replace(
                    "def test_discount():\n    assert discount(200, 10) == EXPECTED\n", ""
                )
            },
            f"{T}:6: test-removed: the test test_discount is gone: {ORACLE}",
        ),
        # a method renamed
        (
            {T: TESTS.replace("def test_half", "def test_halved")},
            f"{T}:13: test-removed: the test TestRounding.test_half is gone: {ORACLE}",
        ),
        # the import a test reads swapped
        (
            {T: TESTS.replace("from pricing import discount", "from stub import discount")},
            f"{T}:1: test-changed: the import discount is changed: {ORACLE}",
        ),
        # a class attribute changed
        (
            {T: TESTS.replace("tolerance = 0", "tolerance = 100")},
            f"{T}:10: test-changed: the class TestRounding is changed: {ORACLE}",
        ),
    ],
)
def test_an_existing_test_removed_or_changed_fires(after, expected):
    assert expected in found(after)


def test_a_deleted_file_of_frozen_tests_loses_every_test():
    base = memory({".oracle-guard.yaml": CONTRACT, **BASE}, "HEAD")
    candidate = memory({".oracle-guard.yaml": CONTRACT, "conftest.py": ROOT_CONFTEST})
    rc, out, _ = judged(base, candidate, ["test-tamper"], NOW)
    assert rc == 1
    assert f"{T}:6: test-removed: the test test_discount is gone: {ORACLE}" in out.splitlines()


def test_a_conftest_fixture_a_frozen_test_requests_is_frozen_too():
    changed = ROOT_CONFTEST.replace("return [100, 200]", "return [0, 0]")
    assert found({"conftest.py": changed}) == [
        f"conftest.py:5: test-changed: the fixture prices is changed: {ORACLE}"
    ]
    autouse = ROOT_CONFTEST.replace("    yield\n", "    yield\n    print('done')\n")
    assert found({"conftest.py": autouse}) == [
        f"conftest.py:15: test-changed: the autouse fixture clean is changed: {ORACLE}"
    ]
    # near miss: a fixture no frozen test requests
    assert found({"conftest.py": ROOT_CONFTEST.replace("return 0", "return 1")}) == []


@pytest.mark.parametrize(
    "after",
    [
        # a new test, beside the old ones and in a class
        {T: TESTS + "\n\ndef test_new():\n    assert discount(0, 0) == 0\n"},
        {
            T: TESTS.replace(
                "    tolerance = 0\n",
                "    tolerance = 0\n\n    def test_zero(self):\n        pass\n",
            )
        },
        # formatting and comments
        {
            T: TESTS.replace(
                "assert discount(200, 10) == EXPECTED", "assert discount(200,10)==EXPECTED  # 10%"
            )
        },
        # a new file of tests
        {"tests/test_more.py": "def test_more():\n    assert True\n"},
        # a test moved, unchanged, to another file of the change
        {
            T: TESTS.replace(
                "def test_discount():\n    assert discount(200, 10) == EXPECTED\n", ""
            ),
            "tests/test_discount.py": "def test_discount():\n    assert discount(200, 10) == EXPECTED\n",
        },
    ],
)
def test_adding_tests_reformatting_and_moving_pass(after):
    assert found(after) == []


def test_without_the_key_existing_tests_may_change():
    plain = CONTRACT.replace('  frozen_tests: ["tests/**"]\n', "")
    assert found({T: TESTS.replace("EXPECTED = 180", "EXPECTED = 200")}, contract=plain) == []


def test_a_file_outside_the_patterns_is_not_frozen():
    narrow = CONTRACT.replace('frozen_tests: ["tests/**"]', 'frozen_tests: ["tests/golden/**"]')
    assert found({T: TESTS.replace("EXPECTED = 180", "EXPECTED = 200")}, contract=narrow) == []


def test_a_misspelled_key_is_a_contract_error_with_a_suggestion():
    typo = CONTRACT.replace("frozen_tests:", "frozen_test:")
    base = memory({".oracle-guard.yaml": typo, **BASE}, "HEAD")
    candidate = memory({".oracle-guard.yaml": typo, **BASE, T: TESTS + "\n"})
    rc, out, err = judged(base, candidate, ["test-tamper"], NOW)
    assert rc != 0
    assert "did you mean 'frozen_tests'?" in out + err
