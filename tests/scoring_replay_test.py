"""scoring/replay.py's judgments without a run: each verdict from an observed
result, and its near miss; what a frozen id leaves out; the variables a contract
may name. The runs themselves are tests/e2e/replay_test.py's."""

from __future__ import annotations

import pytest

from oracle_guard.scoring import replay
from oracle_guard.scoring.replay import Case, Outcome, ReplayError

NAMES = replay.DEFAULT_ENV["corpus-line"]


def line(expect: str, test: str = "tests/t.py::test_a") -> Case:
    return Case("corpus-line", "c-1", "c.jsonl", 3, {"test": test, "expect": expect}, NAMES)


def case(expected, command=("pytest", "tests/t.py::test_b")) -> Case:
    value = {"command": list(command), "expected": expected, "seed": 1}
    return Case("replay-case", "r-1", "r.json", None, value, replay.DEFAULT_ENV["replay-case"])


def ran(observed: str, why: str = "") -> Outcome:
    return Outcome(observed, why, 0.1, 0 if observed == "pass" else 1)


@pytest.mark.parametrize(
    "record,observed,code",
    [
        (line("pass"), "fail", "example-regressed"),
        (line("pass"), "pass", None),
        (line("fail"), "pass", "example-lost"),
        (line("fail"), "fail", None),
        (line("pass"), "errored", "replay-errored"),
        (case("pass"), "fail", "replay-mismatch"),
        (case("fail"), "fail", None),
        (case(None), "fail", None),
        (case(None), "pass", None),
        (case(None), "errored", "replay-errored"),
        (case({"status": 200}), "pass", "replay-errored"),
        (case("passed"), "pass", "replay-errored"),
    ],
)
def test_each_verdict_and_its_near_miss(record, observed, code):
    assert replay.verdict(record, ran(observed, "it crashed"))[0] == code


def test_an_expected_of_no_form_says_which_forms_there_are():
    _, message = replay.verdict(case({"status": 200}), ran("pass"))
    assert message == (
        'replay-case \'r-1\': expected {"status":200} is none of null, "pass" and "fail", '
        "so the score cannot compare it"
    )


@pytest.mark.parametrize(
    "status,observed",
    [(0, "pass"), (1, "fail"), (2, "errored"), (5, "errored"), (-9, "errored")],
)
def test_a_program_that_is_no_pytest_is_read_from_its_status(status, observed):
    assert replay._from_status(status)[0] == observed


def test_a_frozen_test_module_or_id_leaves_a_record_out():
    assert replay.excluded_by(line("pass"), ["tests/t.py"]) == "tests/t.py"
    assert replay.excluded_by(case("pass"), ["tests/t.py::test_b"]) == "tests/t.py::test_b"
    assert replay.excluded_by(case("pass"), ["r-1"]) == "r-1"


def test_the_near_miss_an_id_that_only_starts_the_same_leaves_nothing_out():
    assert replay.excluded_by(line("pass"), ["tests/t.py::test"]) is None
    assert replay.excluded_by(case("pass", ("python", "tools/x.py", "tests/t.py")), ["r-2"]) is None
    # a program that is no pytest names no test: its arguments are not node ids
    assert replay.excluded_by(case("pass", ("python", "tests/t.py")), ["tests/t.py"]) is None


@pytest.mark.parametrize("name", ["PATH", "HOME", "PYTHONPATH", "PYTEST_ADDOPTS", "LC_ALL"])
def test_a_variable_the_score_sets_is_refused(name):
    with pytest.raises(ReplayError, match=f"names the variable {name}"):
        replay._names("corpus-line", {"id_env": name})


def test_the_near_miss_names_of_its_own_are_taken():
    assert replay._names("replay-case", {"payload_env": "CASE"}) == (
        "REPLAY_ID",
        "CASE",
        "REPLAY_SEED",
    )
