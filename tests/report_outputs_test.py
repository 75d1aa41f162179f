"""``--output FORMAT=PATH`` and the markdown job summary, from real
``oracle-guard check`` runs on real repositories; the markdown is rendered by
cmark-gfm, the renderer GitHub's own markdown comes from."""

from __future__ import annotations

import json
import os
import re
from html.parser import HTMLParser

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options

from oracle_guard.findings import Finding, HookResult
from oracle_guard.report.markdown import code_span, render_markdown, render_markdown_error
from testing.git import commit, init_repo, run_guard, stage
from testing.oracle import NOW
from tests.reporters_test import clean_repo, findings_repo

HOSTILE = "docs/x|y`z``<b>[l](https:/e.com)www.e.com_*&amp;~#\n::error::x.md"


def gfm(markdown: str) -> str:
    """GitHub's rendering; raw HTML kept (GitHub would strip it) so a tag that
    got through shows."""
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


class Cells(HTMLParser):
    """Every tag, and the rows of each table as lists of cell texts."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set = set()
        self.attrs: list = []
        self.tables: list = []
        self._cell = None

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attrs.extend(attrs)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1][-1].append(self._cell)
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def parsed(markdown: str) -> Cells:
    cells = Cells()
    cells.feed(gfm(markdown))
    return cells


SAFE_TAGS = {"h2", "h3", "p", "strong", "table", "thead", "tbody", "tr", "th", "td", "code"}


# -- markdown -----------------------------------------------------------------------------


def test_markdown_of_a_failing_change_is_one_table_of_findings_by_check(tmp_path, capsys):
    repo = findings_repo(tmp_path)
    rc, out, err = run_guard(capsys, repo, "check", "--format", "markdown", "--now", NOW)
    assert (rc, err) == (1, "")
    assert out.startswith("## oracle-guard: failed\n\n**Verdict: failed** (exit 1): ")
    html = parsed(out)
    assert html.tags <= SAFE_TAGS
    revisions, findings, checks = html.tables
    assert revisions[0] == ["Revision", "Value"]
    assert dict(revisions[1:])["now"] == "2026-09-25T00:00:00+00:00"
    assert findings[0] == ["Check", "Code", "Location", "Message"]
    assert all(len(row) == 4 for row in findings)
    by_check = [(row[0], row[1], row[2]) for row in findings[1:]]
    assert ("seed-append-only", "oracle-incomplete", ".oracle-guard.yaml") in by_check
    assert ("seed-append-only", "seed-reordered", "seeds/a.json:2") in by_check
    assert ("flake-budget", "budget-expiring (warning)", "oracle/flake_budget.yaml:3") in by_check
    assert ("write-set", "write-outside-set", "docs/a,b:c%d e.md") in by_check
    assert ("write-set", "write-outside-set", "docs/raw\\xff.md") in by_check  # as text shows it
    checks_seen = [row[0] for row in findings[1:]]
    assert checks_seen == sorted(checks_seen, key=checks_seen.index)  # grouped by check
    assert [row[:2] for row in checks[1:]] == [
        ["fixture-lock", "passed"],
        ["seed-append-only", "failed"],
        ["freeze-schema", "passed"],
        ["flake-budget", "passed"],
        ["write-set", "failed"],
        ["test-tamper", "passed"],
    ]
    assert "Hint: " in out


def test_markdown_of_a_passing_change_says_passed_and_lists_no_finding(tmp_path, capsys):
    repo = clean_repo(tmp_path)
    rc, out, err = run_guard(capsys, repo, "check", "--format", "markdown", "--now", NOW)
    assert (rc, err) == (0, "")
    assert out.startswith("## oracle-guard: passed\n\n**Verdict: passed** (exit 0): 0 errors")
    html = parsed(out)
    assert len(html.tables) == 2  # revisions and checks: no findings table
    assert "### Findings\n\nNone.\n" in out and "Hint" not in out
    assert all(row[1] == "passed" for row in html.tables[1][1:])


def test_a_hostile_file_name_stays_in_its_cell_as_text(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    commit(repo, {".oracle-guard.yaml": "version: 1\nwrite_set:\n  allow: ['src/**']\n"})
    stage(repo, {HOSTILE: "x\n"})
    rc, out, err = run_guard(capsys, repo, "check", "--format", "markdown", "--now", NOW)
    assert rc == 1
    html = parsed(out)
    assert html.tags <= SAFE_TAGS and html.attrs == []  # no link, no tag, no attribute
    row = next(r for r in html.tables[1] if r[1] == "write-outside-set")
    assert len(row) == 4
    assert row[2] == HOSTILE.replace("\n", "\\n")  # the text format's escape, nothing lost
    assert not any(line.startswith("::") for line in out.splitlines())


def test_the_near_miss_a_plain_name_reads_plainly():
    results = [HookResult("write-set", [Finding("write-set", "write-denied", "a.json", "m")])]
    row = parsed(render_markdown(results, exit_code=1)).tables[0][1]
    assert row == ["write-set", "write-denied", "a.json", "m"]


@pytest.mark.parametrize(
    "text", ["a`b", "``x", "x`", "` ", "a|b", "a\\|b", "|", "`|`", "\\", "a\\", "<!--", "&lt;"]
)
def test_a_code_span_shows_exactly_its_text(text):
    in_table = f"| h |\n|---|\n| {code_span(text)} |\n"
    assert parsed(in_table).tables[0][1] == [text]
    loose = Cells()
    loose.feed(gfm(code_span(text, in_table=False)))
    assert loose.tags == {"p", "code"}


def test_markdown_error_is_the_error_line_and_no_table():
    out = render_markdown_error("contract is not valid YAML | <b>x</b>\n::error::y")
    html = parsed(out)
    assert html.tags <= {"h2", "p", "strong", "code"} and not html.tables
    assert out.startswith("## oracle-guard: error\n")
    text = re.sub(r"<[^>]+>", "", gfm(out))
    assert "oracle-guard: error: contract is not valid YAML | &lt;b&gt;x&lt;/b&gt;\\n" in text
    assert "passed" not in out


# -- --output -----------------------------------------------------------------------------


def stdout_of(capsys, repo, fmt):
    return run_guard(capsys, repo, "check", "--format", fmt, "--now", NOW)


def test_three_reports_and_the_text_from_one_run(tmp_path, capsys):
    repo = findings_repo(tmp_path)
    out_dir = tmp_path / "reports"
    out_dir.mkdir()
    rc, out, err = run_guard(
        capsys,
        repo,
        "check",
        "--now",
        NOW,
        "--output",
        f"json={out_dir / 'og.json'}",
        "--output",
        f"sarif={out_dir / 'og.sarif'}",
        "--output",
        f"markdown={out_dir / 'summary.md'}",
    )
    assert (rc, err) == (1, "")
    assert out == stdout_of(capsys, repo, "text")[1]  # the terminal still gets text
    for name, fmt in (("og.json", "json"), ("og.sarif", "sarif"), ("summary.md", "markdown")):
        assert (out_dir / name).read_text("utf-8") == stdout_of(capsys, repo, fmt)[1]
    assert sorted(os.listdir(out_dir)) == ["og.json", "og.sarif", "summary.md"]  # no temp left


def test_a_relative_path_is_read_from_dash_c_and_the_format_on_stdout_may_repeat(tmp_path, capsys):
    repo = clean_repo(tmp_path)
    rc, out, err = run_guard(
        capsys, repo, "check", "--now", NOW, "--format", "json", "--output", "json=og.json"
    )
    assert (rc, err) == (0, "")
    assert (repo / "og.json").read_text("utf-8") == out
    assert json.loads(out)["checks"]["write-set"]["status"] == "passed"


def test_a_report_file_gets_the_usual_mode(tmp_path, capsys):
    repo = clean_repo(tmp_path)
    old = os.umask(0o022)
    try:
        rc, _, _ = run_guard(capsys, repo, "check", "--now", NOW, "--output", "text=og.txt")
    finally:
        os.umask(old)
    assert rc == 0 and (repo / "og.txt").stat().st_mode & 0o777 == 0o644


def test_the_same_bytes_from_the_same_revisions_and_clock(tmp_path, capsys):
    repo = findings_repo(tmp_path)
    runs = []
    for n in (1, 2):
        args = [
            f"{fmt}=run{n}.{fmt}"
            for fmt in ("json", "sarif", "markdown", "github", "junit", "gitlab")
        ]
        rc, out, _ = run_guard(
            capsys, repo, "check", "--now", NOW, *[a for s in args for a in ("--output", s)]
        )
        assert rc == 1
        runs.append([(repo / spec.split("=")[1]).read_bytes() for spec in args])
    assert runs[0] == runs[1]


def test_an_output_into_a_missing_folder_fails_in_one_line(tmp_path, capsys):
    repo = findings_repo(tmp_path)
    rc, out, err = run_guard(
        capsys,
        repo,
        "check",
        "--now",
        NOW,
        "--output",
        "json=ok.json",
        "--output",
        "sarif=missing/og.sarif",
    )
    assert rc == 2 and out == ""
    assert err == (
        "oracle-guard: error: cannot write the sarif report to missing/og.sarif: "
        "No such file or directory\n"
    )
    # the file written before is an error document now: nothing reads as a verdict
    doc = json.loads((repo / "ok.json").read_text("utf-8"))
    assert doc["error"].startswith("cannot write the sarif report") and doc["findings"] == []
    assert not (repo / "missing").exists()


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_a_passing_run_whose_report_cannot_be_written_is_no_pass(tmp_path, capsys, fmt):
    repo = clean_repo(tmp_path)
    (repo / "a-file").write_text("")
    (repo / "a-folder").mkdir()
    for where, why in (("a-file/og", "Not a directory"), ("a-folder", "Is a directory")):
        rc, out, err = run_guard(
            capsys, repo, "check", "--now", NOW, "--format", fmt, "--output", f"{fmt}={where}"
        )
        assert rc == 2
        assert err == f"oracle-guard: error: cannot write the {fmt} report to {where}: {why}\n"
        assert "passed" not in out
    assert os.listdir(repo / "a-folder") == []  # no temp file left behind


def test_a_failed_run_writes_each_formats_error_document(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    commit(repo, {".oracle-guard.yaml": "version: [\n"})
    stage(repo, {"a.txt": "x\n"})
    stale = {"og.json": "{}", "og.sarif": "{}", "og.md": "passed", "og.txt": "passed"}
    for name, text in stale.items():
        (repo / name).write_text(text)
    rc, out, err = run_guard(
        capsys,
        repo,
        "check",
        "--now",
        NOW,
        "--output",
        "json=og.json",
        "--output",
        "sarif=og.sarif",
        "--output",
        "markdown=og.md",
        "--output",
        "text=og.txt",
    )
    assert rc == 2 and out == "" and err.count("\n") == 1
    message = err[len("oracle-guard: error: ") : -1]
    assert json.loads((repo / "og.json").read_text())["error"] == message
    run = json.loads((repo / "og.sarif").read_text())["runs"][0]
    assert run["invocations"][0]["executionSuccessful"] is False and "results" not in run
    assert (repo / "og.md").read_text() == render_markdown_error(message)
    assert (repo / "og.txt").read_text() == err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--output", "json=a", "--output", "json=b"], "--output json= is given twice"),
        (["--output", "json=a", "--output", "sarif=./a"], "--output names './a' twice"),
    ],
)
def test_the_same_format_or_file_twice_is_a_usage_error(tmp_path, capsys, args, message):
    repo = clean_repo(tmp_path)
    rc, out, err = run_guard(capsys, repo, "check", "--now", NOW, *args)
    assert rc == 2 and out == ""
    assert err.startswith(f"oracle-guard: error: {message}") and err.count("\n") == 1
    assert not (repo / "a").exists() and not (repo / "b").exists()  # nothing written


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("json", "expected FORMAT=PATH, got 'json'"),
        ("json=", "expected FORMAT=PATH, got 'json='"),
        ("xml=a", "unknown format 'xml' in 'xml=a'"),
    ],
)
def test_a_malformed_output_is_refused_by_the_parser(tmp_path, capsys, spec, message):
    repo = clean_repo(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        run_guard(capsys, repo, "check", "--output", spec)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_lock_check_writes_outputs_and_lock_alone_refuses_them(tmp_path, capsys):
    repo = clean_repo(tmp_path)
    rc, out, err = run_guard(
        capsys, repo, "lock", "--check", "--now", NOW, "--output", "json=l.json"
    )
    assert (rc, err) == (0, "")
    assert list(json.loads((repo / "l.json").read_text())["checks"]) == ["fixture-lock"]
    rc, out, err = run_guard(capsys, repo, "lock", "--output", "json=w.json")
    assert rc == 2 and not (repo / "w.json").exists()
    assert (
        err
        == "oracle-guard: error: --output writes a verdict's reports: use it with lock --check\n"
    )


def test_check_help_names_every_format_and_output(capsys):
    from oracle_guard.cli import main
    from oracle_guard.report.formats import FORMATS

    with pytest.raises(SystemExit):
        main(["check", "--help"], env={})
    text = capsys.readouterr().out
    assert "--output FORMAT=PATH" in text
    for fmt in FORMATS:
        assert fmt in text


def test_a_missing_base_leaves_every_format_its_error_document(tmp_path, capsys):
    from oracle_guard.report.formats import FORMATS, render_error_file

    repo = clean_repo(tmp_path)
    specs = [f"{fmt}=og.{fmt}" for fmt in FORMATS]
    rc, out, err = run_guard(
        capsys,
        repo,
        "check",
        "--now",
        NOW,
        "--base",
        "no-such-rev",
        *[arg for spec in specs for arg in ("--output", spec)],
    )
    assert rc == 2 and out == "" and err.count("\n") == 1
    message = err[len("oracle-guard: error: ") : -1]
    assert "no-such-rev" in message
    for fmt in FORMATS:
        assert (repo / f"og.{fmt}").read_text("utf-8") == render_error_file(fmt, message)
