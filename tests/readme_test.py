"""The reference pages, the manifest, the CLI and the codes stay in step (the
README's Quick start too)."""

import json
import re
import subprocess
from pathlib import Path

import yaml

from oracle_guard.checks.codes import CODES, NOT_FROM_A_CHECK, SCORE_CODES
from oracle_guard.checks.registry import CHECKS, HOOKS
from oracle_guard.cli import build_parser
from testing import docs

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def page(name: str) -> str:
    return (ROOT / "docs" / "reference" / name).read_text(encoding="utf-8")


def test_every_check_has_its_section_linking_its_codes():
    """docs/reference/checks.md: a section per check that links each of its codes."""
    checks = page("checks.md")
    sections = dict(re.findall(r"^## ([a-z-]+)\n(.*?)(?=^## |\Z)", checks, re.M | re.S))
    assert [hook for hook in sections if hook in HOOKS] == list(HOOKS)
    for check in CHECKS:
        for doc in check.codes:
            assert f"(codes.md#{doc.code})" in sections[check.id], (check.id, doc.code)
    for code in NOT_FROM_A_CHECK:
        assert f"(codes.md#{code})" in checks, code
    assert "`oracle-guard`" in checks  # the single hook id that runs them all


def test_every_code_linked_from_the_reference_exists():
    linked = set()
    for name in ("checks.md", "contract.md", "cli.md", "codes.md"):
        linked |= set(re.findall(r"\(codes\.md#([a-z-]+)\)", page(name)))
    assert linked - {"exit-codes", "text-output", "names-are-printed-safely"} <= set(CODES)


def check_source(check) -> str:
    """A check's module, and the modules of hooks/checks/ it imports (what two
    checks share, such as freeze_files)."""
    name = check.module_name.rsplit(".", 1)[1]
    package = ROOT / "hooks" / "checks" / name
    if package.is_dir():  # a check of several modules: all of them
        source = "".join(p.read_text() for p in sorted(package.glob("*.py")))
    else:
        source = (ROOT / "hooks" / "checks" / f"{name}.py").read_text()
    for shared in re.findall(r"^from oracle_guard\.checks import (\w+)$", source, re.M):
        source += (ROOT / "hooks" / "checks" / f"{shared}.py").read_text()
    return source


def test_every_code_is_emitted_by_its_hook_module():
    for check in CHECKS:
        for doc in check.codes:
            assert f'"{doc.code}"' in check_source(check), (doc.code, check.id)
    for code, info in NOT_FROM_A_CHECK.items():
        if info.hook == "pre-receive":
            source = (ROOT / "hooks" / "push.py").read_text()  # how pre-receive judges a ref
        else:  # write-set's rules on each commit of a range
            assert info.hook == "write-set", code
            source = (ROOT / "hooks" / "authority" / "history.py").read_text()
            source += (ROOT / "hooks" / "authority" / "signatures.py").read_text()
            source += (ROOT / "hooks" / "check_run.py").read_text()  # merge-conflict
            source += (ROOT / "hooks" / "judge.py").read_text()  # the next contract's
        assert f'"{code}"' in source, (code, info.hook)
    verdict = (ROOT / "hooks" / "scoring" / "verdict.py").read_text()
    verdict += (ROOT / "hooks" / "scoring" / "replay.py").read_text()
    for code, info in SCORE_CODES.items():  # raised by score's verdict, or its replays
        assert info.hook == "score" and f'"{code}"' in verdict, code


def test_the_registry_lists_every_hook_once():
    # the docs' checks table is generated from CHECKS, so CHECKS must be the hooks, in order
    assert [check.id for check in CHECKS] == list(HOOKS)
    assert {code for check in CHECKS for code in (d.code for d in check.codes)} | set(
        NOT_FROM_A_CHECK
    ) | set(SCORE_CODES) == set(CODES)


def test_manifest_matches_the_hooks_the_cli_knows():
    manifest = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    ids = [hook["id"] for hook in manifest]
    assert ids == list(HOOKS) + ["oracle-guard"]
    for hook in manifest:
        assert hook["language"] == "python"
        assert hook["pass_filenames"] is False
        assert hook["always_run"] is True
        assert hook["require_serial"] is True
        assert hook["stages"] == ["pre-commit", "pre-push", "manual"]
        expected = "oracle-guard check" + (
            "" if hook["id"] == "oracle-guard" else f" --only {hook['id']}"
        )
        assert hook["entry"] == expected


def test_only_accepts_exactly_the_manifest_ids():
    parser = build_parser()
    for hook in HOOKS:
        assert parser.parse_args(["check", "--only", hook]).only == [hook]


def test_ci_runs_the_readme_test_command():
    blocks = docs.quick_start()
    assert len(blocks) == 2, "Quick start is exactly two commands"
    demo, tests = blocks
    assert demo.endswith("oracle-guard demo") and "venv" in demo
    assert "'.[test]'" in tests and "pytest" in tests and "venv" in tests
    extracted = subprocess.run(
        ["bash", "-c", "sed -n '/^test_command=/p' .ci/run"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    ).stdout
    assert "README.md" in extracted  # .ci/run reads the command from the README


def test_the_contract_reference_example_is_a_valid_contract():
    """docs/reference/contract.md's complete example loads and names every top-level key."""
    from oracle_guard.contract import parse

    page = (ROOT / "docs" / "reference" / "contract.md").read_text(encoding="utf-8")
    assert "\n<!-- generated: check-sections -->\n" in page
    section = docs.reference().expand(page, "reference/contract.md")
    section = section.split("\n## A complete example\n", 1)[1]
    example = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    data = parse(example.encode())
    schema = json.loads((ROOT / "schemas" / "contract.schema.json").read_text())
    # rules_ref stays a comment: set, it would change which contract judges a push
    assert set(data) == set(schema["properties"]) - {"rules_ref"}
    assert "\n# rules_ref: " in example


# How the code reads a variable: env.get("X"), environ.get("X"), env["X"] (not a write:
# env["X"] = ...), getenv("X"); a name read through a variable (the pusher's) is in hosts.py.
_READ = re.compile(
    r"""(?:\benv|\benviron)(?:\.get\(\s*"([A-Z][A-Z0-9_]*)"|\[\s*"([A-Z][A-Z0-9_]*)"\](?!\s*=[^=]))"""
    r'|getenv\(\s*"([A-Z][A-Z0-9_]*)"'
)


def variables_read(source: str) -> set:
    return {next(name for name in m.groups() if name) for m in _READ.finditer(source)}


def listed_variables() -> list:
    """The first column of docs/reference/environment.md's "Variables read" table."""
    page = (ROOT / "docs" / "reference" / "environment.md").read_text(encoding="utf-8")
    table = page.split("\n## Variables read\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([A-Z][A-Z0-9_]+)` \|", table, re.M)


def test_the_variables_read_pattern_finds_reads_not_writes():
    source = 'env.get("A") os.environ["B"] environ.get("C", "") os.getenv("D") env["E"] = "1"'
    assert variables_read(source) == {"A", "B", "C", "D"}
    assert variables_read('env["F"] == "x"') == {"F"}


def test_every_variable_read_is_listed_and_tested():
    """docs/reference/environment.md lists every variable the code reads, each is
    read by the code, and each has a test that sets it."""
    listed = listed_variables()
    assert "CI" in listed and "PRE_COMMIT_REMOTE_NAME" in listed, listed
    assert len(listed) == len(set(listed)), "a variable listed twice"
    code = "".join(p.read_text() for p in (ROOT / "hooks").rglob("*.py"))
    tests = "".join(
        p.read_text() for p in (ROOT / "tests").rglob("*.py") if p.name != "readme_test.py"
    )
    tests += (ROOT / "testing" / "scenarios.py").read_text()
    unlisted = variables_read(code) - set(listed)
    assert not unlisted, f"read by the code, not in docs/reference/environment.md: {unlisted}"
    for name in listed:
        assert f'"{name}"' in code, f"{name} is listed but not read"
        assert re.search(rf'"{name}"|\b{name}=', tests), f"no test sets {name}"
