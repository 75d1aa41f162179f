"""The GitLab CI/CD component (templates/oracle-guard.yml) and the recipe it keeps in
step with (examples/ci/gitlab-ci.yml): valid for GitLab as published in
check-jsonschema, and a job that gates a merge request when its script runs in a
clone laid out as GitLab's runner lays it.

The job installs oracle-guard as it would in CI: pip, in a fresh venv standing for
the python image, from ``$CI_SERVER_URL/<project>.git`` at ``component.sha``. The
"server" is a folder holding a snapshot of this checkout (so uncommitted changes
are what is tested), the sha that snapshot's commit. pip reaches the index this
machine is configured with for the dependencies, as pre-commit's tests do."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
import yaml

from testing import conformance
from testing.checkout import snapshot_checkout
from testing.git import commit, git, init_repo
from testing.gitlab import (
    InterpolationError,
    documents,
    interpolate,
    job_environment,
    merge_request_clone,
    predefined,
    run_script,
)
from testing.oracle import NOW

ROOT = Path(__file__).resolve().parents[2]
COMPONENT = ROOT / "templates" / "oracle-guard.yml"
RECIPE = ROOT / "examples" / "ci" / "gitlab-ci.yml"
# the jobs' reports are validated against the platform schemas, from the public
# suites' data (testing/conformance.py)
needs_report_schemas = pytest.mark.needs("conformance")
FIXTURE = "fixtures/exchange_example.json"
SHA = "0123456789abcdef0123456789abcdef01234567"  # component.sha where no job runs


def check_jsonschema(doc, tmp_path: Path, name: str) -> subprocess.CompletedProcess:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.gitlab-ci",
            str(path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def component_jobs(**given):
    return interpolate(COMPONENT.read_text(), given, {"sha": SHA})


# -- the component and the recipe, as GitLab reads them ---------------------------
def test_the_header_is_the_spec_gitlab_documents_and_validates(tmp_path):
    header, _ = documents(COMPONENT.read_text())
    spec = header["spec"]
    assert spec["component"] == ["sha"]
    assert set(spec["inputs"]) == {
        "job-name",
        "stage",
        "target",
        "image",
        "project",
        "install-from",
        "extra-args",
        "timeout",
        "score",
        "score-python",
    }
    assert spec["inputs"]["score"] == {
        "default": "false",
        "options": ["true", "false"],
        "description": spec["inputs"]["score"]["description"],
    }
    assert all(rule.get("description") for rule in spec["inputs"].values())
    checked = check_jsonschema(header, tmp_path, "header.json")
    assert checked.returncode == 0, checked.stdout


def readme_inputs(text: str) -> dict:
    """The inputs table of templates/README.md (docs/how-to/ci-gitlab.md includes it):
    each input's name and default, `empty` for an empty one."""
    table = text.split("--8<-- [start:inputs]", 1)[1].split("--8<-- [end:inputs]", 1)[0]
    rows = [line.split("|")[1:3] for line in table.splitlines() if line.startswith("| `")]
    return {
        name.strip().strip("`"): "" if default.strip() == "empty" else default.strip().strip("`")
        for name, default in rows
    }


def test_the_readme_lists_every_input_with_its_default():
    header, _ = documents(COMPONENT.read_text())
    spec = {name: str(rule["default"]) for name, rule in header["spec"]["inputs"].items()}
    readme = (ROOT / "templates" / "README.md").read_text()
    assert readme_inputs(readme) == spec
    # near miss: a default the README gets wrong is caught
    wrong = readme.replace("| `stage` | `.pre` |", "| `stage` | `test` |")
    assert readme_inputs(wrong) != spec


def test_the_schema_refuses_a_header_gitlab_would_refuse(tmp_path):
    header, _ = documents(COMPONENT.read_text())
    header["spec"]["component"] = ["sha", "path"]  # no such component field
    assert check_jsonschema(header, tmp_path, "header.json").returncode == 1


@pytest.mark.parametrize(
    "given",
    [
        {},
        {
            "job-name": "gate",
            "stage": "test",
            "target": "release",
            "extra-args": "--only write-set",
        },
    ],
)
def test_the_jobs_validate_after_interpolation(tmp_path, given):
    jobs = component_jobs(**given)
    assert list(jobs) == [given.get("job-name", "oracle-guard")]
    checked = check_jsonschema(jobs, tmp_path, "jobs.json")
    assert checked.returncode == 0, checked.stdout


def test_the_schema_refuses_jobs_gitlab_would_refuse(tmp_path):
    jobs = component_jobs()
    jobs["oracle-guard"]["artifacts"]["when"] = "sometimes"
    assert check_jsonschema(jobs, tmp_path, "jobs.json").returncode == 1


def test_the_job_gates_merge_requests_and_uploads_its_reports_always():
    job = component_jobs()["oracle-guard"]
    assert job["stage"] == ".pre" and job["needs"] == []
    assert job["rules"] == [{"if": '$CI_PIPELINE_SOURCE == "merge_request_event"'}]
    assert job["interruptible"] is True and job["timeout"] == "10 minutes"
    assert job["variables"]["GIT_DEPTH"] == "0" and job["variables"]["GIT_STRATEGY"] == "clone"
    assert job["variables"]["ORACLE_GUARD_COMMIT"] == SHA
    assert "cache" not in job  # a merge request could fill a shared cache
    artifacts = job["artifacts"]
    assert artifacts["when"] == "always"
    reports = artifacts["reports"]
    check = next(line for line in job["script"] if line.startswith("oracle-guard check"))
    assert f"--output junit={reports['junit'][0]}" in check
    assert f"--output gitlab={reports['codequality'][0]}" in check
    # the score's reports beside the gate's, its record as an artifact
    score = next(line for line in job["script"] if "oracle-guard score" in line)
    assert f"--output junit={reports['junit'][1]}" in score
    assert f"--output gitlab={reports['codequality'][1]}" in score
    assert f"--record {artifacts['paths'][0]}" in score


def test_the_recipe_is_the_components_job_with_its_install_source_written_in():
    job = component_jobs()["oracle-guard"]
    recipe = yaml.safe_load(RECIPE.read_text())["oracle-guard"]
    same = ("stage", "image", "rules", "needs", "interruptible", "timeout", "artifacts")
    assert {k: recipe[k] for k in same} == {k: job[k] for k in same}
    component_only = {"ORACLE_GUARD_PROJECT", "ORACLE_GUARD_COMMIT", "ORACLE_GUARD_TARGET_BRANCH"}
    assert set(job["variables"]) == set(recipe["variables"]) | component_only
    for name in set(recipe["variables"]) - {"ORACLE_GUARD"}:
        assert recipe["variables"][name] == job["variables"][name]
    # the fetch: the same lines but where the target comes from
    ours, theirs = job["script"][0].splitlines(), recipe["script"][0].splitlines()
    assert [ours[0], *ours[3:]] == [theirs[0], *theirs[3:]]
    (check,) = [line for line in recipe["script"] if line.startswith("oracle-guard check")]
    assert check == (
        "oracle-guard check --output junit=oracle-guard-junit.xml "
        "--output gitlab=gl-code-quality-report.json"
    )
    # the score: the component's line but where the target comes from
    (score,) = [line for line in recipe["script"] if "oracle-guard score" in line]
    (theirs,) = [line for line in job["script"] if "oracle-guard score" in line]
    assert score == theirs.replace(
        '${ORACLE_GUARD_TARGET_BRANCH:+--target "origin/$ORACLE_GUARD_TARGET_BRANCH"} ', ""
    )
    assert recipe["script"][-1] == "pre-commit run --all-files --show-diff-on-failure"


# -- the test interpolator: what it refuses ---------------------------------------
SMALL = """\
spec:
  component: [sha]
  inputs:
    who:
      default: world
    must: {}
---
job:
  script: ["echo $[[ inputs.who ]] $[[ inputs.must ]] $[[ component.sha ]]"]
"""


def test_the_interpolator_fills_inputs_and_component_fields():
    jobs = interpolate(SMALL, {"must": "x"}, {"sha": "abc"})
    assert jobs == {"job": {"script": ["echo world x abc"]}}


@pytest.mark.parametrize(
    "text, given, error",
    [
        (SMALL, {}, "input must is required and not given"),
        (SMALL, {"must": "x", "other": "y"}, "unknown inputs: ['other']"),
        (
            SMALL.replace("inputs.who ]]", "inputs.who | posix_escape ]]"),
            {"must": "x"},
            "functions",
        ),
        (SMALL.replace("inputs.who", "inputs.nobody"), {"must": "x"}, "names nothing"),
        (SMALL.replace("component.sha", "component.version"), {"must": "x"}, "names nothing"),
        (SMALL.replace("      default: world", "      type: number"), {"must": "x"}, "only string"),
        (SMALL.replace("---\n", ""), {"must": "x"}, "two documents"),
    ],
)
def test_the_interpolator_refuses_what_it_cannot_fill_as_gitlab_would(text, given, error):
    with pytest.raises(InterpolationError, match=error.replace("[", r"\[").replace("]", r"\]")):
        interpolate(text, given, {"sha": "abc"})


def test_a_variable_gitlab_would_expand_is_refused_not_run_unexpanded():
    with pytest.raises(InterpolationError, match="expansion is not simulated"):
        job_environment({"variables": {"X": "$CI_JOB_TOKEN"}}, {})
    assert job_environment({"variables": {"X": "1"}}, {"Y": "2"}) == {"X": "1", "Y": "2"}


# -- the job's script in a merge-request pipeline ----------------------------------
@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """(CI_SERVER_URL, the commit): a folder standing for the GitLab server, whose
    project oracle-guard/oracle-guard is a snapshot of this checkout."""
    base = tmp_path_factory.mktemp("gitlab-server")
    snapshot, sha = snapshot_checkout(base / "snapshot")
    git(base, "clone", "-q", "--bare", str(snapshot), str(base / "oracle-guard/oracle-guard.git"))
    return base.resolve().as_uri(), sha


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    """A fresh venv for the python image: its python and pip, nothing installed."""
    venv = tmp_path_factory.mktemp("image") / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    return venv


@pytest.fixture
def origin(tmp_path):
    """The project's bare repository: main with the harness example under its
    contract, a later commit on main, and two merge-request branches cut before it."""
    work = init_repo(tmp_path / "work")
    shutil.copytree(ROOT / "examples" / "harness", work, dirs_exist_ok=True)
    commit(work, {}, "guard the oracle")
    git(work, "branch", "honest")
    git(work, "branch", "rewrites-fixture")
    commit(work, {"src/later.py": "X = 1\n"}, "main moves on")
    git(work, "checkout", "-q", "honest")
    commit(work, {"src/harness.py": "def parse_header(raw):\n    return raw\n"}, "honest")
    git(work, "checkout", "-q", "rewrites-fixture")
    commit(work, {FIXTURE: '{"rewritten": true}\n'}, "rewrite a fixture")
    bare = tmp_path / "app.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    return bare


def run_job(tmp_path, origin, server, image, branch, platform="main", depth=0, drop="", **given):
    """The job run for the merge request of ``branch`` into ``platform`` (the
    target GitLab names; empty: none), with the include's ``given`` inputs; ``drop``:
    script lines holding it are left out (a near-miss)."""
    url, sha = server
    head = git(origin, "rev-parse", f"refs/heads/{branch}").strip()
    clone = merge_request_clone(origin, tmp_path / "builds" / "app", head, depth=depth)
    job = interpolate(COMPONENT.read_text(), given, {"sha": sha})[
        given.get("job-name", "oracle-guard")
    ]
    if drop:
        job["script"] = [
            "\n".join(line for line in step.splitlines() if drop not in line)
            for step in job["script"]
        ]
    # GitLab's diff base: the merge-base when the pipeline was made (none: no target)
    tip = git(origin, "for-each-ref", "--format=%(objectname)", f"refs/heads/{platform}").strip()
    diff_base = git(origin, "merge-base", tip, head).strip() if platform and tip else ""
    base = predefined(clone, url, platform, branch, diff_base)
    Path(base["HOME"]).mkdir(exist_ok=True)
    base["PATH"] = os.pathsep.join([str(image / "bin"), "/usr/bin", "/bin"])
    base["ORACLE_GUARD_NOW"] = NOW  # the tests' clock
    # this machine's route to the package index, for the dependencies
    base.update({k: v for k, v in os.environ.items() if k.startswith(("PIP_", "SSL_CERT_"))})
    done = run_script(job, clone, job_environment(job, base))
    return done, clone


def junit_failures(clone: Path) -> list:
    text = (clone / "oracle-guard-junit.xml").read_text("utf-8")
    conformance.junit_schema().validate(text)
    root = ET.fromstring(text.encode("utf-8"))
    return [case.get("name") for case in root.iter("testcase") if case.find("failure") is not None]


def code_quality(clone: Path) -> list:
    doc = json.loads((clone / "gl-code-quality-report.json").read_text("utf-8"))
    jsonschema.Draft7Validator(conformance.json_document(conformance.CODE_QUALITY_SCHEMA)).validate(
        doc
    )
    return [(issue["check_name"], issue["location"]["path"]) for issue in doc]


def installed_commit(image: Path) -> str:
    """The commit pip installed oracle-guard from (PEP 610's direct_url.json)."""
    (record,) = image.glob("lib/python*/site-packages/oracle_guard-*.dist-info/direct_url.json")
    return json.loads(record.read_text())["vcs_info"]["commit_id"]


@needs_report_schemas
def test_a_rewritten_fixture_fails_the_job_with_reports_naming_it(tmp_path, origin, server, image):
    done, clone = run_job(tmp_path, origin, server, image, "rewrites-fixture")
    assert done.returncode == 1, done.stdout
    assert f"{FIXTURE}: fixture-mismatch:" in done.stdout  # the text, in the job's log
    assert any(name.startswith(f"fixture-mismatch: {FIXTURE}") for name in junit_failures(clone))
    assert ("fixture-mismatch", FIXTURE) in code_quality(clone)
    assert installed_commit(image) == server[1]  # the component's own commit


@needs_report_schemas
def test_an_honest_merge_request_passes_with_reports_free_of_findings(
    tmp_path, origin, server, image
):
    done, clone = run_job(tmp_path, origin, server, image, "honest")
    assert done.returncode == 0, done.stdout
    assert junit_failures(clone) == []
    assert code_quality(clone) == []


@needs_report_schemas
def test_a_shallow_clone_is_deepened_to_the_merge_base_and_the_target(
    tmp_path, origin, server, image
):
    """GIT_DEPTH set lower by the project (refs/pipelines/ID alone, one commit deep):
    the fetch step unshallows, so the rewrite is still judged as its merge."""
    done, clone = run_job(tmp_path, origin, server, image, "rewrites-fixture", depth=1)
    assert done.returncode == 1, done.stdout
    assert git(clone, "rev-parse", "--is-shallow-repository").strip() == "false"
    assert ("fixture-mismatch", FIXTURE) in code_quality(clone)


def test_without_the_unshallow_a_shallow_clone_cannot_be_judged(tmp_path, origin, server, image):
    done, clone = run_job(
        tmp_path, origin, server, image, "rewrites-fixture", depth=1, drop="--unshallow"
    )
    assert done.returncode == 2, done.stdout
    assert "no merge-base between" in done.stdout
    assert git(clone, "rev-parse", "--is-shallow-repository").strip() == "true"


@needs_report_schemas
def test_the_target_input_judges_against_the_branch_it_names(tmp_path, origin, server, image):
    done, clone = run_job(
        tmp_path, origin, server, image, "rewrites-fixture", platform="", target="main"
    )
    assert done.returncode == 1, done.stdout
    assert ("fixture-mismatch", FIXTURE) in code_quality(clone)


def test_a_target_branch_origin_lacks_fails_the_job_in_one_line(tmp_path, origin, server, image):
    done, clone = run_job(tmp_path, origin, server, image, "honest", platform="gone")
    assert done.returncode != 0
    assert done.stdout.splitlines() == ["fatal: couldn't find remote ref refs/heads/gone"]
    assert not (clone / "oracle-guard-junit.xml").exists()  # nothing was judged


def test_no_target_at_all_fails_the_job_in_one_line(tmp_path, origin, server, image):
    done, _ = run_job(tmp_path, origin, server, image, "honest", platform="")
    assert done.returncode != 0
    (line,) = done.stdout.splitlines()
    assert line.endswith(
        "target: no target branch: run in a merge-request pipeline or set the target input"
    )


# -- the score input: the target's tests against the merge, after the gate ------------
@pytest.fixture
def score_origin(tmp_path):
    """main with the harness example and a score section in its contract; one merge
    request keeps the tests passing, one breaks the code they test (src/** is the
    agent's to edit, so the gate passes it)."""
    work = init_repo(tmp_path / "work")
    shutil.copytree(ROOT / "examples" / "harness", work, dirs_exist_ok=True)
    contract = (work / ".oracle-guard.yaml").read_text()
    commit(work, {".oracle-guard.yaml": contract + 'score:\n  tests: ["tests/**"]\n'}, "score")
    git(work, "branch", "honest")
    git(work, "branch", "breaks-the-code")
    git(work, "checkout", "-q", "honest")
    commit(work, {"src/later.py": "X = 1\n"}, "honest")
    git(work, "checkout", "-q", "breaks-the-code")
    broken = (
        "def parse_header(raw):\n    name, _, value = raw.partition(':')\n    return name, value\n"
    )
    commit(work, {"src/harness.py": broken}, "break the code")
    bare = tmp_path / "app.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    return bare


@needs_report_schemas
def test_the_score_input_fails_a_merge_request_whose_code_fails_the_targets_tests(
    tmp_path, score_origin, server, image
):
    done, clone = run_job(tmp_path, score_origin, server, image, "breaks-the-code", score="true")
    assert done.returncode == 1, done.stdout
    assert "tests/test_harness.py: test-failed:" in done.stdout  # the text, in the log
    assert "write-set: passed" in done.stdout  # the gate passed it first
    record = json.loads((clone / "oracle-guard-score.json").read_text())
    assert record["verdict"] == "failed" and record["target_label"] == "refs/remotes/origin/main"
    assert junit_failures(clone) == []  # the gate's report: no finding
    text = (clone / "oracle-guard-score-junit.xml").read_text("utf-8")
    conformance.junit_schema().validate(text)
    assert "test-failed" in text


def test_the_score_input_passes_an_honest_merge_request(tmp_path, score_origin, server, image):
    done, clone = run_job(tmp_path, score_origin, server, image, "honest", score="true")
    assert done.returncode == 0, done.stdout
    assert done.stdout.splitlines()[-1].startswith("score: passed ("), done.stdout
    assert json.loads((clone / "oracle-guard-score.json").read_text())["verdict"] == "passed"


def test_without_the_score_input_no_score_runs(tmp_path, score_origin, server, image):
    """The near miss: the same merge request, the gate alone, which passes it."""
    done, clone = run_job(tmp_path, score_origin, server, image, "breaks-the-code")
    assert done.returncode == 0, done.stdout
    assert "score:" not in done.stdout
    assert not (clone / "oracle-guard-score.json").exists()
    assert not (clone / "oracle-guard-score-junit.xml").exists()
