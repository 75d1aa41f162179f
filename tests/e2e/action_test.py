"""action.yml, run as the Actions runner runs a composite action (testing/actions.py):
a workflow whose only step is the action gates a pull request that rewrites a
fixture and passes an honest one, under pull_request_target and pull_request."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from testing.actions import HarnessError, Runner, Scope, condition, evaluate, offline_pip_env
from testing.checkout import snapshot_checkout
from testing.git import commit, git, init_repo
from testing.oracle import NOW

ROOT = Path(__file__).resolve().parents[2]
CI = ROOT / "examples" / "ci"
ACTION = "your-org/oracle-guard@0123456789abcdef0123456789abcdef01234567"
LOCAL = "./"
BASE_REPO = {"id": 1, "full_name": "org/app"}
FORK = {"id": 2, "full_name": "contributor/app"}


@pytest.fixture(scope="module")
def action_path(tmp_path_factory):
    """This checkout as the runner downloads the action: a snapshot at the pinned ref."""
    path, _ = snapshot_checkout(tmp_path_factory.mktemp("action") / "oracle-guard")
    return path


@pytest.fixture(scope="module")
def origin(tmp_path_factory):
    """A bare 'origin' as GitHub keeps it: main holds the harness example under its
    contract; each pull request's head is refs/pull/N/head only (a fork's branch)."""
    top = tmp_path_factory.mktemp("origin")
    work = init_repo(top / "work")
    shutil.copytree(ROOT / "examples" / "harness", work, dirs_exist_ok=True)
    base = commit(work, {}, "guard the oracle")
    heads = {}
    for number, (name, files) in enumerate(
        [
            ("honest", {"src/harness.py": "def parse_header(raw):\n    return raw\n"}),
            ("rewrites-fixture", {"fixtures/exchange_example.json": '{"rewritten": true}\n'}),
        ],
        start=1,
    ):
        git(work, "checkout", "-q", "-b", name, base)
        heads[name] = (number, commit(work, files, name))
    git(work, "checkout", "-q", "main")
    bare = top / "origin.git"
    git(top, "clone", "-q", "--bare", "--no-local", str(work), str(bare))
    for name, (number, sha) in heads.items():
        git(bare, "update-ref", f"refs/pull/{number}/head", sha)
        git(bare, "branch", "-D", name)  # the fork's branch is not in the base repository
    git(bare, "config", "uploadpack.allowReachableSHA1InWant", "true")  # as GitHub serves it
    return bare, base, heads


def event(origin, head: str) -> dict:
    """The pull request part of a real pull_request(_target) event payload."""
    _, base, heads = origin
    number, sha = heads[head]
    return {
        "action": "synchronize",
        "number": number,
        "pull_request": {
            "number": number,
            "head": {"ref": head, "sha": sha, "repo": FORK},
            "base": {"ref": "main", "sha": base, "repo": BASE_REPO},
            "merge_commit_sha": None,
        },
        "repository": BASE_REPO,
    }


def runner(tmp_path, origin, action_path, head, event_name="pull_request_target", **env):
    _, base, _ = origin
    return Runner(
        root=tmp_path / "runner",
        origin=origin[0],
        event_name=event_name,
        event=event(origin, head),
        actions={ACTION: action_path, LOCAL: action_path},
        env={
            "GITHUB_SHA": base,
            "ORACLE_GUARD_NOW": NOW,
            **offline_pip_env(tmp_path / "pip"),
            **env,
        },
    )


def workflow(tmp_path, with_=None, before=()) -> Path:
    step = {"uses": LOCAL}
    if with_:
        step["with"] = with_
    doc = {
        "on": "pull_request_target",
        "jobs": {"gate": {"runs-on": "ubuntu-latest", "steps": [*before, step]}},
    }
    path = tmp_path / "workflow.yml"
    path.write_text(yaml.safe_dump(doc))
    return path


RECIPES = [
    ("github-action-gate.yml", "pull_request_target"),
    ("github-action-required.yml", "pull_request"),
]


@pytest.mark.parametrize("recipe,event_name", RECIPES)
def test_the_action_alone_fails_a_pull_request_that_rewrites_a_fixture(
    tmp_path, origin, action_path, recipe, event_name
):
    job = runner(tmp_path, origin, action_path, "rewrites-fixture", event_name)
    assert job.run_workflow(CI / recipe) == 1, job.log
    log = "".join(job.log)
    assert "::error file=fixtures/exchange_example.json" in log, log
    assert git(job.workspace, "rev-parse", "HEAD").strip() == origin[2]["rewrites-fixture"][1]
    # the job summary: a markdown table of the findings by check
    assert "**Verdict: failed** (exit 1)" in job.summary, job.summary
    rows = [line for line in job.summary.splitlines() if line.startswith("| fixture-lock |")]
    assert any("fixtures/exchange_example.json" in row for row in rows), job.summary
    # installed from the action's checkout, not from the workspace
    (installed,) = (job.temp / "oracle-guard-venv").glob("lib/python*/site-packages/oracle_guard")
    assert (installed / "cli.py").is_file()


@pytest.mark.parametrize("recipe,event_name", RECIPES)
def test_the_action_alone_passes_an_honest_pull_request(
    tmp_path, origin, action_path, recipe, event_name
):
    job = runner(tmp_path, origin, action_path, "honest", event_name)
    assert job.run_workflow(CI / recipe) == 0, job.log
    assert "::error" not in "".join(job.log)
    assert "**Verdict: passed** (exit 0)" in job.summary, job.summary
    assert "### Findings\n\nNone." in job.summary, job.summary


def test_the_action_writes_sarif_when_asked(tmp_path, origin, action_path):
    job = runner(tmp_path, origin, action_path, "rewrites-fixture")
    path = workflow(tmp_path, {"sarif-file": "${{ runner.temp }}/oracle-guard.sarif"})
    assert job.run_workflow(path) == 1, job.log
    sarif = json.loads((job.temp / "oracle-guard.sarif").read_text())
    assert sarif["version"] == "2.1.0"
    (run,) = sarif["runs"]
    located = {
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for result in run["results"]
        for loc in result["locations"]
    }
    assert "fixtures/exchange_example.json" in located
    assert "::error file=fixtures/exchange_example.json" in "".join(job.log)  # annotations too


def test_a_named_target_judges_the_merge_into_it(tmp_path, origin, action_path):
    job = runner(tmp_path, origin, action_path, "rewrites-fixture", GITHUB_BASE_REF="")
    assert job.run_workflow(workflow(tmp_path, {"target": "main"})) == 1, job.log
    assert "::error file=fixtures/exchange_example.json" in "".join(job.log)


def test_the_action_reports_its_exit_code_as_an_output(tmp_path, origin, action_path):
    job = runner(tmp_path, origin, action_path, "honest", GITHUB_BASE_REF="")
    path = workflow(tmp_path, {"target": "main"})
    doc = yaml.safe_load(path.read_text())
    steps = doc["jobs"]["gate"]["steps"]
    steps[0]["id"] = "guard"
    steps.append({"run": 'test "${{ steps.guard.outputs.exit-code }}" = 0 && echo "said 0"'})
    path.write_text(yaml.safe_dump(doc))
    assert job.run_workflow(path) == 0, job.log
    assert job.log[-1] == "said 0\n"


def test_a_target_that_does_not_exist_exits_2_with_one_line(tmp_path, origin, action_path):
    job = runner(tmp_path, origin, action_path, "honest")
    assert job.run_workflow(workflow(tmp_path, {"target": "no-such-branch"})) == 2, job.log
    # one line, on stderr and as its annotation
    error = "'refs/remotes/origin/no-such-branch' does not name a commit in this repository"
    assert sorted(job.log[-1].splitlines()) == [
        f"::error title=oracle-guard::--target/ORACLE_GUARD_TARGET {error}",
        f"oracle-guard: error: --target/ORACLE_GUARD_TARGET {error}",
    ], job.log[-1]
    assert "(exit 2)" in job.summary  # the summary says the run could not judge


def test_install_from_the_workspace_is_refused(tmp_path, origin, action_path):
    """The workspace holds the pull request's files: installing from it would run them."""
    job = runner(tmp_path, origin, action_path, "honest")
    path = workflow(tmp_path, {"install-from": "${{ env.GITHUB_WORKSPACE }}/src"})
    assert job.run_workflow(path) == 2, job.log
    lines = job.log[-1].splitlines()
    assert len(lines) == 1 and "is in the workspace" in lines[0], job.log[-1]
    assert not (job.temp / "oracle-guard-venv").exists()


def test_install_from_a_folder_outside_the_workspace(tmp_path, origin, action_path):
    job = runner(tmp_path, origin, action_path, "rewrites-fixture")
    assert job.run_workflow(workflow(tmp_path, {"install-from": str(action_path)})) == 1, job.log


def test_checkout_false_judges_the_clone_the_workflow_made(tmp_path, origin, action_path):
    _, _, heads = origin
    checkout = {
        "uses": "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1",
        "with": {
            "ref": "${{ github.event.pull_request.head.sha }}",
            "fetch-depth": 0,
            "persist-credentials": False,
        },
    }
    job = runner(tmp_path, origin, action_path, "rewrites-fixture")
    path = workflow(tmp_path, {"checkout": "false", "extra-args": "--only write-set"}, [checkout])
    assert job.run_workflow(path) == 1, job.log
    assert sum(line.startswith("[checkout]") for line in job.log) == 1  # the action's skipped
    log = "".join(job.log)
    assert "write-denied" in log and "fixture-mismatch" not in log  # --only reached the CLI


def test_a_checkout_input_other_than_true_or_false_exits_2(tmp_path, origin, action_path):
    job = runner(tmp_path, origin, action_path, "honest")
    assert job.run_workflow(workflow(tmp_path, {"checkout": "yes"})) == 2, job.log
    assert job.log == ["::error title=oracle-guard::the input checkout must be true or false\n"]


def test_checkout_false_without_a_clone_fails(tmp_path, origin, action_path):
    job = runner(tmp_path, origin, action_path, "honest")
    assert job.run_workflow(workflow(tmp_path, {"checkout": "false"})) != 0, job.log


# -- the harness refuses what it does not emulate ----------------------------------
def test_the_harness_refuses_unknown_expressions_and_conditions():
    scope = Scope({"A": "1"}, inputs={"x": "y"})
    assert evaluate("${{ inputs.x }}-${{ env.A }}", scope) == "y-1"
    assert condition("inputs.x == 'y'", scope) and not condition("${{ inputs.x != 'y' }}", scope)
    for text in ("${{ github.token }}", "${{ secrets.X }}", "${{ inputs.nope }}"):
        with pytest.raises(HarnessError):
            evaluate(text, scope)
    with pytest.raises(HarnessError):
        condition("always()", scope)


def test_the_harness_refuses_an_unpinned_checkout(tmp_path, origin, action_path):
    job = runner(tmp_path, origin, action_path, "honest")
    unpinned = {"uses": "actions/checkout@v7", "with": {"fetch-depth": 0}}
    with pytest.raises(HarnessError, match="not pinned"):
        job.run_workflow(workflow(tmp_path, {"checkout": "false"}, [unpinned]))


# -- score: the target's tests against the merge's code, after the gate ---------------
SCORE_SECTION = 'score:\n  tests: ["tests/**"]\n  timeout: 300\n'
BROKEN_HEADER = (
    "def parse_header(raw):\n    name, _, value = raw.partition(':')\n    return name, value\n"
)


@pytest.fixture(scope="module")
def score_origin(tmp_path_factory):
    """As ``origin``, with a score section in main's contract; pull request 1 keeps
    the tests passing, pull request 2 breaks the code they test (which every check
    lets through: src/** is the agent's to edit)."""
    top = tmp_path_factory.mktemp("score-origin")
    work = init_repo(top / "work")
    shutil.copytree(ROOT / "examples" / "harness", work, dirs_exist_ok=True)
    contract = (work / ".oracle-guard.yaml").read_text() + SCORE_SECTION
    base = commit(work, {".oracle-guard.yaml": contract}, "guard and score the oracle")
    heads = {}
    for number, (name, files) in enumerate(
        [
            ("honest", {"src/later.py": "X = 1\n"}),
            ("breaks-the-code", {"src/harness.py": BROKEN_HEADER}),
        ],
        start=1,
    ):
        git(work, "checkout", "-q", "-b", name, base)
        heads[name] = (number, commit(work, files, name))
    git(work, "checkout", "-q", "main")
    bare = top / "origin.git"
    git(top, "clone", "-q", "--bare", "--no-local", str(work), str(bare))
    for name, (number, sha) in heads.items():
        git(bare, "update-ref", f"refs/pull/{number}/head", sha)
        git(bare, "branch", "-D", name)
    git(bare, "config", "uploadpack.allowReachableSHA1InWant", "true")
    return bare, base, heads


def score_workflow(tmp_path, with_=None) -> Path:
    """A pull_request workflow of the action, then a step that prints its score output.
    The tests run on this interpreter, as a job's own with the test dependencies (the
    harness's offline pip leaves pytest out of the action's venv)."""
    if with_ and with_.get("score") == "true":
        with_ = {"score-python": sys.executable, **with_}
    path = workflow(tmp_path, with_)
    doc = yaml.safe_load(path.read_text())
    doc["on"] = "pull_request"
    doc["jobs"]["gate"]["steps"][0]["id"] = "guard"
    doc["jobs"]["gate"]["steps"].append(
        {"run": 'echo "score said [${{ steps.guard.outputs.score-exit-code }}]"'}
    )
    path.write_text(yaml.safe_dump(doc))
    return path


def test_the_score_input_scores_the_merge_after_the_gate(tmp_path, score_origin, action_path):
    job = runner(tmp_path, score_origin, action_path, "breaks-the-code", "pull_request")
    assert job.run_workflow(score_workflow(tmp_path, {"score": "true"})) == 1, job.log
    errors = [line for line in "".join(job.log).splitlines() if line.startswith("::error")]
    # the gate passed; the score failed the job, on the target's tests and its corpus line
    failed = [e for e in errors if "test-failed" in e]
    assert failed and all(e.startswith("::error file=tests/test_harness.py") for e in failed)
    regressed = [e for e in errors if e not in failed]
    assert all(
        e.startswith("::error file=seeds/corpus.jsonl,line=1,title=oracle-guard example-regressed")
        for e in regressed
    ), errors
    record = json.loads((job.temp / "oracle-guard-score.json").read_text())
    assert record["verdict"] == "failed"
    assert record["target"] == score_origin[1]  # main's tip: its tests, its rules
    assert record["head"] == score_origin[2]["breaks-the-code"][1]
    # the gate's summary, then the score's
    passed, failed = "**Verdict: passed** (exit 0)", "**Verdict: failed** (exit 1)"
    assert passed in job.summary and failed in job.summary, job.summary
    assert job.summary.index(passed) < job.summary.index(failed)


def test_the_score_input_passes_an_honest_pull_request(tmp_path, score_origin, action_path):
    job = runner(tmp_path, score_origin, action_path, "honest", "pull_request")
    record = tmp_path / "score.json"
    path = score_workflow(tmp_path, {"score": "true", "score-record": str(record)})
    assert job.run_workflow(path) == 0, job.log
    assert job.log[-1] == "score said [0]\n"
    assert json.loads(record.read_text())["verdict"] == "passed"


def test_without_the_score_input_no_score_runs(tmp_path, score_origin, action_path):
    """The near miss: the same pull request, the gate alone, which passes it."""
    job = runner(tmp_path, score_origin, action_path, "breaks-the-code", "pull_request")
    assert job.run_workflow(score_workflow(tmp_path)) == 0, job.log
    assert job.log[-1] == "score said []\n"  # the score step was skipped
    assert not (job.temp / "oracle-guard-score.json").exists()
    assert "test-failed" not in "".join(job.log)


def test_the_score_is_refused_under_pull_request_target(tmp_path, score_origin, action_path):
    """It runs the pull request's code: not with the base repository's token in reach."""
    job = runner(tmp_path, score_origin, action_path, "honest")
    assert job.run_workflow(workflow(tmp_path, {"score": "true"})) == 2, job.log
    (line,) = job.log
    assert line.startswith("::error title=oracle-guard::score runs the pull request's code")
    assert not (job.temp / "oracle-guard-venv").exists()  # refused before anything ran


def test_a_score_input_other_than_true_or_false_exits_2(tmp_path, score_origin, action_path):
    job = runner(tmp_path, score_origin, action_path, "honest", "pull_request")
    assert job.run_workflow(workflow(tmp_path, {"score": "yes"})) == 2, job.log
    assert job.log == ["::error title=oracle-guard::the input score must be true or false\n"]
