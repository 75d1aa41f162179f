"""The clock: --now or ORACLE_GUARD_NOW, read once, strict about its format."""

import datetime as dt
import json

import pytest

from oracle_guard import clock
from testing.git import init_repo, run_guard, stage

UTC = dt.timezone.utc


# -- parse_when: when an expiry ends -----------------------------------------
def test_date_lasts_through_its_day_in_utc():
    assert clock.parse_when("2026-09-30") == dt.datetime(2026, 10, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2026-09-30T12:00Z", dt.datetime(2026, 9, 30, 12, 0, tzinfo=UTC)),
        ("2026-09-30T12:00:05Z", dt.datetime(2026, 9, 30, 12, 0, 5, tzinfo=UTC)),
        ("2026-09-30T12:00:00+02:00", dt.datetime(2026, 9, 30, 10, 0, tzinfo=UTC)),
        ("2026-09-30T12:00:00-05:30", dt.datetime(2026, 9, 30, 17, 30, tzinfo=UTC)),
        ("2026-09-30T12:00:00.5Z", dt.datetime(2026, 9, 30, 12, 0, 0, 500000, tzinfo=UTC)),
        ("2026-09-30T12:00:00.1234567Z", dt.datetime(2026, 9, 30, 12, 0, 0, 123456, tzinfo=UTC)),
    ],
)
def test_date_time_with_offset_is_exact(text, expected):
    assert clock.parse_when(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "2026-09-30T12:00:00",  # no offset: ambiguous
        "2026-09-30 12:00:00Z",
        "2026-9-30",
        "30/09/2026",
        "2026-09-30\n",
        "\uff12\uff10\uff12\uff16-09-30",  # fullwidth digits
        "",
    ],
)
def test_not_a_date_form(text):
    with pytest.raises(clock.ClockError, match="is not a date"):
        clock.parse_when(text)


@pytest.mark.parametrize(
    "text, problem",
    [
        ("2026-02-30", "day is out of range for month"),
        ("2026-13-01", "month must be in 1..12"),
        ("2026-09-30T24:00:00Z", "hour must be in 0..23"),
        ("2026-09-30T12:00:00+24:00", "offset out of range"),
    ],
)
def test_impossible_date(text, problem):
    with pytest.raises(clock.ClockError) as info:
        clock.parse_when(text)
    assert str(info.value) == f"{text!r} is not a valid date: {problem}"


def test_not_a_string():
    with pytest.raises(clock.ClockError, match="is not a date string"):
        clock.parse_when(20260930)


# -- parse_now and now_from ----------------------------------------------------
def test_now_date_is_the_start_of_that_day_in_utc():
    assert clock.parse_now("2026-09-25") == dt.datetime(2026, 9, 25, tzinfo=UTC)


def test_now_date_time_keeps_its_offset():
    now = clock.parse_now("2026-09-25T12:00:00+02:00")
    assert now == dt.datetime(2026, 9, 25, 10, 0, tzinfo=UTC)
    assert now.utcoffset() == dt.timedelta(hours=2)


def test_now_without_offset_is_rejected():
    with pytest.raises(clock.ClockError) as info:
        clock.parse_now("2026-09-25T12:00:00")
    assert str(info.value).startswith("--now/ORACLE_GUARD_NOW '2026-09-25T12:00:00' is not")


def test_option_wins_over_environment():
    now = clock.now_from("2026-01-01", {"ORACLE_GUARD_NOW": "2030-01-01"})
    assert now == dt.datetime(2026, 1, 1, tzinfo=UTC)


def test_environment_when_no_option():
    assert clock.now_from(None, {"ORACLE_GUARD_NOW": "2030-01-01T00:00:00Z"}) == dt.datetime(
        2030, 1, 1, tzinfo=UTC
    )


def test_system_clock_in_utc_when_neither():
    before = dt.datetime.now(UTC)
    now = clock.now_from(None, {"ORACLE_GUARD_NOW": ""})
    assert now.tzinfo is not None and now.utcoffset() == dt.timedelta(0)
    assert before <= now <= dt.datetime.now(UTC)


# -- through the command line --------------------------------------------------
CONTRACT = """\
version: 1
freeze:
  - {paths: ["oracle/flake_budget.yaml"], schema: flake-budget}
budget:
  max_frozen: 3
"""
BUDGET = """\
max_frozen: 3
frozen:
  - id: canonicalize_unicode_hyphen
    owner: platform-api
    expires: "2026-09-30"
    reason: "locale-dependent hyphen folding on CI image"
"""
EXPIRED = (
    "oracle/flake_budget.yaml:3: budget-expired: 'canonicalize_unicode_hyphen' expired 2026-09-30"
)


@pytest.fixture
def repo(tmp_path):
    repo = init_repo(tmp_path / "repo")
    stage(repo, {".oracle-guard.yaml": CONTRACT, "oracle/flake_budget.yaml": BUDGET})
    return repo


def guard(capsys, repo, *args, env=None):
    return run_guard(capsys, repo, "check", "--only", "flake-budget", *args, env=env)


def test_cli_now_date(capsys, repo):
    rc, out, _ = guard(capsys, repo, "--now", "2026-09-30")
    assert rc == 0, out
    rc, out, _ = guard(capsys, repo, "--now", "2026-10-01")
    assert rc == 1
    assert EXPIRED in out.splitlines()


def test_cli_now_date_time_with_offset(capsys, repo):
    # 2026-10-01T01:59:59+02:00 is 2026-09-30T23:59:59Z: the date still holds
    rc, out, _ = guard(capsys, repo, "--now", "2026-10-01T01:59:59+02:00")
    assert rc == 0, out
    rc, out, _ = guard(capsys, repo, "--now", "2026-10-01T02:00:00+02:00")
    assert rc == 1
    assert EXPIRED in out.splitlines()


def test_cli_environment(capsys, repo):
    rc, out, _ = guard(capsys, repo, env={"ORACLE_GUARD_NOW": "2026-09-30T23:59:59Z"})
    assert rc == 0, out
    rc, out, _ = guard(capsys, repo, env={"ORACLE_GUARD_NOW": "2026-10-01T00:00:00Z"})
    assert rc == 1
    assert EXPIRED in out.splitlines()


def test_cli_option_wins_over_environment(capsys, repo):
    rc, out, _ = guard(capsys, repo, "--now", "2026-09-25", env={"ORACLE_GUARD_NOW": "2027-01-01"})
    assert rc == 0, out
    rc, out, _ = guard(capsys, repo, "--now", "2027-01-01", env={"ORACLE_GUARD_NOW": "2026-09-25"})
    assert rc == 1
    assert EXPIRED in out.splitlines()


def test_cli_reports_the_clock_it_used(capsys, repo):
    rc, out, _ = guard(
        capsys, repo, "--format", "json", env={"ORACLE_GUARD_NOW": "2026-09-25T12:00:00+02:00"}
    )
    assert rc == 0
    assert json.loads(out)["now"] == "2026-09-25T12:00:00+02:00"


@pytest.mark.parametrize("value", ["tomorrow", "2026-02-30", "2026-09-25T12:00:00", "25.09.2026"])
def test_cli_malformed_now_exits_2(capsys, repo, value):
    rc, out, err = guard(capsys, repo, "--now", value)
    assert rc == 2
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith(f"oracle-guard: error: --now/ORACLE_GUARD_NOW {value!r} is not ")
    assert "(e.g. 2026-09-25 or 2026-09-25T12:00:00Z)" in err


def test_cli_malformed_environment_exits_2(capsys, repo):
    rc, out, err = guard(capsys, repo, env={"ORACLE_GUARD_NOW": "next week"})
    assert rc == 2
    assert err == (
        "oracle-guard: error: --now/ORACLE_GUARD_NOW 'next week' is not a date "
        "(YYYY-MM-DD) or a date-time with offset (YYYY-MM-DDTHH:MM[:SS]Z or +HH:MM) "
        "(e.g. 2026-09-25 or 2026-09-25T12:00:00Z)\n"
    )


def test_cli_valid_option_hides_malformed_environment(capsys, repo):
    rc, out, err = guard(capsys, repo, "--now", "2026-09-25", env={"ORACLE_GUARD_NOW": "next week"})
    assert rc == 0, out + err
