"""``--format junit`` from real ``oracle-guard check`` runs, validated against
the JUnit schema Jenkins' xUnit plugin validates with (the public suites' data, testing/conformance.py) and
read as GitLab's and Jenkins' parsers read it: testcase classname, name, at
most one failure or error each."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
import xmlschema

from oracle_guard.findings import Finding, HookResult
from oracle_guard.report.escaping import show_text
from oracle_guard.report.junit import render_junit, render_junit_error, xml_escape
from testing import conformance
from testing.git import commit, init_repo, run_guard, stage
from testing.oracle import NOW
from tests.reporters_test import clean_repo, findings_repo

pytestmark = pytest.mark.needs("conformance")


def valid(report: str) -> ET.Element:
    conformance.junit_schema().validate(report)
    root = ET.fromstring(report.encode("utf-8"))
    for case in root.iter("testcase"):  # Ant's schema and GitLab: one outcome a testcase
        assert len([c for c in case if c.tag in ("failure", "error", "skipped")]) <= 1
    return root


def cases(root: ET.Element) -> list:
    out = []
    for case in root.iter("testcase"):
        outcome = next((c.tag for c in case if c.tag in ("failure", "error")), "passed")
        out.append((case.get("classname"), case.get("name"), outcome))
    return out


def test_junit_of_a_failing_change(tmp_path, capsys):
    repo = findings_repo(tmp_path)
    rc, out, err = run_guard(capsys, repo, "check", "--format", "junit", "--now", NOW)
    assert (rc, err) == (1, "")
    root = valid(out)
    suite = root.find("testsuite")
    assert suite is not None and suite.get("timestamp") == "2026-09-25T00:00:00+00:00"
    got = cases(root)
    assert ("oracle-guard.fixture-lock", "fixture-lock", "passed") in got
    assert ("oracle-guard.freeze-schema", "freeze-schema", "passed") in got
    assert (
        "oracle-guard.seed-append-only",
        "oracle-incomplete: .oracle-guard.yaml",
        "failure",
    ) in got
    assert ("oracle-guard.seed-append-only", "seed-reordered: seeds/a.json:2", "failure") in got
    assert ("oracle-guard.write-set", "write-outside-set: docs/raw\\xff.md", "failure") in got
    # a warning passes, the warning in its output; its check passed too
    assert (
        "oracle-guard.flake-budget",
        "budget-expiring (warning): oracle/flake_budget.yaml:3",
        "passed",
    ) in got
    assert ("oracle-guard.flake-budget", "flake-budget", "passed") in got
    # a check that failed has no passing testcase of its own
    assert ("oracle-guard.write-set", "write-set", "passed") not in got
    failures = [c for c in got if c[2] == "failure"]
    assert int(suite.get("failures")) == len(failures) and int(suite.get("tests")) == len(got)
    assert root.get("failures") == suite.get("failures") and suite.get("errors") == "0"
    failure = root.find(".//testcase[@name='seed-reordered: seeds/a.json:2']/failure")
    assert failure is not None and failure.get("type") == "seed-reordered"
    assert failure.text.startswith("seeds/a.json:2: seed-reordered: element [0] moved")
    assert "\nfix: " in failure.text
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["now"] == "2026-09-25T00:00:00+00:00" and props["exit_code"] == "1"
    assert props["candidate"] == "the index"


def test_junit_of_a_passing_change(tmp_path, capsys):
    repo = clean_repo(tmp_path)
    rc, out, err = run_guard(capsys, repo, "check", "--format", "junit", "--now", NOW)
    assert (rc, err) == (0, "")
    root = valid(out)
    assert [c[2] for c in cases(root)] == ["passed"] * 6
    assert root.get("failures") == "0" and root.get("tests") == "6"


def test_the_schema_refuses_a_file_attribute_so_none_is_written():
    report = render_junit(
        [HookResult("write-set", [Finding("write-set", "write-denied", "a.json", "m")])]
    )
    valid(report)
    assert " file=" not in report
    with pytest.raises(xmlschema.XMLSchemaValidationError):
        conformance.junit_schema().validate(
            report.replace("<testcase ", '<testcase file="a.json" ', 1)
        )


@pytest.mark.parametrize(
    "text",
    [
        "a\x00b",  # NUL: no XML 1.0 document may hold it
        "\x1b[31mred\x07",
        "tab\there\nnew line\r",
        "raw \udcff byte",
        "lone \ud800 surrogate",
        "\ufffe\uffff",
        "</failure>]]><![CDATA[x",
        'a "quoted" & <tagged>',
        "\x85\u2028\u2029",
    ],
)
def test_a_character_xml_forbids_is_shown_escaped_never_dropped(text):
    results = [HookResult("write-set", [Finding("write-set", "write-denied", text, text)])]
    root = valid(render_junit(results, exit_code=1))
    failure = root.find(".//failure")
    assert failure is not None
    shown = show_text(text)
    for forbidden in ("\ud800", "\ufffe", "\uffff"):
        shown = shown.replace(forbidden, f"\\u{ord(forbidden):04x}")
    assert failure.get("message") == shown
    assert shown in failure.text


def test_the_near_miss_plain_text_is_only_markup_escaped():
    assert xml_escape("a/b.json") == "a/b.json"
    assert xml_escape("<&>\"'") == "&lt;&amp;&gt;&quot;'"


def test_the_error_document_is_an_errored_testcase():
    root = valid(render_junit_error("contract is not valid YAML: <x>\n::error::y"))
    assert cases(root) == [("oracle-guard", "oracle-guard run", "error")]
    assert root.get("errors") == "1" and root.get("failures") == "0"
    error = root.find(".//error")
    assert error is not None
    assert error.text == "oracle-guard: error: contract is not valid YAML: <x>\\n::error::y"


def test_a_failed_run_writes_the_error_document(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    commit(repo, {".oracle-guard.yaml": "version: [\n"})
    stage(repo, {"a.txt": "x\n"})
    (repo / "og.xml").write_text("<testsuites/>")  # an earlier pass
    rc, out, err = run_guard(capsys, repo, "check", "--now", NOW, "--output", "junit=og.xml")
    assert rc == 2 and out == ""
    root = valid((repo / "og.xml").read_text("utf-8"))
    assert [c[2] for c in cases(root)] == ["error"]
    assert root.find(".//error").get("message") == err[len("oracle-guard: error: ") : -1]


def gitlab_cases(root: ET.Element) -> dict:
    """The test cases GitLab's test report keeps: it keys each by its status and
    by classname and name together (Gitlab::Ci::Reports::TestCase#key), and a
    second case of one key replaces the first."""
    kept = {}
    for classname, name, outcome in cases(root):
        kept[(outcome, f"{classname}_{name}")] = name
    return kept


def test_three_findings_of_one_code_on_one_line_are_three_testcases():
    same_line = [
        Finding("test-tamper", "non-hermetic", "tests/test_a.py", f"random.{n} in test_y", 4)
        for n in "xyz"
    ]
    report = render_junit([HookResult("test-tamper", same_line)], exit_code=1)
    root = valid(report)
    names = [name for _, name, _ in cases(root)]
    assert names == [
        "non-hermetic: tests/test_a.py:4",
        "non-hermetic: tests/test_a.py:4 #2",
        "non-hermetic: tests/test_a.py:4 #3",
    ]
    assert len(gitlab_cases(root)) == 3  # GitLab shows all three
    assert root.find("testsuite").get("tests") == "3"


def test_a_name_a_path_already_holds_is_not_reused():
    # the near miss: a file named like a suffixed case gets a number of its own
    findings = [
        Finding("write-set", "write-denied", "a #2", "denied"),
        Finding("write-set", "write-denied", "a", "denied"),
        Finding("write-set", "write-denied", "a", "denied again"),
    ]
    root = valid(render_junit([HookResult("write-set", findings)], exit_code=1))
    names = [name for _, name, _ in cases(root)]
    assert len(set(names)) == len(names) == 3
    assert len(gitlab_cases(root)) == 3


def test_every_testcase_of_a_real_report_is_one_gitlab_shows(tmp_path, capsys):
    repo = findings_repo(tmp_path)
    _, out, _ = run_guard(capsys, repo, "check", "--format", "junit", "--now", NOW)
    root = valid(out)
    assert len(gitlab_cases(root)) == len(cases(root))
