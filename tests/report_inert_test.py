"""Every format of report.formats.RENDERERS keeps the rules of the others:
hostile names and messages from the repository leave each report well-formed
and inert, read by GitHub's runner (a line starting '::' after white space,
'##[' anywhere) or shown in GitLab's job log (ANSI escapes, and its section
markers, which need ESC and CR). Each report is read back by its own reader."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from oracle_guard.findings import Finding, HookResult
from oracle_guard.report import formats
from testing import conformance
from tests.report_outputs_test import SAFE_TAGS, parsed

# junit is validated against Jenkins' schema, from the public suites' data
FORMATS = [
    pytest.param(fmt, marks=pytest.mark.needs("conformance")) if fmt == "junit" else fmt
    for fmt in formats.FORMATS
]

HOSTILE = [
    "::error::x",
    "  ::warning file=a::forged",
    "a ##[group]b",
    "a\n::add-mask::secret",
    "a\r\n::error::crlf",
    "</failure></testcase>",
    "]]><x/>",
    "\x1b[31mred\x1b[0m",
    "\x1b[0Ksection_start:1:x\r\x1b[0K",
    "a|b|c",
    "raw \udcff\udc80 bytes",
    "`code` **b** [l](https://e.com) <img src=x> &amp;",
    "%0A%25::x",
    "\x00\x07\x7f\x85\u2028",
]


def results_with(text: str):
    findings = [
        Finding("write-set", "write-denied", text, text),
        Finding("write-set", "write-outside-set", f"docs/{text}", f"see {text}", line=2),
        Finding("flake-budget", "budget-expiring", text, text, line=1, severity="warning"),
        Finding("seed-append-only", "oracle-incomplete", None, text),
    ]
    results = [
        HookResult("write-set", findings[:2]),
        HookResult("flake-budget", findings[2:3], note=text),
        HookResult("seed-append-only", findings[3:]),
        HookResult("test-tamper", note=text),
    ]
    meta = {"base": text, "candidate": text, "now": "2026-09-25T00:00:00+00:00", "notice": text}
    return results, meta


def inert(report: str, fmt: str) -> None:
    report.encode("utf-8")  # strict: no lone surrogate reaches a file or a pipe
    # '##[' only inside a github annotation: the runner reads that line as the
    # '::' command it is, never as a '##[' one (tests/reporters_test.py)
    assert not any("##[" in line for line in report.split("\n") if not line.startswith("::")), (
        report
    )
    assert "\x1b" not in report and "\r" not in report  # nothing for GitLab's log either
    assert not any(0 <= ord(ch) < 0x20 and ch != "\n" for ch in report)
    for line in report.split("\n"):
        if line.lstrip().startswith("::"):
            assert fmt == "github", line  # only the github format writes commands
            assert line.startswith(("::error ", "::warning ")), line
            # the properties end at the first '::', each one key=value with no ':' or ','
            command, sep, _data = line[2:].partition("::")
            assert sep, line
            props = command.split(" ", 1)[1].split(",")
            assert [p.split("=", 1)[0] for p in props] in (
                ["file", "line", "title"],
                ["file", "title"],
                ["title"],
            ), line


def well_formed(report: str, fmt: str) -> None:
    if fmt in ("json", "sarif", "gitlab"):
        json.loads(report)
    elif fmt == "junit":
        conformance.junit_schema().validate(report)
        ET.fromstring(report.encode("utf-8"))
    elif fmt == "markdown":
        html = parsed(report)
        assert html.tags <= SAFE_TAGS and html.attrs == []
        for table in html.tables:
            assert len({len(row) for row in table}) == 1  # no cell split or lost


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("text", HOSTILE, ids=[repr(t)[1:20] for t in HOSTILE])
def test_a_hostile_name_leaves_every_report_well_formed_and_inert(fmt, text):
    results, meta = results_with(text)
    report = formats.render(fmt, results, meta=meta, owners=[text], exit_code=1)
    well_formed(report, fmt)
    inert(report, fmt)
    github_commands = [ln for ln in report.split("\n") if ln.startswith("::")]
    assert len(github_commands) == (4 if fmt == "github" else 0)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("text", HOSTILE, ids=[repr(t)[1:20] for t in HOSTILE])
def test_a_hostile_error_message_leaves_every_error_document_inert(fmt, text):
    for report in (formats.render_error(fmt, text), formats.render_error_file(fmt, text)):
        if report:
            well_formed(report, fmt)
        inert(report, fmt)
        assert len([ln for ln in report.split("\n") if ln.startswith("::")]) <= 1


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_near_miss_a_plain_name_is_shown_as_is(fmt):
    results, meta = results_with("src/plain_name.py")
    report = formats.render(fmt, results, meta=meta, exit_code=1)
    well_formed(report, fmt)
    inert(report, fmt)
    assert "plain_name.py" in report
