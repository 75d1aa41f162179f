import json

import pytest

from oracle_guard import __version__
from oracle_guard.cli import main
from oracle_guard.findings import HOOKS
from testing import oracle
from testing.git import commit, git, init_repo, run_guard, stage
from testing.oracle import NOW

CONTRACT = oracle.GUARDED_SEEDS


def guarded_repo(tmp_path):
    repo = init_repo(tmp_path / "r")
    commit(
        repo,
        {
            ".oracle-guard.yaml": CONTRACT,
            "seeds/a.json": [1, 2],
            "src/a.py": "",
            "oracle/x.json": "1\n",
        },
    )
    return repo


def run_usage(capsys, *argv):
    """argparse usage errors leave through SystemExit."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(list(argv), env={})
    out, err = capsys.readouterr()
    return exc.value.code, out, err


# -- text output --------------------------------------------------------------------


def test_pass_prints_one_summary_line_per_hook(tmp_path, capsys):
    repo = guarded_repo(tmp_path)
    stage(repo, {"src/a.py": "x = 1\n"})
    rc, out, err = run_guard(capsys, repo, "check", "--now", NOW)
    assert (rc, err) == (0, "")
    assert out.splitlines() == [
        "fixture-lock: passed (nothing to check: the contract has no 'fixtures' section)",
        "seed-append-only: passed",
        "freeze-schema: passed (nothing to check: the contract has no 'freeze' section)",
        "flake-budget: passed (nothing to check: the contract has no 'budget' section)",
        "write-set: passed",
        "test-tamper: passed",
    ]


def test_findings_then_summaries_then_a_hint_naming_the_owners(tmp_path, capsys):
    repo = guarded_repo(tmp_path)
    stage(repo, {"oracle/x.json": "2\n", "docs/a.md": ""})
    rc, out, err = run_guard(capsys, repo, "check", "--now", NOW)
    assert (rc, err) == (1, "")
    lines = out.splitlines()
    assert lines[:2] == [
        "docs/a.md: write-outside-set: matches no allowed pattern of the write set",
        "oracle/x.json: write-denied: matches deny pattern 'oracle/**'",
    ]
    assert lines[2:8] == [
        "fixture-lock: passed (nothing to check: the contract has no 'fixtures' section)",
        "seed-append-only: passed",
        "freeze-schema: passed (nothing to check: the contract has no 'freeze' section)",
        "flake-budget: passed (nothing to check: the contract has no 'budget' section)",
        "write-set: failed (2 errors)",
        "test-tamper: passed",
    ]
    assert lines[8].startswith("hint: ") and "ask an owner (alice)" in lines[8]
    assert len(lines) == 9


@pytest.mark.parametrize(
    ("only", "hooks"),
    [
        ("write-set", ["write-set"]),
        ("write-set,seed-append-only", ["seed-append-only", "write-set"]),
        (" write-set , fixture-lock ", ["fixture-lock", "write-set"]),
    ],
)
def test_only_runs_the_named_hooks_in_a_fixed_order(tmp_path, capsys, only, hooks):
    repo = guarded_repo(tmp_path)
    rc, out, _ = run_guard(capsys, repo, "check", "--only", only, "--now", NOW)
    assert rc == 0, out
    assert [line.split(":")[0] for line in out.splitlines()] == hooks


@pytest.mark.parametrize("only", ["nope", "write-set,nope", "", ",", "write_set"])
def test_unknown_only_hook_is_a_usage_error(capsys, only):
    code, out, err = run_usage(capsys, "check", "--only", only)
    assert (code, out) == (2, "")
    assert "oracle-guard check: error: argument --only: unknown hook" in err
    assert f"choose from {', '.join(HOOKS)}" in err


def test_unknown_format_is_a_usage_error(capsys):
    code, _, err = run_usage(capsys, "check", "--format", "xml")
    assert code == 2
    assert "argument --format: invalid choice: 'xml'" in err


def test_missing_command_is_a_usage_error(capsys):
    code, _, err = run_usage(capsys)
    assert code == 2
    assert "usage: oracle-guard" in err


def test_version(capsys):
    from oracle_guard.build_info import version_line

    code, out, _ = run_usage(capsys, "--version")
    assert (code, out) == (0, version_line() + "\n")
    assert out.startswith(f"oracle-guard {__version__}")


def _modules_after(repo, *argv):
    """The command modules a real ``oracle-guard`` process imported, and its exit code."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from oracle_guard import cli\n"
        "try:\n"
        f"    rc = cli.main({list(argv)!r}, env={{}})\n"
        "except SystemExit as exc:\n"
        "    rc = exc.code\n"
        "names = sorted(m for m in sys.modules if m.startswith('oracle_guard.commands.'))\n"
        "print(rc, ' '.join(names), file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    rc, _, names = proc.stderr.decode().strip().splitlines()[-1].partition(" ")
    return int(rc), set(names.split())


def test_a_run_imports_only_the_command_it_runs(tmp_path):
    repo = guarded_repo(tmp_path)
    rc, modules = _modules_after(repo, "check", "--now", NOW)
    assert rc == 0
    assert "oracle_guard.commands.doctor" not in modules
    assert "oracle_guard.commands.check" in modules
    # near misses: help and a bad command name still know every command
    for argv in (["--help"], ["-h", "check"], ["chekc"]):
        rc, modules = _modules_after(repo, *argv)
        assert "oracle_guard.commands.doctor" in modules, argv
        assert rc in (0, 2)


def test_help_lists_every_command_and_a_command_error_reads_as_before(capsys):
    from oracle_guard.cli import COMMANDS

    code, out, _ = run_usage(capsys, "--help")
    assert code == 0 and all(name in out for name in COMMANDS)
    code, _, err = run_usage(capsys, "check", "--bogus")
    assert code == 2
    assert err.splitlines()[-1] == "oracle-guard: error: unrecognized arguments: --bogus"
    code, _, err = run_usage(capsys, "chekc")
    assert code == 2
    assert "invalid choice: 'chekc' (choose from 'check', 'score', 'lock', 'freeze'," in err


def test_bad_now_is_an_error(tmp_path, capsys):
    repo = guarded_repo(tmp_path)
    rc, out, err = run_guard(capsys, repo, "check", "--now", "yesterday")
    assert (rc, out) == (2, "")
    assert err.startswith("oracle-guard: error: ") and err.count("\n") == 1


def test_clock_from_environment_when_no_option(tmp_path, capsys):
    repo = guarded_repo(tmp_path)
    rc, out, _ = run_guard(
        capsys,
        repo,
        "check",
        "--format",
        "json",
        env={"ORACLE_GUARD_NOW": "2030-01-02T03:04:05+00:00"},
    )
    assert rc == 0, out
    assert json.loads(out)["now"] == "2030-01-02T03:04:05+00:00"
    rc, out, _ = run_guard(
        capsys,
        repo,
        "check",
        "--format",
        "json",
        "--now",
        "2031-01-01T00:00:00+00:00",
        env={"ORACLE_GUARD_NOW": "2030-01-02T03:04:05+00:00"},
    )
    assert json.loads(out)["now"] == "2031-01-01T00:00:00+00:00"


# -- JSON output --------------------------------------------------------------------


def test_json_output_keeps_findings_and_checks(tmp_path, capsys):
    repo = guarded_repo(tmp_path)
    stage(repo, {"oracle/x.json": "2\n", "seeds/a.json": [2, 1]})
    rc, out, err = run_guard(capsys, repo, "check", "--format", "json", "--now", NOW)
    assert (rc, err) == (1, "")
    doc = json.loads(out)
    assert "error" not in doc
    assert [(f["hook"], f["code"], f["path"], f["severity"]) for f in doc["findings"]] == [
        ("seed-append-only", "seed-reordered", "seeds/a.json", "error"),
        ("write-set", "write-denied", "oracle/x.json", "error"),
        ("write-set", "write-denied", "seeds/a.json", "error"),
    ]
    assert set(doc["findings"][0]) == {"hook", "code", "severity", "path", "line", "message"}
    assert set(doc["checks"]) == set(HOOKS)
    assert doc["checks"]["write-set"] == {
        "status": "failed",
        "errors": 2,
        "warnings": 0,
        "note": None,
    }
    assert doc["checks"]["fixture-lock"]["status"] == "passed"
    assert doc["checks"]["fixture-lock"]["note"] == (
        "nothing to check: the contract has no 'fixtures' section"
    )
    assert (doc["base_from"], doc["candidate"], doc["contract_from"], doc["now"]) == (
        "HEAD",
        "the index",
        "HEAD",
        f"{NOW}T00:00:00+00:00",
    )
    assert doc["base"] == git(repo, "rev-parse", "HEAD").strip()


def test_json_output_on_pass(tmp_path, capsys):
    repo = guarded_repo(tmp_path)
    rc, out, _ = run_guard(
        capsys, repo, "check", "--format", "json", "--only", "write-set", "--now", NOW
    )
    assert rc == 0
    doc = json.loads(out)
    assert doc["findings"] == []
    assert list(doc["checks"]) == ["write-set"]


@pytest.mark.parametrize("case", ["bad-base", "broken-contract", "not-a-repo"])
def test_json_output_on_an_error_is_still_json(tmp_path, capsys, monkeypatch, case):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    args = ["check", "--format", "json", "--now", NOW]
    if case == "bad-base":
        repo = guarded_repo(tmp_path)
        args += ["--base", "nope"]
    elif case == "broken-contract":
        repo = init_repo(tmp_path / "r")
        stage(repo, {".oracle-guard.yaml": "version: 1\nseed: []\n"})
    else:
        repo = tmp_path / "plain"
        repo.mkdir()
    rc, out, err = run_guard(capsys, repo, *args)
    assert rc == 2
    doc = json.loads(out)
    assert (doc["findings"], doc["checks"]) == ([], {})
    assert doc["error"] and err == f"oracle-guard: error: {doc['error']}\n"
