"""`oracle-guard explain CODE` and `oracle-guard schema NAME`."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from oracle_guard.checks.codes import CODES
from oracle_guard.checks.registry import HOOKS
from oracle_guard.cli import main
from oracle_guard.report.formats import FORMATS
from testing.git import init_repo, run_guard, stage

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = (
    "contract",
    "corpus-line",
    "fixtures-lock",
    "flake-budget",
    "freeze",
    "quarantine-entry",
    "quarantine-list",
    "replay-case",
    "score-record",
)


def run(capsys, *argv):
    capsys.readouterr()
    rc = main(list(argv), env={})
    out, err = capsys.readouterr()
    return rc, out, err


# -- explain ---------------------------------------------------------------------------


@pytest.mark.parametrize("code", list(CODES))
def test_explain_prints_code_hook_meaning_example_and_fix(capsys, code):
    rc, out, err = run(capsys, "explain", code)
    assert (rc, err) == (0, "")
    info = CODES[code]
    assert out.splitlines() == [
        f"code:    {code}",
        f"hook:    {info.hook}",
        f"meaning: {info.meaning}",
        f"example: {info.example}",
        f"fix:     {info.fix}",
    ]


@pytest.mark.parametrize("code", list(CODES))
def test_every_example_is_a_line_its_hook_prints(code):
    info = CODES[code]
    warning = info.meaning.startswith("warning:")
    label = re.escape(code) + (r" \(warning\)" if warning else "")
    if info.hook == "pre-receive":  # as the server prints it: the ref, maybe the commit
        # a finding about the ref itself (deletion, replace ref) names no path
        shape = r"oracle-guard: refs/\S+( \([0-9a-f]{12}\))?: (\S+: )?" + label + r": \S.*"
    else:  # as `check` prints it, ruff-style: path[:line]: code: message
        shape = r"[^\s:]+(:[1-9][0-9]*)?: " + label + r": \S.*"
    assert re.fullmatch(shape, info.example), info.example
    assert "\n" not in info.example


def test_an_example_matches_what_a_real_check_prints(tmp_path, capsys):
    """The write-outside-set example is exactly what check prints for a Makefile
    outside the write set."""
    repo = init_repo(tmp_path / "r")
    stage(repo, {".oracle-guard.yaml": 'version: 1\nwrite_set:\n  allow: ["src/**"]\n'})
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "contract"], check=True)
    stage(repo, {"Makefile": "all:\n"})
    rc, out, _ = run_guard(capsys, repo, "check", "--only", "write-set", "--now", "2026-09-25")
    assert rc == 1
    assert out.splitlines()[0] == CODES["write-outside-set"].example


def test_explain_ignores_letter_case_and_spaces(capsys):
    rc, out, _ = run(capsys, "explain", " Fixture-Mismatch ")
    assert rc == 0 and out.startswith("code:    fixture-mismatch\n")


def test_explain_all_lists_every_code_with_its_hook_and_meaning(capsys):
    rc, out, err = run(capsys, "explain", "--all")
    assert (rc, err) == (0, "")
    lines = out.splitlines()
    assert len(lines) == len(CODES)
    for line, (code, info) in zip(lines, CODES.items()):
        assert re.fullmatch(
            rf"{re.escape(code)} +{re.escape(info.hook)} +"
            rf"{re.escape(info.meaning)}",
            line,
        ), line
    # aligned columns: every hook starts in the same column
    columns = {line.index(info.hook, len(code)) for line, (code, info) in zip(lines, CODES.items())}
    assert len(columns) == 1
    assert {info.hook for info in CODES.values()} == set(HOOKS) | {"pre-receive", "score"}


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (
            "fixture-mismach",
            "unknown code 'fixture-mismach'; did you mean fixture-mismatch, "
            "fixture-missing, replay-mismatch? 'oracle-guard explain --all' lists every code",
        ),
        (
            "seed-reorder",
            "unknown code 'seed-reorder'; did you mean seed-reordered, "
            "seed-removed, seed-rewritten? 'oracle-guard explain --all' lists every "
            "code",
        ),
        (
            "write",
            "unknown code 'write'; did you mean write-outside-set, write-denied? "
            "'oracle-guard explain --all' lists every code",
        ),
        ("E501", "unknown code 'E501'; 'oracle-guard explain --all' lists every code"),
    ],
)
def test_explain_an_unknown_code_names_close_matches(capsys, given, expected):
    rc, out, err = run(capsys, "explain", given)
    assert (rc, out) == (2, "")
    assert err == f"oracle-guard: error: {expected}\n"


@pytest.mark.parametrize("argv", [["explain"], ["explain", "seed-removed", "--all"]])
def test_explain_needs_a_code_or_all(capsys, argv):
    rc, out, err = run(capsys, *argv)
    assert (rc, out) == (2, "")
    assert err == "oracle-guard: error: 'oracle-guard explain' takes a CODE or --all\n"


def test_explain_from_the_installed_command():
    proc = subprocess.run(
        [sys.executable, "-m", "oracle_guard", "explain", "budget-expiring"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    assert "example: oracle/flake_budget.yaml:3: budget-expiring (warning): " in proc.stdout


# -- schema ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", SCHEMAS)
def test_schema_prints_the_built_in_schema_as_shipped(capsys, name):
    rc, out, err = run(capsys, "schema", name)
    assert (rc, err) == (0, "")
    shipped = (ROOT / "schemas" / f"{name}.schema.json").read_text(encoding="utf-8")
    assert out == shipped
    assert json.loads(out)["$id"] == f"urn:oracle-guard:schema:{name}"


def test_schema_list_names_every_built_in_schema(capsys):
    rc, out, err = run(capsys, "schema", "--list")
    assert (rc, err) == (0, "")
    assert out.splitlines() == list(SCHEMAS)
    shipped = sorted(
        p.name[: -len(".schema.json")]
        for p in (ROOT / "schemas").iterdir()
        if p.name.endswith(".schema.json")
    )
    assert shipped == list(SCHEMAS)


@pytest.mark.parametrize("name", ["freez", "freeze.schema.json", "../contract", "Contract"])
def test_schema_unknown_name_lists_the_names(capsys, name):
    rc, out, err = run(capsys, "schema", name)
    assert (rc, out) == (2, "")
    assert err == (
        f"oracle-guard: error: unknown schema {name!r}; choose from {', '.join(SCHEMAS)}\n"
    )


@pytest.mark.parametrize("argv", [["schema"], ["schema", "freeze", "--list"]])
def test_schema_needs_a_name_or_list(capsys, argv):
    rc, out, err = run(capsys, *argv)
    assert (rc, out) == (2, "")
    assert err == "oracle-guard: error: 'oracle-guard schema' takes a NAME or --list\n"


def test_schema_help_names_every_built_in_schema():
    """The NAME help (on --help and the CLI page) lists what --list lists."""
    from oracle_guard.cli import build_parser
    from oracle_guard.commands.schema import schema_names

    parser = build_parser()
    schema = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[
        "schema"
    ]
    (name,) = [a for a in schema._actions if a.dest == "name"]
    listed = re.findall(r"[a-z][a-z-]*[a-z]", name.help.replace(" or ", ", "))
    assert listed == schema_names() == sorted(SCHEMAS)


def test_the_cli_reference_documents_the_commands_and_formats():
    """docs/reference/cli.md's prose, above the generated usage, names them."""
    page = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    command_line = page.split("<!-- generated: cli -->", 1)[0]
    for text in (
        "oracle-guard explain",
        "oracle-guard schema",
        "--format " + "|".join(FORMATS),
        "--output FORMAT=PATH",
        "--color",
        "NO_COLOR",
        "FORCE_COLOR",
        "PRE_COMMIT_COLOR",
    ):
        assert text in command_line, text


CI_PAGES = ("ci-github.md", "ci-gitlab.md", "ci-other.md")
# a line that is only a snippets include: --8<-- "path" (a repository file, shown in the page)
INCLUDE = re.compile(r'^--8<-- "([^":]+)(?::[\w-]+)?"$', re.M)


def ci_docs() -> str:
    """The CI how-to pages, each with the repository files it includes."""
    text = ""
    for name in CI_PAGES:
        page = (ROOT / "docs" / "how-to" / name).read_text(encoding="utf-8")
        text += page + "".join(
            (ROOT / path).read_text(encoding="utf-8") for path in INCLUDE.findall(page)
        )
    return text


def test_the_ci_docs_name_every_report_and_the_action():
    ci = ci_docs()
    for text in (
        "--format github",
        "--output sarif=",
        "upload-sarif",
        "--output junit=",
        "--output gitlab=",
        "--output markdown=",
        "uses: your-org/oracle-guard@",
        "component: $CI_SERVER_FQDN/",
    ):
        assert text in ci, text
    # every format is in the reports table of docs/how-to/ci-other.md, except the
    # text and json of stdout
    for name in FORMATS:
        assert name in ("text", "json", "github") or f"| `{name}` |" in ci, name


@pytest.mark.parametrize("hook", [*HOOKS, "pre-receive"])
def test_explain_a_hook_lists_its_codes(capsys, hook):
    rc, out, err = run(capsys, "explain", hook)
    assert (rc, err) == (0, "")
    codes = [code for code, info in CODES.items() if info.hook == hook]
    assert [line.split()[0] for line in out.splitlines()] == codes
    for line, code in zip(out.splitlines(), codes):
        assert line.endswith(CODES[code].meaning)
    # near miss: a hook's id spelled wrong is an unknown code, with suggestions
    rc, out, err = run(capsys, "explain", hook + "x")
    assert rc == 2 and "unknown code" in err
