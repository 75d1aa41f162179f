"""``--format gitlab`` (GitLab Code Quality) from real ``oracle-guard check``
runs, validated against the schema written from GitLab's documentation
(gitlab-codequality in the public suites' data, testing/conformance.py)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import jsonschema
import pytest

from oracle_guard.findings import Finding, HookResult
from oracle_guard.report.gitlab import fingerprint, render_gitlab, render_gitlab_error
from testing import conformance
from testing.git import commit, git, init_repo, run_guard, stage
from testing.oracle import NOW
from tests.reporters_test import clean_repo, findings_repo

pytestmark = pytest.mark.needs("conformance")


def schema() -> dict:
    return conformance.json_document(conformance.CODE_QUALITY_SCHEMA)


def valid(report: str) -> list:
    jsonschema.Draft7Validator.check_schema(schema())
    doc = json.loads(report)
    jsonschema.Draft7Validator(schema()).validate(doc)
    fingerprints = [issue["fingerprint"] for issue in doc]
    assert len(set(fingerprints)) == len(fingerprints)  # GitLab shows one per fingerprint
    return doc


def test_code_quality_of_a_failing_change(tmp_path, capsys):
    repo = findings_repo(tmp_path)
    rc, out, err = run_guard(capsys, repo, "check", "--format", "gitlab", "--now", NOW)
    assert (rc, err) == (1, "")
    doc = valid(out)
    got = [
        (i["check_name"], i["severity"], i["location"]["path"], i["location"]["lines"]["begin"])
        for i in doc
    ]
    assert got == [
        # no path: the contract, line 1
        ("oracle-incomplete", "critical", ".oracle-guard.yaml", 1),
        ("seed-reordered", "critical", "seeds/a.json", 2),
        ("budget-expiring", "minor", "oracle/flake_budget.yaml", 3),
        ("write-outside-set", "critical", "docs/a,b:c%d e.md", 1),
        ("write-outside-set", "critical", "docs/raw\\xff.md", 1),
        ("write-denied", "critical", "oracle/x.json", 1),
        ("write-denied", "critical", "seeds/a.json", 1),
    ]
    assert doc[1]["description"].startswith("element [0] moved")
    assert all(len(i["fingerprint"]) == 64 for i in doc)


def test_code_quality_of_a_passing_change_is_an_empty_array(tmp_path, capsys):
    repo = clean_repo(tmp_path)
    rc, out, err = run_guard(capsys, repo, "check", "--format", "gitlab", "--now", NOW)
    assert (rc, err, valid(out)) == (0, "", [])


def test_fingerprints_are_the_same_on_another_machine_and_clone(tmp_path, capsys):
    repo = findings_repo(tmp_path)
    git(repo, "commit", "-q", "-m", "candidate")
    judged = ["--base", "HEAD~1", "--head", "HEAD", "--format", "gitlab", "--now", NOW]
    rc, here, _ = run_guard(capsys, repo, "check", *judged)
    assert rc == 1
    clone = tmp_path / "elsewhere"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    # another process, another folder, another environment: the same revisions
    proc = subprocess.run(
        [sys.executable, "-m", "oracle_guard", "check", "-C", str(clone), *judged, "--no-cache"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == here
    assert len(valid(here)) == 7


def test_a_fingerprint_is_what_names_the_finding_and_not_its_line():
    f = Finding("write-set", "write-denied", "a.json", "m", line=3)
    data = b"\0".join([b"write-set", b"write-denied", b"a.json", b"m", b"0"])
    assert fingerprint(f, 0) == hashlib.sha256(data).hexdigest()
    assert fingerprint(f._replace(line=9), 0) == fingerprint(f, 0)  # a line moved: same
    # the near-misses: anything that names another finding names another fingerprint
    for other in (
        f._replace(path="b.json"),
        f._replace(code="write-outside-set"),
        f._replace(message="n"),
        f._replace(hook="seed-append-only"),
    ):
        assert fingerprint(other, 0) != fingerprint(f, 0)
    assert fingerprint(f._replace(path="raw\udcff"), 0) != fingerprint(
        f._replace(path="raw\\xff"), 0
    )


def test_equal_findings_on_two_lines_get_two_fingerprints():
    twice = [
        Finding("flake-budget", "budget-expiring", "b.yaml", "x", line=3, severity="warning"),
        Finding("flake-budget", "budget-expiring", "b.yaml", "x", line=7, severity="warning"),
    ]
    doc = valid(render_gitlab([HookResult("flake-budget", twice)]))
    assert [i["location"]["lines"]["begin"] for i in doc] == [3, 7]


def test_the_error_document_is_one_blocker(tmp_path, capsys):
    doc = valid(render_gitlab_error("contract is not valid YAML\n::error::x"))
    assert len(doc) == 1 and doc[0]["severity"] == "blocker"
    assert doc[0]["description"] == "oracle-guard: error: contract is not valid YAML\n::error::x"
    assert doc[0]["location"] == {"path": ".oracle-guard.yaml", "lines": {"begin": 1}}


def test_a_failed_run_writes_the_blocker(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    commit(repo, {".oracle-guard.yaml": "version: [\n"})
    stage(repo, {"a.txt": "x\n"})
    (repo / "gl.json").write_text("[]")  # an earlier, clean report
    rc, out, err = run_guard(capsys, repo, "check", "--now", NOW, "--output", "gitlab=gl.json")
    assert rc == 2 and out == ""
    doc = valid((repo / "gl.json").read_text("utf-8"))
    assert [i["severity"] for i in doc] == ["blocker"]
    assert doc[0]["description"] == err.rstrip("\n")


@pytest.mark.parametrize("line", [0, -1, "3"])
def test_the_schema_refuses_a_line_gitlab_cannot_place(line):
    issue = json.loads(render_gitlab_error("x"))[0]
    issue["location"]["lines"]["begin"] = line
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft7Validator(schema()).validate([issue])
