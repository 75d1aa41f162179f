"""The documentation site: it builds strictly and offline, its links resolve,
its reference pages come from the code, and every shell example in it runs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace
from typing import List

import pytest

from testing import docs
from testing.docs import ROOT

# a proxy that refuses: a build that reaches for the network fails instead
OFFLINE = {"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9"}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    env = {
        "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
        "HOME": str(out),
        "LANG": "C.UTF-8",
        "NO_MKDOCS_2_WARNING": "1",
        **OFFLINE,
    }
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out / "site")],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout
    return out / "site"


def html(site: Path, page: str) -> str:
    return (site / page / "index.html").read_text(encoding="utf-8")


def ids(text: str) -> set:
    return set(re.findall(r'\bid="([^"]+)"', text))


# -- generated from the code -----------------------------------------------------------------


def test_every_finding_code_has_its_entry_on_the_codes_page(site):
    from oracle_guard.checks.codes import CODES

    page = html(site, "reference/codes")
    missing = set(CODES) - ids(page)
    assert not missing, missing
    for info in CODES.values():  # meaning and fix as `oracle-guard explain` gives them
        assert html_text(info.meaning) in page and html_text(info.fix) in page


def html_text(text: str) -> str:
    from html import escape

    return escape(" ".join(text.split()), quote=False)


def test_every_command_and_option_is_on_the_cli_page(site):
    from oracle_guard.cli import COMMANDS, build_parser

    page = html(site, "reference/cli")
    assert {f"oracle-guard-{name}" for name in COMMANDS} <= ids(page)
    for sub in build_parser()._subparsers._group_actions[0].choices.values():  # type: ignore[union-attr]
        for action in sub._actions:
            for option in set(action.option_strings) - {"-h", "--help"}:
                assert f"<code>{option}" in page, option


def test_every_contract_key_is_on_the_contract_page(site):
    schema = json.loads((ROOT / "schemas" / "contract.schema.json").read_text())
    page = ids(html(site, "reference/contract"))
    assert set(schema["properties"]) <= page


def test_every_check_is_in_the_checks_table(site):
    from oracle_guard.checks.registry import CHECKS

    page = html(site, "reference/checks")
    for check in CHECKS:
        assert html_text(check.question) in page, check.id


def test_the_limits_page_gives_each_default(site):
    from oracle_guard.contract import LIMITS

    page = html(site, "reference/limits")
    for key, default in LIMITS.items():
        assert f"limits.{key}" in page and f"{default:,} bytes" in page


def test_a_marker_no_generator_knows_fails_the_build():
    sys.path.insert(0, str(ROOT / "docs" / "_generate"))
    try:
        import reference
    finally:
        sys.path.pop(0)
    page = SimpleNamespace(file=SimpleNamespace(src_path="reference/x.md"))
    assert reference.on_page_markdown("a\n<!-- generated: limits -->\n", page, None, None) != (
        "a\n<!-- generated: limits -->\n"
    )
    with pytest.raises(ValueError, match="reference/x.md: no generator named 'nothing'"):
        reference.on_page_markdown("<!-- generated: nothing -->\n", page, None, None)


def generator_module():
    sys.path.insert(0, str(ROOT / "docs" / "_generate"))
    try:
        import reference
    finally:
        sys.path.pop(0)
    return reference


def empty_tables(markdown: str) -> List[str]:
    """The header line of each table that has no row: a run of lines starting
    with '|' (outside fenced code) with no separator line, or nothing below it."""
    found, block, fenced = [], [], False
    for line in markdown.splitlines() + [""]:
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not fenced and line.lstrip().startswith("|"):
            block.append(line.strip())
            continue
        if block and (
            len(block) < 3 or not re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", block[1].replace(" ", ""))
        ):
            found.append(block[0])
        block = []
    return found


def test_no_page_has_an_empty_table():
    reference = generator_module()
    empty = []
    for path in sorted((ROOT / "docs").rglob("*.md")):
        source = path.relative_to(ROOT / "docs").as_posix()
        page = SimpleNamespace(file=SimpleNamespace(src_path=source))
        text = reference.on_page_markdown(path.read_text(encoding="utf-8"), page, None, None)
        empty += [f"{source}: {header}" for header in empty_tables(text)]
    assert empty == []


def test_every_table_of_the_site_has_a_row(site):
    for page in site.rglob("*.html"):
        for table in re.findall(r"<table>.*?</table>", page.read_text(encoding="utf-8"), re.S):
            assert re.search(r"<tbody>\s*<tr>", table), f"{page.relative_to(site)}: {table[:200]}"


@pytest.mark.parametrize(
    "markdown",
    [
        "text\n\n| job | oracle-guard | reference |\n\nmore\n",  # the page's old form
        "| a | b |\n|---|---|\n",
        "| a | b |\n|---|---|\n\n| c | d |\n",
    ],
)
def test_an_empty_table_is_found(markdown):
    assert empty_tables(markdown) != []


@pytest.mark.parametrize(
    "markdown",
    ["| a | b |\n|---|---|\n| 1 | 2 |\n", "```text\n| a |\n```\n", "| a |\n| :-: |\n| 1 |\n"],
)
def test_a_table_with_rows_is_not_empty(markdown):
    assert empty_tables(markdown) == []


def test_the_performance_tables_come_from_the_recorded_runs(site):
    import html as entities

    page = html(site, "explanation/performance")
    text = entities.unescape(re.sub(r"<[^>]+>", "", page))
    goals = json.loads((ROOT / "benchmarks" / "results" / "goals.json").read_text())
    assert goals["benchmark"] == "benchmarks/bench_goals.py" and goals["quick"] is False
    for row in goals["rows"]:
        assert 1 <= len(row["ours"]) == len(row["theirs"]) <= goals["runs"]
        assert row["job"] in text, row["job"]
    readers = json.loads((ROOT / "benchmarks" / "results" / "pack_readers.json").read_text())
    assert "pygit2" in page and len(readers["rows"]) == 4


def test_a_recorded_run_without_rows_fails_the_build(tmp_path, monkeypatch):
    reference = generator_module()
    (tmp_path / "goals.json").write_text('{"rows": []}')
    monkeypatch.setattr(reference, "RESULTS", tmp_path)
    with pytest.raises(ValueError, match="benchmarks/results/goals.json records no rows"):
        reference.benchmark_goals("explanation")


# -- links ------------------------------------------------------------------------------------


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: List[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.hrefs.append(value)


def broken_link(source: Path, href: str, anchors) -> str:
    """Why the relative link ``href`` of ``source`` leads nowhere ('' when it
    resolves). ``anchors(target)`` is the ids a target has, None for a file whose
    anchors are not checked."""
    path, _, anchor = href.partition("#")
    target = (source.parent / path).resolve() if path else source
    if target.is_dir() and source.suffix == ".html":
        target = target / "index.html"  # the site's page for that folder
    if not target.exists():
        return href
    known = anchors(target)
    if anchor and known is not None and anchor not in known:
        return f"{href} (no such anchor)"
    return ""


def html_ids(target: Path):
    return ids(target.read_text(encoding="utf-8")) if target.suffix == ".html" else None


def test_every_link_of_the_site_resolves_offline(site):
    broken = []
    for page in site.rglob("*.html"):
        if page.name == "404.html":
            continue  # served at any path, so its links are from the root
        parser = Links()
        parser.feed(page.read_text(encoding="utf-8"))
        for href in parser.hrefs:
            if re.match(r"[a-z]+:", href):
                if not href.startswith(("https://", "mailto:", "data:")):
                    broken.append(f"{page.relative_to(site)}: {href} (not https)")
            elif reason := broken_link(page, href, html_ids):
                broken.append(f"{page.relative_to(site)}: {reason}")
    assert not broken, "\n".join(broken)


def test_the_sitemap_names_every_page_at_the_site_url(site):
    import xml.etree.ElementTree as ET

    import yaml

    base = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["site_url"]
    spaces = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locs = [e.text for e in ET.parse(site / "sitemap.xml").getroot().findall("s:url/s:loc", spaces)]
    pages = {
        base + "".join(f"{part}/" for part in p.parent.relative_to(site).parts)
        for p in site.rglob("index.html")
    }
    assert locs and set(locs) == pages, sorted(set(locs) ^ pages)


def test_the_site_asks_no_font_or_script_service(site):
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert "fonts.googleapis" not in text and "fonts.gstatic" not in text, page


def heading_slugs(markdown: str) -> set:
    from markdown.extensions.toc import slugify

    return {slugify(h.strip("` "), "-") for h in re.findall(r"^#+ (.+)$", markdown, re.M)}


def markdown_links(markdown: str) -> List[str]:
    without_code = re.sub(r"```.*?```", "", markdown, flags=re.S)
    return re.findall(r"\]\(([^)\s]+)\)", without_code)


def markdown_anchors(target: Path):
    if target.suffix != ".md":
        return None
    return heading_slugs(target.read_text(encoding="utf-8"))


def test_every_relative_link_of_the_top_level_documents_resolves():
    broken = []
    for name in ("README.md", "CONTRIBUTING.md", "CHANGELOG.md", "templates/README.md"):
        source = ROOT / name
        for href in markdown_links(source.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", href):
                continue
            if reason := broken_link(source, href, markdown_anchors):
                broken.append(f"{name}: {reason}")
    assert not broken, "\n".join(broken)


def test_a_link_to_a_missing_file_or_heading_is_named(tmp_path):
    source = tmp_path / "a.md"
    source.write_text("# A\n\n## Some heading\n")
    assert broken_link(source, "a.md#some-heading", markdown_anchors) == ""
    assert broken_link(source, "#some-heading", markdown_anchors) == ""
    assert broken_link(source, "a.md#other", markdown_anchors) == "a.md#other (no such anchor)"
    assert broken_link(source, "b.md", markdown_anchors) == "b.md"
    assert broken_link(source, "./", markdown_anchors) == ""  # a folder GitHub lists


# -- fenced blocks and console sessions ------------------------------------------------------


def test_every_fenced_block_is_run_output_or_a_file_that_parses():
    tests_source = docs.tested_files()
    problems = []
    for path in [*docs.pages(), ROOT / "README.md"]:
        for block in docs.blocks(path):
            if path.name == "README.md" and block.body.strip() in docs.quick_start():
                continue  # run by .ci/run and test_the_quick_start_demo_runs_in_a_clone
            problems += docs.block_problems(block, tests_source)
    assert not problems, "\n".join(problems)


def block(language: str, body: str) -> docs.Block:
    return docs.Block("docs/x.md", 3, language, body)


@pytest.mark.parametrize(
    "language, body, problem",
    [
        ("sh", "git push\n", "a ```sh block runs nowhere"),
        ("bash", "git push\n", "a ```bash block: use console"),
        ("", "git push\n", "a ``` block: use console"),
        ("yaml", "a: [\n", "the yaml block does not parse"),
        ("yaml", "version: 1\nbogus: 1\n", "the yaml block does not parse"),
        ("json", "{'a': 1}\n", "the json block does not parse"),
        ("toml", "a = \n", "the toml block does not parse"),
        ("sh", '--8<-- "examples/nothing.sh"\n', "not a file of the repository"),
        ("sh", '--8<-- "README.md"\n', "which no test under tests/ names"),
    ],
)
def test_a_block_that_breaks_the_rules_is_named(language, body, problem):
    (found,) = docs.block_problems(block(language, body), tests_source="tests name nothing")
    assert found.startswith("docs/x.md:3: ") and problem in found, found


@pytest.mark.parametrize(
    "language, body",
    [
        ("console", "$ true\n"),
        ("text", "anything at all [\n"),
        ("yaml", "a: [1]\n"),
        ("yaml", "version: 1\n"),  # a contract: the loader takes it
        ("json", '{"a": 1}\n'),
        ("toml", "a = 1\n"),
        ("sh", '--8<-- "examples/ci/plain.sh"\n'),
    ],
)
def test_a_block_that_keeps_the_rules_passes(language, body):
    assert docs.block_problems(block(language, body), docs.tested_files()) == []


def test_a_console_block_reads_commands_continuations_heredocs_and_output():
    body = (
        "$ echo one \\\n  two\none two\n$ cat > f <<'EOF'\n$ not a command\nEOF\n"
        "$ cat f\nnot a command\n"
    )
    parsed = docs.commands(block("console", body))
    assert [c.text for c in parsed] == [
        "echo one \\\n  two",
        "cat > f <<'EOF'\n$ not a command\nEOF",
        "cat f",
    ]
    assert [c.expected for c in parsed] == [["one two"], [], ["not a command"]]
    with pytest.raises(AssertionError, match=r"docs/x.md:4: a console block starts with"):
        docs.commands(block("console", "output first\n$ true\n"))


@pytest.mark.parametrize(
    "expected, printed, same",
    [
        (["a", "b"], ["a", "b"], True),
        (["a", "b", ""], ["a", "b"], True),
        (["a", "b"], ["a", "c"], False),
        (["a"], ["a", "b"], False),
        (["a", "...", "d"], ["a", "b", "c", "d"], True),
        (["a", "...", "d"], ["a", "d"], True),
        (["a", "...", "d"], ["a", "b", "c"], False),
        (["..."], [], True),
    ],
)
def test_output_matches_line_for_line_with_an_ellipsis(expected, printed, same):
    assert docs.matches(expected, printed) is same


SESSIONS = [p for p in docs.pages() if any(b.language == "console" for b in docs.blocks(p))]


@pytest.mark.parametrize("page", SESSIONS, ids=[str(p.relative_to(ROOT)) for p in SESSIONS])
def test_every_console_session_prints_what_the_page_shows(page):
    differ = []
    with docs.page_home(page) as home:
        ran = docs.run_session(page, home)
    for command, printed in ran:
        if not docs.matches(command.expected, printed):
            differ.append(
                f"{page.relative_to(ROOT)}:{command.line}: $ {command.text}\n"
                + "--- the page shows\n"
                + "\n".join(command.expected)
                + "\n--- it printed\n"
                + "\n".join(printed)
            )
    assert not differ, "\n\n".join(differ)


# the README's reader is in a repository of their own: the harness example's files
README_SESSION = {"work_from_example": "harness", "programs": ["oracle-guard", "pre-commit"]}


def test_the_readme_console_blocks_print_what_it_shows():
    readme = ROOT / "README.md"
    assert any(b.language == "console" for b in docs.blocks(readme))
    with docs.page_home(readme) as home:
        ran = docs.run_session(readme, home, settings=README_SESSION)
    for command, printed in ran:
        assert docs.matches(command.expected, printed), (command, printed)


def test_a_session_that_prints_something_else_is_caught(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```console\n$ echo one\ntwo\n$ cd /\n$ pwd\n/\n```\n")
    (echo, printed), (cd, _), (pwd, where) = docs.run_session(page, tmp_path / "home")
    assert printed == ["one"] and not docs.matches(echo.expected, printed)
    assert docs.matches(pwd.expected, where)  # one shell: the cd carried over


def test_the_quick_start_demo_runs_in_a_clone(tmp_path):
    """The README's first command, as a reader runs it: in a clone, a new venv,
    `pip install .`, the demo (the second command is the one .ci/run runs)."""
    from testing.checkout import snapshot_checkout

    demo, tests = docs.quick_start()
    clone, _ = snapshot_checkout(tmp_path / "oracle-guard")
    home = tmp_path / "home"
    home.mkdir()
    env = dict(docs.session_environment(home, programs=()), PATH="/usr/local/bin:/usr/bin:/bin")
    proc = subprocess.run(
        ["bash", "-c", demo],
        cwd=clone,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
    last = "Every honest change passed and every move of the goalposts was caught."
    assert proc.stdout.rstrip().endswith(last), proc.stdout[-3000:]
    assert "pytest" in tests and "'.[test]'" in tests


# -- the README's claims that the repository can check -----------------------------------


README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_action_and_component_lines_are_the_shipped_ones():
    (uses,) = re.findall(r"^ *- uses: .*$", README, re.M)
    gate = (ROOT / "examples" / "ci" / "github-action-gate.yml").read_text()
    assert uses in gate.splitlines()
    (component,) = re.findall(r"^ *- component: .*$", README, re.M)
    assert component in (ROOT / "templates" / "README.md").read_text().splitlines()


def test_every_version_the_readme_names_is_this_one():
    from oracle_guard import __version__

    named = set(re.findall(r"\bv(\d+\.\d+\.\d+)\b", README))
    assert named == {__version__}


def test_the_docs_extra_the_readme_names_installs_the_site_tools():
    import configparser

    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    extra = config["options.extras_require"]["docs"]
    assert "pip install '.[docs]' && mkdocs serve" in README
    assert "mkdocs" in extra and "mkdocs-material" in extra


def test_a_page_can_be_rewritten_with_what_its_sessions_print(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("text\n\n```console\n$ echo one\ntwo\nthree\n$ echo four\nfour\n```\n")
    ran = docs.run_session(page, tmp_path / "home")
    assert docs.rewrite_outputs(page, ran) == 1
    assert page.read_text() == "text\n\n```console\n$ echo one\none\n$ echo four\nfour\n```\n"


def test_a_page_names_its_session_settings_in_a_comment_on_its_first_line(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("<!-- console: {programs: [oracle-guard]} -->\n# Page\n")
    assert docs.session_settings(page) == {"programs": ["oracle-guard"]}
    page.write_text("# Page\n<!-- console: {programs: [oracle-guard]} -->\n")
    assert docs.session_settings(page) == {}  # only the first line counts
    page.write_text("<!-- console: {oracle_guard_clones: true} -->\n")
    with pytest.raises(AssertionError, match=r"page.md:1: unknown console settings"):
        docs.session_settings(page)
