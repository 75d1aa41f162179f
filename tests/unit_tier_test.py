"""The unit tier (testing/tiers.py): every test is unit unless its folder, its
file or its own ``slow`` mark says why not, and a unit test that starts a slow
program fails before the program starts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, List, Tuple

import pytest

from testing import docs, tiers

ROOT = Path(__file__).resolve().parents[1]
UNIT_COMMAND = ".venv/bin/python -m pytest -m unit -n 2"


def test_every_slow_folder_and_file_is_there() -> None:
    assert [f for f in tiers.SLOW_FOLDERS if not (ROOT / f).is_dir()] == []
    assert [f for f in tiers.SLOW_FILES if not (ROOT / f).is_file()] == []


@pytest.mark.parametrize(
    "path,marks,slow",
    [
        ("tests/e2e/precommit_test.py", [], True),
        ("tests/hosts/ssh_test.py", [], True),
        ("tests/docs_test.py", [], True),
        ("tests/init_test.py", [("runs pre-commit",)], True),
        ("tests/init_test.py", [], False),
        ("tests/e2e_like_test.py", [], False),  # a prefix of a folder is not the folder
        ("tests/docs_test.pyc", [], False),
    ],
)
def test_a_test_is_unit_unless_its_folder_file_or_mark_says_why(
    path: str, marks: List[Tuple[Any, ...]], slow: bool
) -> None:
    why = tiers.slow_reason(path, marks)
    assert (why is not None) == slow, why
    if marks:
        assert why == marks[0][0]


@pytest.mark.parametrize("args", [(), ("",), (" ",), ("one", "two"), (3,)])
def test_slow_takes_one_reason(args: Tuple[Any, ...]) -> None:
    with pytest.raises(ValueError, match="slow takes one reason"):
        tiers.slow_reason("tests/init_test.py", [args])


@pytest.mark.parametrize(
    "args,slow",
    [
        (["pre-commit", "run", "--all-files"], "pre-commit"),
        ([sys.executable, "-m", "pre_commit", "install"], "pre_commit"),
        ([sys.executable, "-X", "utf8", "-m", "pytest", "-q"], "pytest"),
        ("/usr/bin/prek install", "prek"),
        (["/root/.venv/bin/mkdocs", "build"], "mkdocs"),
        ([sys.executable, "-m", "twine", "check"], "twine"),
        (["git", "-C", "repo", "daemon", "--export-all"], "git daemon"),
        (["/usr/lib/git-core/git-daemon", "--reuseaddr"], "git-daemon"),
        ([b"/usr/sbin/sshd", b"-D"], "sshd"),
        (["git", "commit", "-m", "daemon"], None),
        (["git", "-c", "daemon.x=1", "log"], None),
        (["git", "-C", "daemon", "status"], None),
        ([sys.executable, "-m", "oracle_guard", "check"], None),
        ([sys.executable, "-c", "import pytest"], None),
        (["ssh-keygen", "-t", "ed25519"], None),
        ([], None),
    ],
)
def test_the_slow_programs_are_named_and_near_misses_are_not(args: Any, slow: Any) -> None:
    why = tiers.slow_program(args)
    if slow is None:
        assert why is None
    else:
        assert why is not None and why.startswith(f"{slow}: "), why


def test_a_unit_test_that_starts_a_slow_program_fails_before_it_starts(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    assert request.node.get_closest_marker(tiers.UNIT) is not None
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').close()"
    with pytest.raises(tiers.SlowProgram, match=r"unit_tier_test\.py::.* is a unit test"):
        subprocess.run(["pre-commit", "try-repo", str(tmp_path)])
    with pytest.raises(tiers.SlowProgram, match="starts pytest: "):
        subprocess.run([sys.executable, "-m", "pytest", "--version"])
    # the near miss: the same interpreter running code of its own starts
    subprocess.run([sys.executable, "-c", code], check=True)
    assert marker.exists()


@pytest.mark.slow("the near miss of the guard: a slow test may start a slow program")
def test_a_slow_test_may_start_a_slow_program(request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker(tiers.UNIT) is None
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--version"], stdout=subprocess.PIPE, text=True
    )
    assert done.returncode == 0


def test_the_markers_are_assigned_as_documented(request: pytest.FixtureRequest) -> None:
    items = request.session.items
    assert items
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        slow = (
            any(path.startswith(folder) for folder in tiers.SLOW_FOLDERS)
            or path in tiers.SLOW_FILES
            or item.get_closest_marker(tiers.SLOW) is not None
        )
        assert (item.get_closest_marker(tiers.UNIT) is None) == slow, item.nodeid


def test_contributing_names_the_unit_tier_and_ci_runs_the_whole_suite() -> None:
    contributing = (ROOT / "CONTRIBUTING.md").read_text()
    assert f"`{UNIT_COMMAND}`" in contributing
    # the README's test command, which .ci/run runs, is the whole suite; the README
    # may still name the unit tier for the inner loop
    test_command = docs.quick_start()[1]
    assert test_command.endswith("python -m pytest") and "-m unit" not in test_command
    assert "-m unit" not in (ROOT / ".ci/run").read_text()
    assert f"`{UNIT_COMMAND}`" in (ROOT / "README.md").read_text()


def test_the_real_push_context_is_slow_and_the_others_are_unit() -> None:
    params = tiers.contexts(("staged", "ci", "prepush", "push"))
    assert params[:3] == ["staged", "ci", "prepush"]
    (push,) = params[3:]
    assert push.values == ("push",)
    assert [(mark.name, mark.args) for mark in push.marks] == [(tiers.SLOW, (tiers.REAL_PUSH,))]
