"""One error hierarchy and one handler: an expected failure (an OracleGuardError)
exits with its code and its one line; anything else is an internal error, exit 2,
never a pass. Both entries, `oracle-guard COMMAND` and the pre-receive hook, say
so in their own words."""

import io
import json
import subprocess

import pytest

from oracle_guard import check_run, errors
from oracle_guard.cli import main
from oracle_guard.commands import explain, pre_receive

EXPECTED = [
    errors.UsageError,
    errors.ContractError,
    errors.GitError,
    errors.RevisionError,
    errors.ClockError,
    errors.WorktreeError,
    errors.Refused,
    errors.InstallError,
    errors.ProtocolError,
    errors.InitError,
    errors.ReportError,
]
# unexpected, though named like the expected ones or close to them
UNEXPECTED = [ValueError, KeyError, RuntimeError, OSError, AssertionError]
MESSAGE = "bad \x1b[31m ##[group] caf\udce9"
SHOWN = "bad \\x1b[31m ##\\[group] caf\\xe9"  # escaped, and no CI runner command


def raising(exc):
    def raise_it(*args, **kwargs):
        raise exc

    return raise_it


def run_cli(capsys, monkeypatch, exc, *argv):
    monkeypatch.setattr(explain, "explain", raising(exc))
    monkeypatch.setattr(check_run, "run_checks", raising(exc))
    capsys.readouterr()
    code = main(list(argv or ["explain", "--all"]), env={})
    out, err = capsys.readouterr()
    return code, out, err


def run_pre_receive(tmp_path, monkeypatch, exc, env=None):
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "server.git")], check=True)
    monkeypatch.chdir(tmp_path / "server.git")
    monkeypatch.setattr(pre_receive, "parse_updates", raising(exc))
    stderr = io.StringIO()
    code = pre_receive.receive(io.StringIO(""), stderr, env or {"ORACLE_GUARD_NOW": "2026-01-01"})
    return code, stderr.getvalue()


@pytest.mark.parametrize("cls", EXPECTED)
def test_every_expected_failure_exits_2_with_its_message(cls):
    exc = cls("the reason")
    assert isinstance(exc, errors.OracleGuardError)
    assert cls.exit_code == 2
    assert errors.failure(exc) == (2, "the reason", True)


def test_a_clock_error_is_still_a_value_error():
    assert issubclass(errors.ClockError, ValueError)


@pytest.mark.parametrize("cls", UNEXPECTED)
def test_anything_else_is_an_internal_error_exit_2(cls):
    got = errors.failure(cls("the reason"))
    assert got.exit_code == 2 and not got.expected
    assert got.message.startswith(f"internal error: {cls.__name__}: ")


def test_the_old_homes_of_the_classes_name_the_same_classes():
    from oracle_guard import clock, contract, revisions
    from oracle_guard.git import plumbing, worktree

    assert (
        clock.ClockError,
        contract.ContractError,
        revisions.RevisionError,
        plumbing.GitError,
        worktree.WorktreeError,
        pre_receive.ProtocolError,
    ) == (
        errors.ClockError,
        errors.ContractError,
        errors.RevisionError,
        errors.GitError,
        errors.WorktreeError,
        errors.ProtocolError,
    )


# -- the command line ---------------------------------------------------------------
@pytest.mark.parametrize("cls", EXPECTED)
def test_the_cli_prints_an_expected_failure_as_one_line(capsys, monkeypatch, cls):
    code, out, err = run_cli(capsys, monkeypatch, cls(MESSAGE))
    assert (code, out, err) == (2, "", f"oracle-guard: error: {SHOWN}\n")


@pytest.mark.parametrize("cls", UNEXPECTED)
def test_the_cli_prints_anything_else_as_an_internal_error(capsys, monkeypatch, cls):
    code, out, err = run_cli(capsys, monkeypatch, cls("boom"))
    detail = "'boom'" if cls is KeyError else "boom"
    assert (code, out) == (2, "")
    assert err == (
        f"oracle-guard: error: internal error: {cls.__name__}: {detail} (rerun with --debug)\n"
    )


def test_a_json_reader_gets_the_failure_as_json_too(tmp_path, capsys, monkeypatch):
    code, out, err = run_cli(
        capsys,
        monkeypatch,
        errors.RevisionError("no base"),
        "check",
        "-C",
        str(tmp_path),
        "--format",
        "json",
    )
    assert code == 2 and json.loads(out)["error"] == "no base"
    assert err == "oracle-guard: error: no base\n"
    code, out, _ = run_cli(
        capsys,
        monkeypatch,
        LookupError("no base"),
        "check",
        "-C",
        str(tmp_path),
        "--format",
        "json",
    )
    assert code == 2
    assert json.loads(out)["error"] == "internal error: LookupError: no base (rerun with --debug)"


def test_debug_adds_the_traceback_and_keeps_the_line(capsys, monkeypatch):
    code, _, err = run_cli(capsys, monkeypatch, ValueError("boom"), "check", "--debug")
    assert code == 2
    assert "Traceback" in err
    assert err.endswith(
        "oracle-guard: error: internal error: ValueError: boom (rerun with --debug)\n"
    )


# -- the pre-receive hook -------------------------------------------------------------
@pytest.mark.parametrize("cls", EXPECTED)
def test_pre_receive_rejects_the_push_with_an_expected_failure(tmp_path, monkeypatch, cls):
    code, err = run_pre_receive(tmp_path, monkeypatch, cls(MESSAGE))
    assert (code, err) == (2, f"oracle-guard: push rejected: {SHOWN}\n")


@pytest.mark.parametrize("cls", UNEXPECTED)
def test_pre_receive_rejects_the_push_on_anything_else(tmp_path, monkeypatch, cls):
    code, err = run_pre_receive(tmp_path, monkeypatch, cls("boom"))
    detail = "'boom'" if cls is KeyError else "boom"
    assert (code, err) == (
        2,
        f"oracle-guard: push rejected: internal error: {cls.__name__}: {detail}\n",
    )


def test_pre_receive_marks_each_line_for_gitlab(tmp_path, monkeypatch):
    env = {"ORACLE_GUARD_NOW": "2026-01-01", "GL_ID": "user-1"}
    code, err = run_pre_receive(tmp_path, monkeypatch, errors.GitError("gone"), env)
    assert (code, err) == (2, "GL-HOOK-ERR: oracle-guard: push rejected: gone\n")


def test_near_miss_a_command_that_returns_is_not_an_error(capsys):
    capsys.readouterr()
    assert main(["explain", "write-denied"], env={}) == 0
    assert capsys.readouterr().err == ""
