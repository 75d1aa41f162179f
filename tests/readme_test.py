"""README, manifest, CLI and codes stay in step."""

import re
import subprocess
from pathlib import Path

import yaml

from oracle_guard.checks.codes import CODES, NOT_FROM_A_CHECK
from oracle_guard.checks.registry import CHECKS, HOOKS
from oracle_guard.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_hook_id_is_in_the_readme():
    for hook in HOOKS + ("oracle-guard",):
        assert f"`{hook}`" in README, hook


def test_every_code_has_a_row_in_the_readme_table():
    # the row says what `oracle-guard explain` says: meaning and fix word for word
    for code, info in CODES.items():
        row = f"| `{code}` | {info.hook} | {info.meaning} | {info.fix} |"
        assert row in README, f"README.md's findings table needs the row: {row}"


def test_every_code_in_the_readme_table_exists():
    rows = re.findall(r"^\| `([a-z-]+)` \| ([a-z-]+) \|", README, re.M)
    table = {code for code, hook in rows if hook in HOOKS + ("pre-receive",)}
    assert table == set(CODES)


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
            source = (ROOT / "hooks" / "commands" / "pre_receive.py").read_text()
        else:  # write-set's rules on each commit of a range
            assert info.hook == "write-set", code
            source = (ROOT / "hooks" / "authority" / "history.py").read_text()
            source += (ROOT / "hooks" / "authority" / "signatures.py").read_text()
            source += (ROOT / "hooks" / "commands" / "check.py").read_text()  # merge-conflict
        assert f'"{code}"' in source, (code, info.hook)


def test_the_readme_hook_table_is_the_registry():
    rows = re.findall(r"^\| `([a-z-]+)` \| ([^|]*\?) \|$", README, re.M)
    for check in CHECKS:
        assert f"| `{check.id}` | {check.question} |" in README, (
            f"README.md's hook table needs the row: | `{check.id}` | {check.question} |"
        )
    assert [hook for hook, _ in rows] == list(HOOKS)


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
    quick_start = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", quick_start, re.S)
    assert len(blocks) == 2, "Quick start is exactly two commands"
    demo, tests = (b.strip() for b in blocks)
    assert demo.endswith("oracle-guard demo") and "venv" in demo
    assert "'.[test]'" in tests and "pytest" in tests and "venv" in tests
    extracted = subprocess.run(
        ["bash", "-c", "sed -n '/^test_command=/p' .ci/run"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    ).stdout
    assert "README.md" in extracted  # .ci/run reads the command from the README


def test_the_readme_contract_reference_is_a_valid_contract():
    from oracle_guard.contract import parse

    section = README.split("## The contract", 1)[1]
    example = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    data = parse(example.encode())
    assert set(data) == {
        "version",
        "base",
        "fixtures",
        "seeds",
        "freeze",
        "budget",
        "write_set",
        "tamper",
        "authority",
        "protected_refs",
        "deletable_refs",
        "identity_env",
        "timeout_s",
        "limits",
    }


def test_every_variable_the_revision_model_lists_is_read_and_tested():
    """The README's list of variables read is the code's, and each has a test that sets it."""
    import re

    readme = (ROOT / "README.md").read_text()
    sentence = readme[readme.index("The variables read are ") :].split("\n", 1)[0]
    listed = re.findall(r"`([A-Z][A-Z0-9_]+)`", sentence)
    assert "CI" in listed and "PRE_COMMIT_REMOTE_NAME" in listed, listed
    code = "".join(p.read_text() for p in (ROOT / "hooks").rglob("*.py"))
    tests = "".join(
        p.read_text() for p in (ROOT / "tests").rglob("*.py") if p.name != "readme_test.py"
    )
    tests += (ROOT / "testing" / "scenarios.py").read_text()
    for name in listed:
        assert f'"{name}"' in code, f"{name} is listed but not read"
        assert re.search(rf'"{name}"|\b{name}=', tests), f"no test sets {name}"
