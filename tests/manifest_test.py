"""The files written from the registry (hooks/checks/manifest.py): the committed
.pre-commit-hooks.yaml and README.md's hook table are what the generator writes,
and the manifest is one pre-commit and prek accept, a hook per check."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from oracle_guard.checks import manifest
from oracle_guard.checks.registry import CHECKS, HOOKS

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def test_the_committed_files_are_what_the_generator_writes():
    for name, text in manifest.generated(ROOT).items():
        committed = (ROOT / name).read_text(encoding="utf-8")
        assert committed == text, f"{name} is stale: run {manifest.COMMAND}"
    assert manifest.stale(ROOT) == []


def check_in(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "oracle_guard.checks.manifest", "--check"],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_check_exits_0_on_this_checkout():
    done = check_in(ROOT)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_run_outside_a_checkout_it_says_where_to_run_it(tmp_path):
    (tmp_path / manifest.README).write_text("# not a checkout\n", encoding="utf-8")
    done = check_in(tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        f"manifest: error: {tmp_path} has no {manifest.REGISTRY}: "
        "run this at the top of a checkout\n"
    )


def copy_of_the_checkout(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    root.mkdir()
    for name in (manifest.MANIFEST, manifest.README):
        shutil.copy(ROOT / name, root / name)
    return root


def test_a_stale_manifest_or_table_is_found(tmp_path):
    root = copy_of_the_checkout(tmp_path)
    assert manifest.stale(root) == []
    hooks = root / manifest.MANIFEST
    hooks.write_text(hooks.read_text().replace("manual]", "manual, post-merge]", 1))
    assert manifest.stale(root) == [manifest.MANIFEST]
    readme = root / manifest.README
    readme.write_text(readme.read_text().replace("| `write-set` |", "| `write_set` |"))
    assert manifest.stale(root) == [manifest.MANIFEST, manifest.README]


def test_a_readme_without_the_markers_is_refused(tmp_path):
    root = copy_of_the_checkout(tmp_path)
    readme = root / manifest.README
    readme.write_text(readme.read_text().replace(manifest.TABLE_END, "<!-- end -->"))
    with pytest.raises(ValueError, match="has no hook table between"):
        manifest.generated(root)


def test_the_usage_is_checked():
    assert manifest.main(["--write", "x"]) == 2


def test_the_manifest_names_its_generator_and_has_a_hook_per_check_then_the_one_for_all():
    text = manifest.manifest()
    assert text.startswith(f"# Generated from hooks/checks/registry.py by '{manifest.COMMAND}'")
    hooks = yaml.safe_load(text)
    assert [hook["id"] for hook in hooks] == [*HOOKS, "oracle-guard"]
    for check, hook in zip(CHECKS, hooks):
        assert hook == {
            "id": check.id,
            "name": manifest.hook_name(check),
            "description": check.question,
            "entry": f"oracle-guard check --only {check.id}",
            "language": "python",
            "pass_filenames": False,
            "always_run": True,
            "require_serial": True,
            "stages": ["pre-commit", "pre-push", "manual"],
        }
    assert hooks[-1]["name"] == "oracle-guard (all checks)"
    assert hooks[-1]["entry"] == "oracle-guard check"
    assert manifest.hook_name(CHECKS[1]) == "oracle-guard seed append-only"


@pytest.mark.slow("runs pre-commit and prek validate-manifest")
@pytest.mark.parametrize("tool", ["pre-commit", "prek"])
def test_pre_commit_and_prek_accept_the_manifest(tmp_path, tool):
    path = tmp_path / ".pre-commit-hooks.yaml"
    path.write_text(manifest.manifest(), encoding="utf-8")
    done = subprocess.run(
        [str(BIN / tool), "validate-manifest", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert done.returncode == 0, done.stdout
    # near miss: a hook without its entry is refused
    path.write_text(manifest.manifest().replace("    entry: oracle-guard check\n", ""))
    assert subprocess.run([str(BIN / tool), "validate-manifest", str(path)]).returncode == 1


@pytest.mark.parametrize(
    "text",
    ["plain words, and a question?", "a: colon", "# hash", "'quoted'", "yes", "- dash", "x\ny"],
)
def test_a_scalar_reads_back_as_written(text):
    assert yaml.safe_load(f"key: {manifest.scalar(text)}\n") == {"key": text}


def test_the_readme_table_has_a_row_per_check():
    table = manifest.hook_table().splitlines()
    assert table[0] == manifest.TABLE_START and table[-1] == manifest.TABLE_END
    assert table[3:-1] == [f"| `{c.id}` | {c.question} |" for c in CHECKS]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert manifest.hook_table() in readme
