"""Adding a check touches its module, its registry entry (its Section in sections.py
and its Check in registry.py), its schema section, its docs page and its test, as
CONTRIBUTING.md's "Adding a check" says, and nothing else: in a copy of this
checkout, a tiny seventh check is added that way, the generators are run, and
the manifest, the README's table, the docs' tables and the contract page's
complete example, explain, check, the registry tests and the fault and scenario
tests that read the samples all take it in."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Dict, List

import pytest
import yaml

from oracle_guard.checks.registry import HOOKS
from testing import conformance
from testing.git import GIT_ENV, commit, git, init_repo

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
HOOK, SECTION, CODE = "keep-files", "keep", "kept-file-missing"

MODULE = '''"""keep-files: are the files the contract keeps still there?"""

from __future__ import annotations

import datetime
from typing import List

from oracle_guard.checks.sample import Sample
from oracle_guard.contract import Contract
from oracle_guard.findings import Finding
from oracle_guard.snapshot import Snapshot

SAMPLE = Sample(
    sections={"keep": {"paths": ["NOTICE"]}},
    files={"NOTICE": "kept\\n"},
    change={"NOTICE": None},
    finding="NOTICE: kept-file-missing",
    example="keep:                        # keep-files\\n  paths: [NOTICE]\\n",
)


def check(
    contract: Contract, base: Snapshot, candidate: Snapshot, now: datetime.datetime
) -> List[Finding]:
    return [
        Finding("keep-files", "kept-file-missing", path, "is gone: the contract keeps it")
        for path in contract.section("keep")["paths"]
        if path not in candidate
    ]
'''
ENTRY = """
KEEP_FILES = Check(
    KEEP,
    question="are the files the contract keeps still there?",
    codes=(
        CodeDoc(
            "kept-file-missing",
            "a file the keep section names is gone",
            "restore it (git checkout BASE -- PATH)",
            "NOTICE: kept-file-missing: is gone: the contract keeps it",
        ),
    ),
)
"""
SCHEMA = """    "keep": {
      "description": "files that must stay (the keep-files check)",
      "type": "object",
      "additionalProperties": false,
      "required": ["paths"],
      "properties": {"paths": {"type": "array", "items": {"type": "string"}}}
    },
"""
DOCS = """## keep-files

Each path of `keep.paths` must be in the candidate: [`kept-file-missing`](codes.md#kept-file-missing).

"""
TEST = """from testing.trees import MemoryRepo

CONTRACT = "version: 1\\nkeep:\\n  paths: [NOTICE]\\n"


def test_a_kept_file_removed_is_a_finding():
    repo = MemoryRepo()
    repo.commit({".oracle-guard.yaml": CONTRACT, "NOTICE": "x\\n"})
    repo.remove("NOTICE")
    rc, out, _ = repo.check("keep-files", now="2026-09-25")
    assert rc == 1 and "NOTICE: kept-file-missing" in out
    # near miss: kept, it passes
    repo.reset()
    assert repo.check("keep-files", now="2026-09-25")[0] == 0
"""
# what the steps write (the check's own files), and what the generators rewrite
OWN = {
    "hooks/checks/keep_files.py",
    "hooks/sections.py",
    "hooks/checks/registry.py",
    "schemas/contract.schema.json",
    "docs/reference/checks.md",
    "tests/keep_files_test.py",
}
GENERATED = {".pre-commit-hooks.yaml", "README.md", "hooks/_generated/validators.py"}


def edit(root: Path, path: str, old: str, new: str) -> None:
    file = root / path
    text = file.read_text(encoding="utf-8")
    assert text.count(old) == 1, (path, old)
    file.write_text(text.replace(old, new), encoding="utf-8")


def add_the_check(root: Path) -> None:
    """CONTRIBUTING.md's steps: the module, the registry entry, the schema section,
    the docs page's section, the test."""
    (root / "hooks/checks/keep_files.py").write_text(MODULE, encoding="utf-8")
    edit(
        root,
        "hooks/sections.py",
        "\n\nSECTIONS: Tuple[Section, ...] = (",
        '\nKEEP = Section("keep-files", "keep")\n\nSECTIONS: Tuple[Section, ...] = (',
    )
    edit(root, "hooks/sections.py", "WRITE_SET, TAMPER)", "WRITE_SET, TAMPER, KEEP)")
    edit(
        root,
        "hooks/checks/registry.py",
        "TAMPER, Section\n",
        "TAMPER, Section\nfrom oracle_guard.sections import KEEP\n",
    )
    edit(
        root,
        "hooks/checks/registry.py",
        "\nCHECKS: Tuple[Check, ...] = (\n",
        ENTRY + "\nCHECKS: Tuple[Check, ...] = (\n",
    )
    edit(
        root,
        "hooks/checks/registry.py",
        "    TEST_TAMPER,\n)",
        "    TEST_TAMPER,\n    KEEP_FILES,\n)",
    )
    edit(root, "schemas/contract.schema.json", '    "tamper": {\n', SCHEMA + '    "tamper": {\n')
    edit(root, "docs/reference/checks.md", "## Server-side codes", DOCS + "## Server-side codes")
    (root / "tests/keep_files_test.py").write_text(TEST, encoding="utf-8")


def site_of(root: Path) -> Path:
    """A folder whose oracle_guard is the copy's: its hooks/ and, as
    oracle_guard.schemas, its schemas/."""
    site = root.parent / "site"
    package = site / "oracle_guard"
    if not package.exists():
        package.mkdir(parents=True)
        for entry in (root / "hooks").iterdir():
            (package / entry.name).symlink_to(entry)
        (package / "schemas").symlink_to(root / "schemas")
    return site


def python_of(root: Path) -> Path:
    """An interpreter whose oracle_guard is the copy's, even under ``python -I`` (the
    pre-receive hook's): a venv whose .pth names site_of(root), then this venv's
    site-packages (as a folder: the editable install's finder stays out)."""
    venv = root.parent / "venv"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        purelib = subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            stdout=subprocess.PIPE,
            text=True,
            check=True,
        ).stdout.strip()
        ours = sysconfig.get_paths()["purelib"]
        Path(purelib, "copy.pth").write_text(f"{site_of(root)}\n{ours}\n", encoding="utf-8")
        for tool in ("pre-commit", "prek"):  # tests/manifest_test.py runs them beside python
            (venv / "bin" / tool).symlink_to(BIN / tool)
    return python


def run(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """``python -m ARGS`` (or ``python SCRIPT``) in the copy, with its oracle_guard."""
    python = str(python_of(root))
    command = [python, *args] if args[0].endswith(".py") else [python, "-m", *args]
    # the copy has no ../shared beside it: it reads this checkout's conformance data
    env = {
        **os.environ,
        **GIT_ENV,
        "PYTHONDONTWRITEBYTECODE": "1",
        conformance.ENV: str(conformance.folder().resolve()),
    }
    done = subprocess.run(
        command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    if check:
        assert done.returncode == 0, f"{args}:\n{done.stdout}"
    return done


def changed(root: Path) -> set:
    status = git(root, "status", "--porcelain", "-z", "--untracked-files=all")
    return {entry[3:] for entry in status.split("\0") if entry}


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Dict[str, object]:
    """This checkout's files, committed in a repository of their own, with the check
    added and the generators run; what each step reported."""
    root = tmp_path_factory.mktemp("added") / "checkout"  # and site/ beside it
    tracked = git(ROOT, "ls-files", "-z").split("\0")
    for path in filter(None, tracked):
        if (ROOT / path).is_file() or (ROOT / path).is_symlink():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / path, root / path, follow_symlinks=False)
    init_repo(root)
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-verify", "-m", "before")
    add_the_check(root)
    steps: Dict[str, object] = {"own": changed(root)}
    steps["stale"] = run(root, "oracle_guard.checks.manifest", "--check", check=False)
    run(root, "oracle_guard.parsing.codegen")
    run(root, "oracle_guard.checks.manifest")
    steps["after"] = changed(root)
    steps["root"] = root
    return steps


def test_the_steps_touch_only_the_checks_own_files_and_the_generators_the_rest(copy):
    assert copy["own"] == OWN
    stale = copy["stale"]
    assert stale.returncode == 1 and "python -m oracle_guard.checks.manifest" in stale.stdout
    assert copy["after"] == OWN | GENERATED
    assert run(copy["root"], "oracle_guard.checks.manifest", "--check").stdout == ""
    assert run(copy["root"], "oracle_guard.parsing.codegen", "--check").stdout == ""


def test_the_manifest_and_the_readme_list_it(copy):
    root: Path = copy["root"]
    hooks = yaml.safe_load((root / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert [hook["id"] for hook in hooks] == [*HOOKS, HOOK, "oracle-guard"]
    assert hooks[-2]["entry"] == f"oracle-guard check --only {HOOK}"
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert f"| `{HOOK}` | are the files the contract keeps still there? |" in readme
    # near miss: this checkout's manifest has no such hook
    assert HOOK not in (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")


def test_the_docs_tables_list_it(copy, tmp_path):
    script = tmp_path / "tables.py"
    script.write_text(
        "import importlib.util\n"
        "spec = importlib.util.spec_from_file_location('r', 'docs/_generate/reference.py')\n"
        "r = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(r)\n"
        "print(r.checks('reference'))\n"
        "print(r.codes('reference'))\n",
        encoding="utf-8",
    )
    tables = run(copy["root"], str(script)).stdout
    assert f"| `{HOOK}` | are the files the contract keeps still there? | `{SECTION}` |" in tables
    assert f"| [`{CODE}`](#{CODE}) | `{HOOK}` |" in tables


def test_explain_help_and_check_know_it(copy, tmp_path):
    root: Path = copy["root"]
    explained = run(root, "oracle_guard", "explain", CODE).stdout
    assert HOOK in explained and "a file the keep section names is gone" in explained
    assert HOOK in run(root, "oracle_guard", "check", "--help").stdout
    repo = init_repo(tmp_path / "r")
    commit(repo, {".oracle-guard.yaml": "version: 1\nkeep: {paths: [NOTICE]}\n", "NOTICE": "x\n"})
    judged = run(root, "oracle_guard", "check", "-C", str(repo), "--now", "2026-09-25")
    assert f"{HOOK}: passed" in judged.stdout.splitlines()
    git(repo, "rm", "-q", "NOTICE")
    judged = run(root, "oracle_guard", "check", "-C", str(repo), "--now", "2026-09-25", check=False)
    assert judged.returncode == 1 and f"NOTICE: {CODE}: is gone" in judged.stdout, judged.stdout


TESTS: List[str] = [
    "tests/keep_files_test.py",
    "tests/registry_test.py",
    "tests/manifest_test.py",
    "tests/readme_test.py",
    "tests/layers_test.py",
    "tests/broken_contract_test.py",
    "tests/snapshot_test.py::test_every_check_finds_the_same_on_memory_and_git_snapshots",
    "tests/adversarial/scenarios_test.py::test_every_checks_sample_change_is_rejected_in_every_context",
    "tests/e2e/faults_test.py::test_hook_that_raises",
    "tests/e2e/faults_test.py::test_pre_receive_hook_that_raises_rejects_the_push",
]


def test_the_registry_fault_and_scenario_tests_take_it_in_and_pass(copy):
    root: Path = copy["root"]
    done = run(
        root,
        "pytest",
        "-q",
        "-rA",
        "-n",
        "0",
        "-p",
        "no:randomly",
        "-p",
        "no:cacheprovider",
        *TESTS,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-6000:]
    passed = [line for line in done.stdout.splitlines() if line.startswith("PASSED ")]
    for test in (
        "test_every_check_passes_its_sample_and_rejects_the_samples_change",
        "test_every_section_is_in_the_contract_schema",
        "test_a_broken_section_of_every_check_fails_closed",
    ):
        assert any(f"{test}[{HOOK}]" in line for line in passed), test
    for fault in ("test_hook_that_raises[", "test_pre_receive_hook_that_raises_rejects_the_push["):
        assert any(fault in line and f"{HOOK}]" in line for line in passed), fault
    for context in ("staged", "ci", "prepush", "push"):
        assert any(f"[{HOOK}-{context}]" in line for line in passed), context
    assert any(
        "keep_files_test.py::test_a_kept_file_removed_is_a_finding" in line for line in passed
    )
