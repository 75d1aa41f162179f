"""Reports CI systems read (GitHub workflow commands, SARIF 2.1.0) and colour
for people, from real `oracle-guard check` runs on real repositories."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote_to_bytes

import jsonschema
import pytest

from oracle_guard import __version__
from oracle_guard.checks.codes import CODES
from oracle_guard.findings import Finding, HookResult
from oracle_guard.report.formats import colour_wanted
from oracle_guard.report.github import github_command, render_github
from testing import conformance
from testing.git import GIT_ENV, REVISION_ENV, commit, init_repo, run_guard, stage
from testing.oracle import NOW

ROOT = Path(__file__).resolve().parents[1]
# the SARIF 2.1.0 schema (OASIS, errata 01) is in the public suites' data
# (testing/conformance.py); the tests that validate against it need it
needs_sarif_schema = pytest.mark.needs("conformance")

CONTRACT = """\
version: 1
seeds:
  - {paths: ["seeds/*.json"], format: json-array}
  - {paths: ["corpus/*.json"], format: json-array}
freeze:
  - {paths: ["oracle/flake_budget.yaml"], schema: flake-budget}
budget: {max_frozen: 3, warn_days: 3}
write_set:
  allow: ["src/**"]
  deny: ["oracle/**"]
  owners: [alice]
identity_env: GL_USERNAME
"""
BUDGET = """\
max_frozen: 3
frozen:
  - id: tests/test_io.py::test_upload
    owner: platform
    expires: 2026-09-27
    reason: flaky upstream
"""
ODD = "docs/a,b:c%d e.md"  # ',' ':' and '%' mean something in workflow commands
RAW = "docs/raw\udcff.md"  # a name that is not UTF-8 (byte 0xff)
ESC = "\x1b["


def findings_repo(tmp_path) -> Path:
    """A change with every kind of finding: errors with and without a line, a
    warning, a finding with no path, and odd file names."""
    repo = init_repo(tmp_path / "r")
    commit(
        repo,
        {
            ".oracle-guard.yaml": CONTRACT,
            "seeds/a.json": [1, 2],
            "oracle/flake_budget.yaml": BUDGET,
            "src/a.py": "",
        },
    )
    stage(repo, {"seeds/a.json": [2, 1], "oracle/x.json": "{}\n", ODD: "x\n", RAW: "y\n"})
    return repo


def clean_repo(tmp_path) -> Path:
    repo = init_repo(tmp_path / "r")
    commit(
        repo,
        {
            ".oracle-guard.yaml": CONTRACT,
            "seeds/a.json": [1, 2],
            "corpus/b.json": [1],
            "src/a.py": "",
        },
    )
    stage(repo, {"src/a.py": "x = 1\n"})
    return repo


def sarif_errors(doc) -> list:
    SARIF_SCHEMA = conformance.json_document(conformance.SARIF_SCHEMA)
    validator_class = jsonschema.validators.validator_for(SARIF_SCHEMA)
    assert validator_class is jsonschema.Draft4Validator  # what the schema declares
    validator_class.check_schema(SARIF_SCHEMA)
    return sorted(validator_class(SARIF_SCHEMA).iter_errors(doc), key=str)


def code_scanning_problems(doc) -> list:
    """What GitHub's code scanning asks of a SARIF file beyond the schema ("SARIF
    support for code scanning"): each rule's shortDescription and
    fullDescription; a startLine on every result's location, from which
    upload-sarif computes the fingerprint that keeps an alert from repeating;
    partialFingerprints; every uriBaseId declared in originalUriBaseIds; at most
    25,000 results a run."""
    problems = []
    for run in doc["runs"]:
        for rule in run["tool"]["driver"].get("rules", []):
            for key in ("shortDescription", "fullDescription"):
                if not rule.get(key, {}).get("text"):
                    problems.append(f"rule {rule['id']}: no {key}")
        bases = run.get("originalUriBaseIds", {})
        results = run.get("results", [])
        if len(results) > 25_000:
            problems.append(f"{len(results)} results, over 25,000")
        for i, result in enumerate(results):
            physical = result["locations"][0]["physicalLocation"]
            if not physical.get("region", {}).get("startLine"):
                problems.append(f"result {i}: no region.startLine")
            if not result.get("partialFingerprints"):
                problems.append(f"result {i}: no partialFingerprints")
            base = physical["artifactLocation"].get("uriBaseId")
            if base is not None and base not in bases:
                problems.append(f"result {i}: {base} not in originalUriBaseIds")
    return problems


# -- SARIF -------------------------------------------------------------------------------


@needs_sarif_schema
def test_sarif_of_a_real_check_validates_against_the_sarif_schema(tmp_path, capsys):
    repo = findings_repo(tmp_path)
    rc, out, err = run_guard(capsys, repo, "check", "--format", "sarif", "--now", NOW)
    assert (rc, err) == (1, "")
    doc = json.loads(out)
    assert sarif_errors(doc) == []
    assert doc["version"] == "2.1.0" and len(doc["runs"]) == 1
    run = doc["runs"][0]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("oracle-guard", __version__)
    assert [r["id"] for r in driver["rules"]] == list(CODES)
    for rule in driver["rules"]:
        info = CODES[rule["id"]]
        assert rule["shortDescription"]["text"] == info.meaning
        assert (
            rule["fullDescription"]["text"]
            == f"{info.meaning} (raised by {info.hook}). Fix: {info.fix}"
        )
        assert rule["help"]["text"] == info.fix
        assert rule["properties"]["hook"] == info.hook
    assert run["invocations"] == [{"executionSuccessful": True, "exitCode": 1}]
    got = [
        (
            r["ruleId"],
            r["level"],
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"].get("region"),
        )
        for r in run["results"]
    ]
    assert got == [
        # no path: shown at the contract's first line, which names what is missing
        ("oracle-incomplete", "error", ".oracle-guard.yaml", {"startLine": 1}),
        ("seed-reordered", "error", "seeds/a.json", {"startLine": 2}),
        ("budget-expiring", "warning", "oracle/flake_budget.yaml", {"startLine": 3}),
        # a whole file: its first line, so code scanning can fingerprint it
        ("write-outside-set", "error", "docs/a%2Cb%3Ac%25d%20e.md", {"startLine": 1}),
        ("write-outside-set", "error", "docs/raw%FF.md", {"startLine": 1}),
        ("write-denied", "error", "oracle/x.json", {"startLine": 1}),
        ("write-denied", "error", "seeds/a.json", {"startLine": 1}),
    ]
    assert code_scanning_problems(doc) == []
    for result in run["results"]:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["message"]["text"]
    assert run["properties"]["checks"]["flake-budget"] == {
        "status": "passed",
        "errors": 0,
        "warnings": 1,
        "note": None,
    }
    assert run["properties"]["now"] == "2026-09-25T00:00:00+00:00"


@needs_sarif_schema
def test_sarif_uris_are_escaped_repo_relative_paths(tmp_path, capsys):
    repo = findings_repo(tmp_path)
    rc, out, _ = run_guard(
        capsys, repo, "check", "--format", "sarif", "--only", "write-set", "--now", NOW
    )
    assert rc == 1
    doc = json.loads(out)
    assert sarif_errors(doc) == []
    uris = [
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in doc["runs"][0]["results"]
    ]
    assert uris == ["docs/a%2Cb%3Ac%25d%20e.md", "docs/raw%FF.md", "oracle/x.json", "seeds/a.json"]
    for uri in uris:
        # a relative reference of RFC 3986 characters only, no scheme
        assert re.fullmatch(r"[A-Za-z0-9\-._~/%!$&'()*+,;=@]+", uri), uri
    assert [unquote_to_bytes(u) for u in uris[:2]] == [
        ODD.encode(),
        RAW.encode("utf-8", "surrogateescape"),
    ]


@needs_sarif_schema
def test_the_sarif_validator_is_not_vacuous(tmp_path, capsys):
    repo = findings_repo(tmp_path)
    _, out, _ = run_guard(capsys, repo, "check", "--format", "sarif", "--now", NOW)
    bad_level = json.loads(out)
    bad_level["runs"][0]["results"][0]["level"] = "fatal"
    no_name = json.loads(out)
    del no_name["runs"][0]["tool"]["driver"]["name"]
    bad_line = json.loads(out)
    bad_line["runs"][0]["results"][1]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    for doc in (bad_level, no_name, bad_line):
        assert sarif_errors(doc)


def test_the_code_scanning_rules_are_not_vacuous(tmp_path, capsys):
    # each piece code scanning needs, taken out of a good report, is found missing
    repo = findings_repo(tmp_path)
    _, out, _ = run_guard(capsys, repo, "check", "--format", "sarif", "--now", NOW)
    assert code_scanning_problems(json.loads(out)) == []
    no_full = json.loads(out)
    del no_full["runs"][0]["tool"]["driver"]["rules"][3]["fullDescription"]
    no_line = json.loads(out)
    del no_line["runs"][0]["results"][3]["locations"][0]["physicalLocation"]["region"]
    no_prints = json.loads(out)
    del no_prints["runs"][0]["results"][0]["partialFingerprints"]
    no_base = json.loads(out)
    del no_base["runs"][0]["originalUriBaseIds"]
    too_many = json.loads(out)
    too_many["runs"][0]["results"] *= 25_001 // len(too_many["runs"][0]["results"]) + 1
    for doc in (no_full, no_line, no_prints, no_base, too_many):
        assert code_scanning_problems(doc)


def sarif_of(findings) -> dict:
    from oracle_guard.report.sarif import render_sarif

    return json.loads(render_sarif([HookResult("write-set", findings)], exit_code=1))


def fingerprints(doc) -> list:
    return [r["partialFingerprints"]["oracleGuard/v1"] for r in doc["runs"][0]["results"]]


def test_sarif_fingerprints_name_a_finding_not_its_line_or_run():
    finding = Finding("write-set", "write-denied", "oracle/x.json", "oracle/x.json is denied")
    moved = finding._replace(line=7)
    other = finding._replace(path="oracle/y.json")
    (once,) = fingerprints(sarif_of([finding]))
    assert fingerprints(sarif_of([moved])) == [once]  # a line added above moves no alert
    assert fingerprints(sarif_of([other])) != [once]
    # two findings equal but for the line are two alerts
    twins = fingerprints(sarif_of([finding._replace(line=1), finding._replace(line=2)]))
    assert len(set(twins)) == 2 and once in twins
    assert all(re.fullmatch(r"[0-9a-f]{64}", f) for f in twins)


def many_findings(errors: int, warnings: int) -> list:
    return [
        Finding("write-set", "write-denied", f"oracle/{i}.json", "denied") for i in range(errors)
    ] + [
        Finding("write-set", "budget-expiring", f"q/{i}.yaml", "soon", 1, "warning")
        for i in range(warnings)
    ]


@needs_sarif_schema
@pytest.mark.slow("builds and validates a SARIF log of MAX_RESULTS results")
def test_sarif_past_the_cap_keeps_errors_first_and_says_what_it_left_out():
    from oracle_guard.report.sarif import MAX_RESULTS

    assert MAX_RESULTS < 25_000
    doc = sarif_of(many_findings(MAX_RESULTS - 10, 12_600))
    assert sarif_errors(doc) == [] and code_scanning_problems(doc) == []
    run = doc["runs"][0]
    assert len(run["results"]) == MAX_RESULTS
    levels = [r["level"] for r in run["results"]]
    assert levels.count("error") == MAX_RESULTS - 10 and levels.count("warning") == 10
    left = 12_600 - 10
    assert run["properties"]["omitted"] == {"results": left, "by_rule": {"budget-expiring": left}}
    (note,) = run["invocations"][0]["toolExecutionNotifications"]
    assert note["level"] == "warning"
    assert note["message"]["text"].startswith(
        f"{left} of {MAX_RESULTS - 10 + 12_600} results left out, over the cap of {MAX_RESULTS}"
    )
    assert note["message"]["text"].endswith(f": budget-expiring {left}")


@pytest.mark.slow("builds a SARIF log of MAX_RESULTS results")
def test_sarif_at_the_cap_leaves_nothing_out():
    from oracle_guard.report.sarif import MAX_RESULTS

    run = sarif_of(many_findings(MAX_RESULTS, 0))["runs"][0]
    assert len(run["results"]) == MAX_RESULTS
    assert "omitted" not in run["properties"]
    assert run["invocations"] == [{"executionSuccessful": True, "exitCode": 1}]


@needs_sarif_schema
def test_sarif_of_a_clean_run_has_an_empty_result_list(tmp_path, capsys):
    repo = clean_repo(tmp_path)
    rc, out, err = run_guard(capsys, repo, "check", "--format", "sarif", "--now", NOW)
    assert (rc, err) == (0, "")
    doc = json.loads(out)
    assert sarif_errors(doc) == []
    run = doc["runs"][0]
    assert run["results"] == []
    assert run["invocations"] == [{"executionSuccessful": True, "exitCode": 0}]


@needs_sarif_schema
@pytest.mark.parametrize("case", ["bad-base", "broken-contract", "not-a-repo"])
def test_sarif_on_an_error_is_a_failed_run_not_an_empty_one(tmp_path, capsys, monkeypatch, case):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    repo = clean_repo(tmp_path)
    args = ["check", "--format", "sarif", "--now", NOW]
    if case == "bad-base":
        args += ["--base", "no-such-revision"]
    elif case == "broken-contract":
        commit(repo, {".oracle-guard.yaml": "version: 1\nseed: []\n"})
    else:
        repo = tmp_path / "plain"
        repo.mkdir()
    rc, out, err = run_guard(capsys, repo, *args)
    assert rc == 2
    doc = json.loads(out)
    assert sarif_errors(doc) == []
    run = doc["runs"][0]
    assert "results" not in run  # absent: the tool produced no results, not "none found"
    (invocation,) = run["invocations"]
    assert invocation["executionSuccessful"] is False and invocation["exitCode"] == 2
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "error"
    assert err == f"oracle-guard: error: {note['message']['text']}\n"


@needs_sarif_schema
def test_lock_check_takes_the_machine_formats(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    contract = 'version: 1\nfixtures:\n  - lock: fx.lock\n    paths: ["fx/**"]\n'
    commit(
        repo,
        {".oracle-guard.yaml": contract, "fx/a.txt": "a\n", "fx.lock": "0" * 64 + "  fx/a.txt\n"},
    )
    rc, out, _ = run_guard(capsys, repo, "lock", "--check", "--format", "sarif", "--now", NOW)
    assert rc == 1
    doc = json.loads(out)
    assert sarif_errors(doc) == []
    assert [r["ruleId"] for r in doc["runs"][0]["results"]] == ["fixture-mismatch"]
    rc, out, _ = run_guard(capsys, repo, "lock", "--check", "--format", "github", "--now", NOW)
    assert rc == 1
    assert out.splitlines()[0].startswith(
        "::error file=fx/a.txt,title=oracle-guard fixture-mismatch::sha256 "
    )
    assert out.splitlines()[1] == "fixture-lock: failed (1 error)"
    assert out.splitlines()[2].startswith("hint: ") and len(out.splitlines()) == 3


# -- GitHub workflow commands ---------------------------------------------------------------


def parse_command(line: str):
    """The Actions runner's reading of a workflow command (actions/runner
    src/Runner.Common/ActionCommand.cs at 42fe3105e04e: TryParseV2, UnescapeProperty,
    UnescapeData), replayed: (command, properties, data)."""
    assert line.startswith("::")
    end = line.index("::", 2)
    info, data = line[2:end], line[end + 2 :]
    name, _, props = info.partition(" ")
    properties = {}
    for item in filter(None, props.strip().split(",")):
        key, sep, value = item.partition("=")
        if sep and key and value:
            for token, escaped in (
                ("\r", "%0D"),
                ("\n", "%0A"),
                (":", "%3A"),
                (",", "%2C"),
                ("%", "%25"),
            ):
                value = value.replace(escaped, token)
            properties[key] = value
    for token, escaped in (("\r", "%0D"), ("\n", "%0A"), ("%", "%25")):
        data = data.replace(escaped, token)
    return name, properties, data


def test_github_annotations_from_a_real_check(tmp_path, capsys):
    repo = findings_repo(tmp_path)
    rc, out, err = run_guard(capsys, repo, "check", "--format", "github", "--now", NOW)
    assert (rc, err) == (1, "")
    lines = out.splitlines()
    commands = [parse_command(line) for line in lines if line.startswith("::")]
    assert [
        (name, props.get("file"), props.get("line"), props["title"]) for name, props, _ in commands
    ] == [
        ("error", ".oracle-guard.yaml", None, "oracle-guard oracle-incomplete"),
        ("error", "seeds/a.json", "2", "oracle-guard seed-reordered"),
        ("warning", "oracle/flake_budget.yaml", "3", "oracle-guard budget-expiring"),
        ("error", ODD, None, "oracle-guard write-outside-set"),
        ("error", "docs/raw\\xff.md", None, "oracle-guard write-outside-set"),
        ("error", "oracle/x.json", None, "oracle-guard write-denied"),
        ("error", "seeds/a.json", None, "oracle-guard write-denied"),
    ]
    assert (
        "::error file=docs/a%2Cb%3Ac%25d e.md,title=oracle-guard write-outside-set::"
        "matches no allowed pattern of the write set" in lines
    )
    assert commands[1][2] == "element [0] moved: the base has 1 there, the candidate has 2"
    # then exactly the text format's summary and hint lines, for the log
    _, text, _ = run_guard(capsys, repo, "check", "--now", NOW)
    assert lines[len(commands) :] == text.splitlines()[len(commands) :]
    assert lines[-1].startswith("hint: ")


def test_github_escapes_newlines_and_percent_and_cannot_be_forged():
    path = "x,line=9,title=forged:a%2C\n::error::b.md"
    message = "first line\nsecond line\r\n::error file=forged::100% sure"
    f = Finding("write-set", "write-denied", path, message, line=7)
    line = github_command(f)
    assert "\n" not in line and "\r" not in line
    assert line == (
        "::error file=x%2Cline=9%2Ctitle=forged%3Aa%252C%0A%3A%3Aerror%3A%3Ab.md,"
        "line=7,title=oracle-guard write-denied::first line%0Asecond line%0D%0A"
        "::error file=forged::100%25 sure"
    )
    assert parse_command(line) == (
        "error",
        {"file": path, "line": "7", "title": "oracle-guard write-denied"},
        message,
    )


def test_github_warning_without_path_or_line():
    f = Finding("flake-budget", "budget-expiring", None, "'t' expires soon", severity="warning")
    assert github_command(f) == "::warning title=oracle-guard budget-expiring::'t' expires soon"
    out = render_github([HookResult("flake-budget", [f])])
    assert out.splitlines() == [github_command(f), "flake-budget: passed (1 warning)"]


def test_github_on_an_error_prints_an_error_command_too(tmp_path, capsys):
    repo = clean_repo(tmp_path)
    rc, out, err = run_guard(
        capsys, repo, "check", "--format", "github", "--base", "nope", "--now", NOW
    )
    assert rc == 2
    (line,) = out.splitlines()
    name, props, data = parse_command(line)
    assert (name, props) == ("error", {"title": "oracle-guard"})
    assert err == f"oracle-guard: error: {data}\n"


# -- colour ----------------------------------------------------------------------------------


def guard_env(**extra: str) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in REVISION_ENV + ("NO_COLOR", "FORCE_COLOR", "PRE_COMMIT_COLOR", "TERM")
    }
    env.update(GIT_ENV, **extra)
    return env


def guard_subprocess(repo: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """The real command line, stdout a pipe (not a terminal)."""
    return subprocess.run(
        [sys.executable, "-m", "oracle_guard", "check", "-C", str(repo), "--now", NOW, *args],
        env=guard_env(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=str(ROOT),
    )


@pytest.fixture(scope="module")
def colour_repo(tmp_path_factory):
    return findings_repo(tmp_path_factory.mktemp("colour"))


@pytest.fixture(scope="module")
def plain_text(colour_repo):
    proc = guard_subprocess(colour_repo)
    assert proc.returncode == 1 and ESC not in proc.stdout
    return proc.stdout


@pytest.mark.parametrize(
    ("env", "args", "coloured"),
    [
        ({}, [], False),  # a pipe is not a terminal
        ({"FORCE_COLOR": "1"}, [], True),
        ({"FORCE_COLOR": ""}, [], False),  # empty means unset
        ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, [], False),  # NO_COLOR wins
        ({"FORCE_COLOR": "1", "NO_COLOR": ""}, [], True),
        ({"PRE_COMMIT_COLOR": "always", "NO_COLOR": "1"}, [], True),  # pre-commit's word first
        ({"PRE_COMMIT_COLOR": "never", "FORCE_COLOR": "1"}, [], False),
        ({"PRE_COMMIT_COLOR": "auto"}, [], False),
        ({"PRE_COMMIT_COLOR": "auto", "FORCE_COLOR": "1"}, [], True),
        ({"NO_COLOR": "1", "PRE_COMMIT_COLOR": "never"}, ["--color", "always"], True),  # flag wins
        ({"FORCE_COLOR": "1", "PRE_COMMIT_COLOR": "always"}, ["--color", "never"], False),
        ({}, ["--color", "auto"], False),
    ],
)
def test_colour_rules(colour_repo, plain_text, env, args, coloured):
    proc = guard_subprocess(colour_repo, *args, **env)
    assert proc.returncode == 1, proc.stderr
    assert (ESC in proc.stdout) == coloured, proc.stdout
    assert re.sub(r"\x1b\[[0-9;]*m", "", proc.stdout) == plain_text


def test_colour_styles_code_path_and_summary(colour_repo):
    out = guard_subprocess(colour_repo, "--color", "always").stdout
    lines = out.splitlines()
    assert "\x1b[1mseeds/a.json:2\x1b[0m: \x1b[1;31mseed-reordered\x1b[0m: element [0] moved" in out
    assert (
        "\x1b[1moracle/flake_budget.yaml:3\x1b[0m: \x1b[1;33mbudget-expiring (warning)\x1b[0m: "
    ) in out
    assert "seed-append-only: \x1b[31mfailed\x1b[0m (2 errors)" in lines
    assert "freeze-schema: \x1b[32mpassed\x1b[0m" in lines


@pytest.mark.parametrize("fmt", ["json", "github", "sarif"])
def test_machine_formats_are_never_coloured(colour_repo, fmt):
    proc = guard_subprocess(
        colour_repo,
        "--format",
        fmt,
        "--color",
        "always",
        FORCE_COLOR="1",
        PRE_COMMIT_COLOR="always",
    )
    assert proc.returncode == 1, proc.stderr
    assert ESC not in proc.stdout
    if fmt != "github":
        json.loads(proc.stdout)


@pytest.mark.parametrize(
    ("env", "coloured"),
    [
        ({}, True),
        ({"NO_COLOR": "1"}, False),
        ({"TERM": "dumb"}, False),
        ({"PRE_COMMIT_COLOR": "never"}, False),
    ],
)
def test_a_terminal_gets_colour_by_default(colour_repo, env, coloured):
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "oracle_guard", "check", "-C", str(colour_repo), "--now", NOW],
            env=guard_env(**env),
            stdout=follower,
            stderr=subprocess.PIPE,
            cwd=str(ROOT),
        )
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the terminal's other side closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert proc.wait(timeout=60) == 1, proc.stderr.read()
        proc.stderr.close()
    finally:
        os.close(leader)
    out = b"".join(chunks).decode()
    assert (ESC in out) == coloured, out
    assert "seed-reordered" in out


def test_colour_wanted_reads_only_what_it_is_given():
    class Tty:
        def isatty(self):
            return True

    class Closed:
        def isatty(self):
            raise ValueError("I/O operation on closed file")

    assert colour_wanted("auto", {}, Tty()) is True
    assert colour_wanted("auto", {"TERM": "dumb"}, Tty()) is False
    assert colour_wanted("auto", {"FORCE_COLOR": "1", "TERM": "dumb"}, Tty()) is True
    assert colour_wanted("auto", {}, Closed()) is False
    assert colour_wanted("always", {"NO_COLOR": "1"}, Closed()) is True


# -- text a CI log could read as a command ---------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "github"])
def test_no_file_name_turns_a_printed_line_into_a_runner_command(tmp_path, capsys, fmt):
    """GitHub's runner acts on a line starting '::' and on '##[' anywhere: a path at
    the start of a text line, or a name inside a message, must not be either."""
    repo = init_repo(tmp_path / "r")
    commit(repo, {".oracle-guard.yaml": "version: 1\nwrite_set:\n  allow: ['src/**']\n"})
    names = ["::error title=x::forged", "a ##[error]forged", "b\n::warning::forged\x1b[2J"]
    stage(repo, {name: "x\n" for name in names})
    rc, out, _ = run_guard(capsys, repo, "check", "--now", NOW, "--format", fmt)
    assert rc == 1
    lines = out.splitlines()
    commands = [line for line in lines if line.startswith("::")]
    assert len(commands) == (3 if fmt == "github" else 0), out  # only our own annotations
    assert all(line.startswith("::error file=") for line in commands)
    assert not any("##[" in line for line in lines if not line.startswith("::")), out
    if fmt == "text":  # (an annotation's file= is the path git holds, escaped GitHub's way)
        assert "\x1b" not in out
        assert "./::error title=x::forged: write-outside-set:" in out
        assert "a ##\\[error]forged: write-outside-set:" in out


def test_a_near_miss_name_prints_as_it_is(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    commit(repo, {".oracle-guard.yaml": "version: 1\nwrite_set:\n  allow: ['src/**']\n"})
    stage(repo, {"docs/a:b #[c].md": "x\n"})
    rc, out, _ = run_guard(capsys, repo, "check", "--now", NOW)
    assert rc == 1
    assert out.startswith("docs/a:b #[c].md: write-outside-set:"), out
