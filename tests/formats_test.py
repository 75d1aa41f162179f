"""One table from format name to renderer: every format renders a run and a
failed run, and the command line offers exactly those names."""

from __future__ import annotations

import json

import pytest

from oracle_guard.findings import Finding, HookResult
from oracle_guard.report import formats
from oracle_guard.report.github import render_github
from oracle_guard.report.gitlab import render_gitlab
from oracle_guard.report.json import render_json
from oracle_guard.report.junit import render_junit
from oracle_guard.report.markdown import render_markdown
from oracle_guard.report.sarif import render_sarif
from oracle_guard.report.text import painter, render_text

RESULTS = [
    HookResult(
        "write-set",
        [
            Finding(
                "write-set",
                "write-outside-set",
                "Makefile",
                "matches no allowed pattern of the write set",
            )
        ],
    ),
    HookResult("fixture-lock", note="nothing to check"),
]
META = {"now": "2026-09-25T00:00:00+00:00"}


def test_the_format_names_in_order():
    assert formats.FORMATS == ("text", "json", "github", "sarif", "markdown", "junit", "gitlab")
    assert formats.COLOR_CHOICES == ("auto", "always", "never")


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [
        ("text", lambda: render_text(RESULTS, owners=["alice"], paint=painter(True))),
        ("json", lambda: render_json(RESULTS, meta=META)),
        ("github", lambda: render_github(RESULTS, owners=["alice"])),
        ("sarif", lambda: render_sarif(RESULTS, meta=META, exit_code=1)),
        (
            "markdown",
            lambda: render_markdown(RESULTS, meta=META, owners=["alice"], exit_code=1),
        ),
        ("junit", lambda: render_junit(RESULTS, meta=META, exit_code=1)),
        ("gitlab", lambda: render_gitlab(RESULTS)),
    ],
)
def test_render_hands_each_format_what_it_reads(fmt, expected):
    got = formats.render(fmt, RESULTS, meta=META, owners=["alice"], exit_code=1, colour=True)
    assert got == expected()


def test_text_is_coloured_only_when_asked():
    plain = formats.render("text", RESULTS, owners=["alice"])
    assert "\x1b[" not in plain and plain == render_text(RESULTS, owners=["alice"])


def test_render_error_in_every_format():
    assert formats.render_error("text", "boom") == ""  # the stderr line is the report
    assert json.loads(formats.render_error("json", "boom"))["error"] == "boom"
    assert formats.render_error("github", "a\nb") == "::error title=oracle-guard::a%0Ab\n"
    run = json.loads(formats.render_error("sarif", "boom"))["runs"][0]
    assert run["invocations"][0]["executionSuccessful"] is False and "results" not in run
    assert "oracle-guard: error: boom" in formats.render_error("markdown", "boom")


def test_an_error_file_is_never_empty():
    for fmt in formats.FORMATS:
        assert "boom" in formats.render_error_file(fmt, "boom")
    assert formats.render_error_file("text", "a\nb") == "oracle-guard: error: a\\nb\n"


def test_every_format_has_both_renderers():
    for fmt in formats.FORMATS:
        assert isinstance(formats.render(fmt, []), str)
        assert isinstance(formats.render_error(fmt, "boom"), str)
