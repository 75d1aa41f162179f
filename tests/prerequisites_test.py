"""Tests that need what a checkout cannot carry (testing/prerequisites.py) are not
run without it, and say so in one line; with ORACLE_GUARD_REQUIRE_ALL=1, as .ci/run
sets it, the run fails instead. Real pytest runs of a small suite that loads the
suite's own conftest."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from testing import conformance

ROOT = Path(__file__).resolve().parents[1]

SUITE = {
    "conftest.py": "from tests.conftest import *  # noqa: F401,F403\n",
    "pytest.ini": "[pytest]\n",
    "test_data.py": (
        "import pytest\n\n"
        "@pytest.mark.needs('conformance')\n"
        "def test_reads_the_suites():\n    pass\n\n"
        "def test_plain():\n    pass\n"
    ),
}


def run_suite(tmp_path: Path, data: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    suite = tmp_path / "suite"
    suite.mkdir(exist_ok=True)
    for name, text in SUITE.items():
        if not (suite / name).exists():
            (suite / name).write_text(text)
    basetemp = [f"--basetemp={tmp_path / 'basetemp'}"]
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ORACLE_GUARD_")}
    environ.update(PYTHONPATH=str(ROOT), **{conformance.ENV: str(data)}, **env)
    return subprocess.run(
        # a basetemp of its own: a numbered one under /tmp/pytest-of-USER would have
        # pytest remove older runs' folders there first: minutes on a shared machine
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *basetemp, *args],
        cwd=suite,
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def whole_data(folder: Path) -> Path:
    for entry in conformance.ENTRIES:
        (folder / entry).parent.mkdir(parents=True, exist_ok=True)
        if "." in entry.rsplit("/", 1)[-1] or entry.endswith("LICENSE"):
            (folder / entry).write_text("")
        else:
            (folder / entry).mkdir()
    return folder


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist"])
def test_without_the_data_the_test_is_not_run_and_one_line_says_why(tmp_path, workers):
    missing = tmp_path / "nowhere"
    done = run_suite(tmp_path, missing, *workers)
    assert done.returncode == 0, done.stdout
    lines = done.stdout.splitlines()
    said = [line for line in lines if line.startswith("not run: ")]
    assert said == [
        f"not run: 1 test needs the public suites' data: {missing} is missing; put a copy "
        f"of shared/conformance there, or name one with {conformance.ENV}=DIR "
        "(CONTRIBUTING.md, Conformance data)"
    ]
    assert "1 passed" in lines[-1] and "2 passed" not in lines[-1]


def test_with_the_data_every_test_runs(tmp_path):
    done = run_suite(tmp_path, whole_data(tmp_path / "data"))
    assert done.returncode == 0, done.stdout
    assert "not run" not in done.stdout
    assert "2 passed" in done.stdout.splitlines()[-1]


def test_a_suite_that_lacks_one_file_is_named(tmp_path):
    data = whole_data(tmp_path / "data")
    (data / "junit" / "junit-10.xsd").unlink()
    done = run_suite(tmp_path, data)
    assert f"{data} lacks junit/junit-10.xsd;" in done.stdout


def test_require_all_fails_the_run_before_any_test(tmp_path):
    done = run_suite(tmp_path, tmp_path / "nowhere", **{"ORACLE_GUARD_REQUIRE_ALL": "1"})
    assert done.returncode == 4, done.stdout
    assert "passed" not in done.stdout
    errors = [line for line in done.stdout.splitlines() if line.startswith("ERROR: ")]
    assert errors == [
        f"ERROR: ORACLE_GUARD_REQUIRE_ALL=1 and tests would not run: the public suites' "
        f"data: {tmp_path / 'nowhere'} is missing; put a copy of shared/conformance there, "
        f"or name one with {conformance.ENV}=DIR (CONTRIBUTING.md, Conformance data)"
    ]


def test_require_all_with_everything_there_runs_everything(tmp_path):
    done = run_suite(tmp_path, whole_data(tmp_path / "data"), **{"ORACLE_GUARD_REQUIRE_ALL": "1"})
    assert done.returncode == 0, done.stdout
    assert "2 passed" in done.stdout.splitlines()[-1]


def test_an_unknown_prerequisite_is_a_usage_error(tmp_path):
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "test_typo.py").write_text(
        "import pytest\n\n@pytest.mark.needs('conformnace')\ndef test_x():\n    pass\n"
    )
    done = run_suite(tmp_path, whole_data(tmp_path / "data"))
    assert done.returncode == 4, done.stdout
    assert "needs(conformnace): no such prerequisite" in done.stdout


def test_the_checkout_commits_none_of_the_data():
    """Nothing taken from another repository is committed here (issue #29)."""
    tracked = subprocess.run(
        ["git", "ls-files", "-z", "tests/data", "testing"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        check=True,
    ).stdout.decode()
    names = [name for name in tracked.split("\0") if name]
    assert not [n for n in names if n.startswith("tests/data/")]
    taken = ("JSONTestSuite", "yaml-test-suite", "t3070", "sarif-schema", "junit-10", "codequality")
    assert not [n for n in names if any(t in n for t in taken)]
