"""``oracle-guard score`` with real pytest in real repositories: each rule fires on
an agent's patch and passes its near miss, locally (--base/--head) and in CI (the
merge into --target); the patches that pass every check turn the score red."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Dict, Optional

import jsonschema
import pytest

from testing.git import commit, git, init_repo, remove, run_guard
from testing.oracle import NOW

ROOT = Path(__file__).resolve().parents[2]

CONTRACT = """\
version: 1
freeze:
  - {paths: ["oracle/quarantine.json"], schema: quarantine-list}
write_set:
  allow: ["src/**", "tests/**"]
  deny: ["oracle/**"]
score:
  tests: ["tests/**"]
  pin: {randomly_seed: 20260921, hypothesis: {deadline: null}}
  timeout: %(timeout)d
"""

SOURCE = """\
CASES = [(2, 3, 5), (10, -4, 6)]


def add(a, b):
    return a + b
"""

TESTS = """\
import pytest

from src.calc import CASES, add


def test_add_small():
    assert add(2, 2) == 4


@pytest.mark.parametrize(("a", "b", "total"), CASES)
def test_add_cases(a, b, total):
    assert add(a, b) == total


@pytest.mark.skipif(True, reason="the owners skip it")
def test_skipped_by_the_owners():
    assert False


def test_flaky_one():
    assert add(1, 1) == 2
"""

BROKEN = SOURCE.replace("return a + b", "return a + b + (1 if a == 2 and b == 2 else 0)")


def quarantine(*ids: str) -> str:
    return json.dumps(
        [{"test": i, "owner": "alice", "expires": "2026-10-05", "reason": "flaky"} for i in ids]
    )


# each rule is judged locally (--base/--head: the agent's commit on the branch it
# started from) and in CI (the agent's branch merged into --target main)
CONTEXT: Dict[Path, str] = {}


@pytest.fixture(params=["local", "ci"])
def repo(request, tmp_path) -> Path:
    repo = init_repo(tmp_path / "repo")
    CONTEXT[repo] = request.param
    commit(
        repo,
        {
            ".oracle-guard.yaml": CONTRACT % {"timeout": 120},
            "oracle/quarantine.json": quarantine(),
            "src/__init__.py": "",
            "src/calc.py": SOURCE,
            "tests/test_calc.py": TESTS,
        },
        "the target",
    )
    return repo


def score(capsys, repo: Path, *args: str):
    rc, out, err = run_guard(capsys, repo, "score", "--now", NOW, *args)
    return rc, out, err


def agent(repo: Path, files: Dict[str, Optional[str]], message: str = "agent") -> str:
    if CONTEXT.get(repo) == "ci" and git(repo, "branch", "--show-current").strip() == "main":
        git(repo, "checkout", "-q", "-b", "agent")
    deleted = [path for path, text in files.items() if text is None]
    if deleted:
        remove(repo, *deleted)
    return commit(repo, {p: t for p, t in files.items() if t is not None}, message)


def codes(out: str):
    return sorted(
        {
            line.split(": ")[1]
            for line in out.splitlines()
            if ": " in line and not line.startswith(("score:", "hint:"))
        }
    )


def judged(repo: Path):
    """The arguments that judge the agent's change in the repository's context."""
    if CONTEXT.get(repo) == "ci":
        return ["--target", "main", "--head", "agent"]
    return ["--base", "HEAD~1", "--head", "HEAD"]


def local(capsys, repo: Path, *args: str):
    return score(capsys, repo, *judged(repo), *args)


# -- the honest change passes, and is what every near miss below builds on -----------


def test_an_honest_change_scores_green(capsys, repo):
    agent(repo, {"src/calc.py": SOURCE + "\n\ndef sub(a, b):\n    return a - b\n"})
    rc, out, err = local(capsys, repo)
    assert rc == 0, out + err
    assert out.splitlines()[0].startswith(
        "score: seed 20260921 (from the contract); the tests of "
        + ("refs/heads/main (" if CONTEXT[repo] == "ci" else "HEAD~1 (")
    )
    assert out.splitlines()[-1] == "score: passed (4 passed, 1 skipped)"


# -- test-failed: the agent's edits to the tests do not move the score -------------------


@pytest.mark.parametrize(
    "patch",
    [
        pytest.param({"tests/test_calc.py": None}, id="the failing test deleted"),
        pytest.param(
            {"tests/test_calc.py": TESTS.replace("== 4", "== 5")}, id="an expected value edited"
        ),
        pytest.param(
            {
                "tests/test_calc.py": TESTS.replace(
                    "def test_add_small():\n", "def test_add_small():\n    return\n"
                )
            },
            id="an early return",
        ),
        pytest.param(
            {"tests/test_calc.py": TESTS.replace("assert add(2, 2) == 4", "assert True")},
            id="assert True",
        ),
        pytest.param(
            {
                "tests/conftest.py": "import json\nimport pytest\n\n\n@pytest.fixture(autouse=True)\ndef _(monkeypatch):\n    monkeypatch.setattr(json, 'loads', lambda *a, **k: {})\n"
            },
            id="a json.loads patch in a new conftest",
        ),
        pytest.param(
            {
                "tests/conftest.py": "def pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 0\n"
            },
            id="a conftest that sets the exit status",
        ),
        pytest.param(
            {
                "conftest.py": "def pytest_collection_modifyitems(items):\n    items[:] = [i for i in items if 'small' not in i.name]\n"
            },
            id="a root conftest that deselects",
        ),
        pytest.param(
            {
                "tests/test_calc.py": TESTS.replace(
                    "def test_add_small", "@pytest.mark.skip\ndef test_add_small"
                )
            },
            id="a skip added in place",
        ),
        pytest.param(
            {
                "tests/test_calc.py": TESTS.replace("def test_add_small", "def test_add_smol"),
                "pytest.ini": "[pytest]\naddopts = -k 'not small'\n",
            },
            id="a test renamed and a new pytest.ini",
        ),
    ],
)
def test_a_failing_test_stays_failed_whatever_the_patch_does_to_the_tests(capsys, repo, patch):
    agent(repo, {"src/calc.py": BROKEN, **patch})
    rc, out, _ = local(capsys, repo)
    assert rc == 1, out
    assert (
        "tests/test_calc.py: test-failed: tests/test_calc.py::test_add_small failed: assert 5 == 4"
        in out
    )
    if all(path.startswith(("src/", "tests/")) for path in patch):
        # inside the write set the agent was given, write-set lets it through; the
        # edits to the test itself pass every check (test-tamper judges the others)
        edits_the_test_only = list(patch) == ["tests/test_calc.py"] and "skip" not in str(patch)
        hooks = [] if edits_the_test_only else ["--only", "write-set"]
        rc, out, _ = run_guard(capsys, repo, "check", *judged(repo), "--now", NOW, *hooks)
        assert rc == 0, out


def test_a_renamed_test_is_reported_as_the_candidates_and_not_counted(capsys, repo):
    renamed = TESTS.replace("def test_add_small", "def test_add_smol")
    agent(repo, {"tests/test_calc.py": None, "tests/test_calc_renamed.py": renamed})
    rc, out, _ = local(capsys, repo, "--format", "json")
    assert rc == 0
    record = json.loads(out)
    assert "tests/test_calc.py::test_add_small" in record["scored"]
    assert {t["nodeid"] for t in record["candidate_tests"]} >= {
        "tests/test_calc_renamed.py::test_add_smol"
    }
    assert not [n for n in record["scored"] if "renamed" in n]


# -- run-incomplete ---------------------------------------------------------------------


def test_an_exit_at_import_under_src_is_run_incomplete(capsys, repo):
    agent(repo, {"src/calc.py": "import os\nos._exit(0)\n" + BROKEN})
    rc, out, _ = local(capsys, repo)
    assert rc == 1
    assert codes(out) == ["run-incomplete"]
    assert (
        "run-incomplete: pytest exited with status 0 after 0 of 0 tests, before its session ended"
        in out
    )


def test_the_near_miss_an_exit_in_a_function_never_called_passes(capsys, repo):
    agent(repo, {"src/calc.py": "import os\n\n\ndef bail():\n    os._exit(0)\n\n\n" + SOURCE})
    rc, out, _ = local(capsys, repo)
    assert rc == 0, out


# -- outcome-mismatch -------------------------------------------------------------------


def test_an_exit_status_rewritten_at_exit_is_an_outcome_mismatch(capsys, repo):
    agent(
        repo, {"src/calc.py": "import atexit, os\natexit.register(lambda: os._exit(0))\n" + BROKEN}
    )
    rc, out, _ = local(capsys, repo)
    assert rc == 1
    assert "outcome-mismatch" in codes(out) and "test-failed" in codes(out)
    assert (
        "outcome-mismatch: pytest exited with status 0, but what ran says 1 (1 failed of 5)" in out
    )


def test_the_near_miss_an_atexit_hook_that_leaves_the_status_passes(capsys, repo):
    agent(repo, {"src/calc.py": "import atexit\natexit.register(lambda: None)\n" + SOURCE})
    rc, out, _ = local(capsys, repo)
    assert rc == 0, out


# -- skip-at-run -------------------------------------------------------------------------


def test_a_skip_raised_from_the_candidates_code_is_skip_at_run(capsys, repo):
    agent(
        repo,
        {
            "src/calc.py": SOURCE.replace(
                "    return a + b", "    import pytest\n\n    pytest.skip('not ready')"
            )
        },
    )
    rc, out, _ = local(capsys, repo)
    assert rc == 1
    assert codes(out) == ["skip-at-run"]
    assert (
        "tests/test_calc.py::test_add_small was skipped at run time by src/calc.py:7, a file of the candidate's, not the target's test code (not ready)"
        in out
    )


def test_the_near_miss_the_owners_own_skip_mark_passes(capsys, repo):
    agent(repo, {"src/calc.py": SOURCE + "\n"})
    rc, out, _ = local(capsys, repo, "--format", "json")
    record = json.loads(out)
    assert rc == 0
    skipped = [t for t in record["tests"] if t["outcome"] == "skipped"]
    assert [t["nodeid"] for t in skipped] == ["tests/test_calc.py::test_skipped_by_the_owners"]


# -- test-vanished ----------------------------------------------------------------------


def test_a_parameter_the_code_no_longer_gives_is_a_vanished_test(capsys, repo):
    agent(repo, {"src/calc.py": SOURCE.replace(", (10, -4, 6)", "")})
    rc, out, _ = local(capsys, repo)
    assert rc == 1
    assert codes(out) == ["test-vanished"]
    assert (
        "tests/test_calc.py::test_add_cases[10--4-6] is collected from the target's own tree and not from the candidate's"
        in out
    )


def test_the_near_miss_a_parameter_added_passes(capsys, repo):
    agent(repo, {"src/calc.py": SOURCE.replace("(10, -4, 6)]", "(10, -4, 6), (0, 0, 0)]")})
    rc, out, _ = local(capsys, repo)
    assert rc == 0, out


# -- frozen tests ------------------------------------------------------------------------


def frozen_target(repo: Path) -> None:
    commit(
        repo, {"oracle/quarantine.json": quarantine("tests/test_calc.py::test_add_small")}, "freeze"
    )


def test_a_frozen_failing_test_is_deselected_at_collection(capsys, repo):
    frozen_target(repo)
    agent(repo, {"src/calc.py": BROKEN})
    rc, out, _ = local(capsys, repo, "--format", "json")
    record = json.loads(out)
    assert rc == 0, record["findings"]
    assert record["deselected"] == ["tests/test_calc.py::test_add_small"]
    assert "tests/test_calc.py::test_add_small" not in record["scored"]
    assert record["frozen"][0]["owner"] == "alice"


def test_an_expired_freeze_no_longer_excludes(capsys, repo):
    frozen_target(repo)
    agent(repo, {"src/calc.py": BROKEN})
    rc, out, _ = run_guard(capsys, repo, "score", "--now", "2026-10-06", *judged(repo))
    assert rc == 1
    assert "test-failed: tests/test_calc.py::test_add_small failed" in out


READD = """\
import gc

import pytest


class _Readd:
    def __init__(self):
        self.items = []

    def pytest_deselected(self, items):
        self.items.extend(items)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items):
        items.extend(self.items)


for _obj in gc.get_objects():
    if type(_obj).__name__ == "Config" and hasattr(_obj, "pluginmanager"):
        _obj.pluginmanager.register(_Readd())
        break
"""


def test_a_frozen_test_put_back_after_deselection_refuses_the_run(capsys, repo):
    commit(
        repo, {"oracle/quarantine.json": quarantine("tests/test_calc.py::test_add_cases")}, "freeze"
    )
    agent(repo, {"src/calc.py": READD + SOURCE})
    rc, out, _ = local(capsys, repo)
    assert rc == 1
    assert codes(out) == ["frozen-collected"]
    assert (
        "tests/test_calc.py::test_add_cases[2-3-5] is frozen at the target and still collected"
        in out
    )


def test_the_near_miss_code_that_registers_a_harmless_plugin_passes(capsys, repo):
    commit(
        repo, {"oracle/quarantine.json": quarantine("tests/test_calc.py::test_add_cases")}, "freeze"
    )
    agent(repo, {"src/calc.py": READD.replace("items.extend(self.items)", "pass") + SOURCE})
    rc, out, _ = local(capsys, repo)
    assert rc == 0, out


# -- score-timeout -----------------------------------------------------------------------


def sleeping(tmp_path: Path, limit: int, seconds: float, context: str) -> Path:
    """A target whose score.timeout is ``limit``, and an agent's code that sleeps ``seconds``."""
    repo = init_repo(tmp_path / "slow")
    CONTEXT[repo] = context
    files = {
        ".oracle-guard.yaml": CONTRACT % {"timeout": limit},
        "oracle/quarantine.json": "[]",
        "src/__init__.py": "",
        "src/calc.py": SOURCE,
        "tests/test_calc.py": TESTS,
    }
    commit(repo, files, "target")
    nap = f"    import time\n\n    time.sleep({seconds})\n    return a + b"
    agent(repo, {"src/calc.py": SOURCE.replace("    return a + b", nap)})
    return repo


@pytest.mark.parametrize("context", ["local", "ci"])
def test_a_session_past_its_limit_is_a_timeout(capsys, tmp_path, context):
    repo = sleeping(tmp_path, 3, 3600, context)
    rc, out, err = local(capsys, repo)
    assert rc == 1, err
    assert "score-timeout" in codes(out)
    assert "score-timeout: the oracle's session ran past its limit of 3 s and was stopped" in out


@pytest.mark.parametrize("context", ["local", "ci"])
def test_the_near_miss_a_short_sleep_within_the_limit_passes(capsys, tmp_path, context):
    repo = sleeping(tmp_path, 120, 0.01, context)
    rc, out, _ = local(capsys, repo)
    assert rc == 0, out


# -- CI: the merge into the target, judged by the target's tests --------------------------


def test_in_ci_the_merge_is_scored_with_the_targets_tests(capsys, repo):
    git(repo, "checkout", "-q", "-b", "agent")
    agent(repo, {"src/calc.py": BROKEN, "tests/test_calc.py": TESTS.replace("== 4", "== 5")})
    git(repo, "checkout", "-q", "main")
    # the target moves on: a new test the branch never saw
    commit(
        repo,
        {
            "tests/test_more.py": "from src.calc import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n"
        },
        "more tests",
    )
    rc, out, _ = score(capsys, repo, "--target", "main", "--head", "agent", "--format", "json")
    record = json.loads(out)
    assert rc == 1
    assert record["target"] == git(repo, "rev-parse", "main").strip()
    assert record["head"] == git(repo, "rev-parse", "agent").strip()
    assert record["candidate"] not in (record["target"], record["head"])  # the merge
    assert "tests/test_more.py::test_zero" in record["scored"]
    assert [f["code"] for f in record["findings"]] == ["test-failed"]


def test_in_ci_the_platforms_target_is_read_as_check_reads_it(capsys, repo):
    git(repo, "update-ref", "refs/remotes/origin/main", "main")
    git(repo, "checkout", "-q", "-b", "agent")
    agent(repo, {"src/calc.py": SOURCE + "\n"})
    rc, out, err = run_guard(
        capsys, repo, "score", "--now", NOW, env={"CI": "true", "GITHUB_BASE_REF": "main"}
    )
    assert rc == 0, err
    assert "the tests of refs/remotes/origin/main (" in out.splitlines()[0]


# -- the record ---------------------------------------------------------------------------


def test_the_record_validates_against_its_schema(capsys, repo, tmp_path):
    agent(repo, {"src/calc.py": BROKEN})
    rc, _, _ = local(capsys, repo, "--record", str(tmp_path / "record.json"))
    assert rc == 1
    record = json.loads((tmp_path / "record.json").read_text())
    schema = json.loads((ROOT / "schemas" / "score-record.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(record)
    assert record["replayable"] is True and record["verdict"] == "failed"
    assert record["seed"] == 20260921
    assert len(record["oracle_digest"]) == 64


def test_the_same_revisions_and_clock_give_the_same_record_but_for_durations(capsys, repo):
    agent(repo, {"src/calc.py": BROKEN})
    records = []
    for _ in range(2):
        rc, out, _ = local(capsys, repo, "--format", "json")
        record = json.loads(out)
        for test in record["tests"]:
            test.pop("duration")
        record.pop("seconds")
        record.pop("output")
        records.append(record)
    assert records[0] == records[1]


# -- bad input ----------------------------------------------------------------------------


def test_a_contract_without_a_score_section_is_one_line_and_exit_2(capsys, tmp_path):
    repo = init_repo(tmp_path / "r")
    commit(
        repo, {".oracle-guard.yaml": "version: 1\n", "tests/test_a.py": "def test_a():\n    pass\n"}
    )
    commit(repo, {"src/a.py": ""})
    rc, out, err = local(capsys, repo)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1
    assert "has no score section" in err


def test_a_score_section_with_a_typo_is_a_contract_error(capsys, tmp_path):
    repo = init_repo(tmp_path / "r")
    commit(repo, {".oracle-guard.yaml": "version: 1\nscore:\n  tests: ['tests/**']\n  timout: 5\n"})
    commit(repo, {"src/a.py": ""})
    rc, _, err = local(capsys, repo)
    assert rc == 2
    assert "did you mean 'timeout'?" in err


def test_tests_that_match_nothing_at_the_target_is_exit_2(capsys, tmp_path):
    repo = init_repo(tmp_path / "r")
    commit(
        repo, {".oracle-guard.yaml": "version: 1\nscore:\n  tests: ['tests/**']\n", "src/a.py": ""}
    )
    commit(repo, {"src/a.py": "x = 1\n"})
    rc, _, err = local(capsys, repo)
    assert rc == 2 and "matches no file" in err


def test_a_pin_file_the_target_lacks_is_exit_2(capsys, tmp_path):
    repo = init_repo(tmp_path / "r")
    commit(
        repo,
        {
            ".oracle-guard.yaml": "version: 1\nscore:\n  tests: ['tests/**']\n  pin: {file: oracle/seeds.toml}\n",
            "tests/test_a.py": "def test_a():\n    pass\n",
        },
    )
    commit(repo, {"src/a.py": ""})
    rc, _, err = local(capsys, repo)
    assert rc == 2 and "score.pin.file 'oracle/seeds.toml' is not in" in err


def test_a_python_that_cannot_run_pytest_fails_closed(capsys, repo, tmp_path):
    agent(repo, {"src/calc.py": SOURCE + "\n"})
    rc, out, err = local(capsys, repo, "--python", "/bin/false")
    assert rc == 2 and out == ""
    assert (
        err.count("\n") == 1
        and "collecting the target's own tests with /bin/false did not finish" in err
    )


# -- the four example layouts, with real pytest ---------------------------------------------

LAYOUTS = {
    "harness": '  tests: ["tests/**"]\n',
    "oracle-dir": '  tests: ["tests/**"]\n  pin: {file: oracle/seeds.toml}\n',
    "merge-contract": '  tests: ["tests/**"]\n  pin: {randomly_seed: 1}\n',
    "replay-queue": '  tests: ["tests/**"]\n',
}


@pytest.fixture(params=sorted(LAYOUTS))
def layout(request, tmp_path) -> Path:
    repo = tmp_path / request.param
    shutil.copytree(ROOT / "examples" / request.param, repo)
    contract = repo / ".oracle-guard.yaml"
    contract.write_text(contract.read_text() + "score:\n" + LAYOUTS[request.param])
    init_repo(repo)
    commit(repo, message="the target")
    return repo


def source_of(repo: Path) -> str:
    return next(p.relative_to(repo).as_posix() for p in sorted((repo / "src").glob("*.py")))


def test_each_layout_scores_an_honest_change_green(capsys, layout):
    path = source_of(layout)
    agent(layout, {path: (layout / path).read_text() + "\n# a comment\n"})
    rc, out, err = local(capsys, layout)
    assert rc == 0, out + err
    assert out.splitlines()[-1].startswith("score: passed (")


def test_each_layout_scores_broken_code_red_though_every_test_is_deleted(capsys, layout):
    path = source_of(layout)
    tests = [p.relative_to(layout).as_posix() for p in (layout / "tests").rglob("*.py")]
    agent(layout, {path: "raise ImportError('broken')\n", **{t: None for t in tests}})
    rc, out, _ = local(capsys, layout)
    assert rc == 1, out
    assert "test-failed: collecting tests/" in out and "ImportError: broken" in out


def test_the_oracle_layouts_seeds_file_pins_the_seed(capsys, tmp_path):
    repo = tmp_path / "oracle-dir"
    shutil.copytree(ROOT / "examples" / "oracle-dir", repo)
    contract = repo / ".oracle-guard.yaml"
    contract.write_text(contract.read_text() + "score:\n" + LAYOUTS["oracle-dir"])
    init_repo(repo)
    commit(repo, message="the target")
    commit(repo, {"src/invoice.py": (repo / "src/invoice.py").read_text() + "\n"})
    rc, out, _ = local(capsys, repo)
    assert rc == 0, out
    assert out.startswith("score: seed 20260921 (from oracle/seeds.toml); ")


# -- the reports the platforms read ------------------------------------------------------------


@pytest.mark.needs("conformance")
def test_the_scores_reports_validate_as_the_platforms_read_them(capsys, repo, tmp_path):
    from testing import conformance

    agent(repo, {"src/calc.py": BROKEN})
    junit, gitlab = tmp_path / "score.xml", tmp_path / "score.json"
    rc, out, _ = local(
        capsys,
        repo,
        "--format",
        "sarif",
        "--output",
        f"junit={junit}",
        "--output",
        f"gitlab={gitlab}",
    )
    assert rc == 1
    sarif = json.loads(out)
    schema = conformance.json_document(conformance.SARIF_SCHEMA)
    jsonschema.validators.validator_for(schema)(schema).validate(sarif)
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["test-failed"]
    conformance.junit_schema().validate(junit.read_text())
    issues = json.loads(gitlab.read_text())
    jsonschema.Draft7Validator(conformance.json_document(conformance.CODE_QUALITY_SCHEMA)).validate(
        issues
    )
    assert [i["check_name"] for i in issues] == ["test-failed"]
    # github annotations name the test's file
    rc, out, _ = local(capsys, repo, "--format", "github")
    assert out.startswith("::error file=tests/test_calc.py,title=oracle-guard test-failed::")


# -- the run we control: the environment and the seeds ----------------------------------------

PINNED = """\
import os
import sys

from hypothesis import settings


def test_the_seeds_are_pinned():
    assert os.environ["PYTHONHASHSEED"] == "20260921"
    current = settings()
    assert current.derandomize is True and current.database is None
    assert current.deadline is None


def test_nothing_of_the_callers_environment_arrives():
    assert "PYTEST_ADDOPTS" not in os.environ and "PYTHONSTARTUP" not in os.environ
    assert "ORACLE_GUARD_SCORE" not in os.environ  # the plugin took its settings
    assert not any(p.endswith("from-the-caller") for p in sys.path)
"""


def test_the_session_runs_pinned_in_an_environment_of_its_own(capsys, repo, monkeypatch):
    commit(repo, {"tests/test_pinned.py": PINNED}, "the owners pin it")
    agent(repo, {"src/calc.py": SOURCE + "\n"})
    monkeypatch.setenv("PYTEST_ADDOPTS", "-k nothing_at_all")
    monkeypatch.setenv("PYTHONPATH", "/from-the-caller")
    monkeypatch.setenv("PYTHONSTARTUP", "/from-the-caller/startup.py")
    rc, out, _ = local(capsys, repo, "--format", "json")
    record = json.loads(out)
    assert rc == 0, record["findings"]
    outcomes = {t["nodeid"]: t["outcome"] for t in record["tests"]}
    assert outcomes["tests/test_pinned.py::test_the_seeds_are_pinned"] == "passed"
    assert (
        outcomes["tests/test_pinned.py::test_nothing_of_the_callers_environment_arrives"]
        == "passed"
    )


def test_the_near_miss_another_seed_is_what_the_session_gets(capsys, tmp_path):
    repo = init_repo(tmp_path / "r")
    commit(
        repo,
        {
            ".oracle-guard.yaml": "version: 1\nscore:\n  tests: ['tests/**']\n  pin: {randomly_seed: 5}\n",
            "tests/test_pinned.py": PINNED,
        },
    )
    commit(repo, {"src/a.py": ""})
    rc, out, _ = score(capsys, repo, "--base", "HEAD~1", "--head", "HEAD")
    assert rc == 1
    assert "test_the_seeds_are_pinned failed: KeyError" in out or "assert '5' == '20260921'" in out


def test_explain_knows_every_score_code(capsys):
    from oracle_guard.checks.codes import SCORE_CODES
    from oracle_guard.cli import main

    for code in SCORE_CODES:
        capsys.readouterr()
        assert main(["explain", code], env={}) == 0
        assert code in capsys.readouterr().out


def test_a_target_whose_configuration_asks_for_xdist_is_scored_in_one_process(capsys, tmp_path):
    repo = init_repo(tmp_path / "r")
    commit(
        repo,
        {
            ".oracle-guard.yaml": "version: 1\nscore:\n  tests: ['tests/**']\n",
            "pytest.ini": "[pytest]\naddopts = -n 2 --dist loadgroup\n",
            "src/__init__.py": "",
            "src/calc.py": SOURCE,
            "tests/test_calc.py": TESTS,
        },
    )
    commit(repo, {"src/calc.py": BROKEN})
    rc, out, _ = score(capsys, repo, "--base", "HEAD~1", "--head", "HEAD", "--format", "json")
    record = json.loads(out)
    assert record["config"] == "pytest.ini"
    assert [f["code"] for f in record["findings"]] == ["test-failed"]
    assert len(record["tests"]) == 5 and len(set(record["scored"])) == len(record["scored"])


def test_with_tests_anywhere_no_conftest_of_the_candidates_is_loaded(capsys, tmp_path):
    """score.tests without a folder: pytest walks the whole tree, so every conftest
    in it is the target's, and a test file only the candidate has runs apart."""
    repo = init_repo(tmp_path / "r")
    commit(
        repo,
        {
            ".oracle-guard.yaml": "version: 1\nscore:\n  tests: ['**/test_*.py']\n",
            "src/__init__.py": "",
            "src/calc.py": SOURCE,
            "tests/test_calc.py": TESTS,
        },
    )
    deselect = "def pytest_collection_modifyitems(items):\n    items.clear()\n"
    commit(
        repo,
        {
            "src/calc.py": BROKEN,
            "src/conftest.py": deselect,
            "src/sub/conftest.py": deselect,
            "src/test_mine.py": "def test_mine():\n    pass\n",
        },
    )
    rc, out, _ = score(capsys, repo, "--base", "HEAD~1", "--head", "HEAD", "--format", "json")
    record = json.loads(out)
    assert rc == 1
    assert record["arguments"] == ["."]
    assert [f["code"] for f in record["findings"]] == ["test-failed"]
    assert "src/test_mine.py::test_mine" not in record["scored"]
    assert record["candidate_tests"] == [
        {"nodeid": "src/test_mine.py::test_mine", "outcome": "passed"}
    ]


def test_in_ci_without_a_target_the_score_refuses_in_one_line(capsys, tmp_path):
    repo = init_repo(tmp_path / "r")
    commit(
        repo,
        {
            ".oracle-guard.yaml": CONTRACT % {"timeout": 60},
            "oracle/quarantine.json": "[]",
            "src/__init__.py": "",
            "src/calc.py": SOURCE,
            "tests/test_calc.py": TESTS,
        },
    )
    commit(repo, {"src/calc.py": BROKEN, "tests/test_calc.py": TESTS.replace("== 4", "== 5")})
    rc, out, err = run_guard(capsys, repo, "score", "--now", NOW, env={"CI": "true"})
    assert (rc, out) == (2, "")
    assert err.count("\n") == 1 and "CI is set but no target is named" in err
    # the near miss: locally, a head alone is scored with its parent's tests
    rc, out, _ = run_guard(capsys, repo, "score", "--now", NOW)
    assert rc == 1 and "test-failed: tests/test_calc.py::test_add_small" in out


def test_an_interpreter_that_is_not_there_is_one_line_and_exit_2(capsys, tmp_path):
    repo = init_repo(tmp_path / "r")
    commit(
        repo,
        {
            ".oracle-guard.yaml": CONTRACT % {"timeout": 60},
            "oracle/quarantine.json": "[]",
            "tests/test_a.py": "def test_a():\n    pass\n",
        },
    )
    commit(repo, {"src/a.py": ""})
    rc, out, err = score(
        capsys, repo, "--base", "HEAD~1", "--head", "HEAD", "--python", str(tmp_path / "nope")
    )
    assert (rc, out) == (2, "")
    assert (
        err
        == f"oracle-guard: error: --python {str(tmp_path / 'nope')!r} is not an interpreter this machine can run\n"
    )


def test_code_that_does_not_import_is_one_test_failed_per_module(capsys, repo):
    agent(repo, {"src/calc.py": "def add(a, b)\n    return a + b\n"})
    rc, out, _ = local(capsys, repo, "--format", "json")
    record = json.loads(out)
    assert rc == 1
    assert [(f["code"], f["path"]) for f in record["findings"]] == [
        ("test-failed", "tests/test_calc.py")
    ]
    assert "SyntaxError" in record["findings"][0]["message"]
