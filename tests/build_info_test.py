"""oracle-guard --version names the commit it was built from when it knows it: from
the BUILD_COMMIT a build of a git checkout records, or an editable checkout's HEAD;
and only the version when it does not."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from oracle_guard import __version__, build_info
from testing.checkout import snapshot_checkout
from testing.git import commit, git, init_repo

ROOT = Path(__file__).resolve().parents[1]


def checkout(tmp_path: Path, name: str = "oracle-guard") -> Path:
    """A look-alike of oracle-guard's checkout: setup.cfg naming it, the package in hooks/."""
    repo = init_repo(tmp_path / "checkout")
    commit(repo, {"setup.cfg": f"[metadata]\nname = {name}\n", "hooks/__init__.py": ""})
    return repo


def test_a_recorded_commit_is_named(tmp_path):
    sha = "a" * 40
    (tmp_path / "BUILD_COMMIT").write_text(sha + "\n")
    assert build_info.version_line(str(tmp_path)) == f"oracle-guard {__version__} (commit {sha})"


def test_a_recorded_file_that_holds_no_commit_id_is_not_trusted(tmp_path):
    (tmp_path / "BUILD_COMMIT").write_text("v0.2.0\n")
    assert build_info.version_line(str(tmp_path)) == f"oracle-guard {__version__}"


def test_nothing_known_prints_the_version_alone(tmp_path):
    (tmp_path / "oracle_guard").mkdir()
    assert build_info.version_line(str(tmp_path / "oracle_guard")) == f"oracle-guard {__version__}"


def test_an_editable_checkout_names_its_head(tmp_path):
    repo = checkout(tmp_path)
    head = git(repo, "rev-parse", "HEAD").strip()
    assert (
        build_info.version_line(str(repo / "hooks"))
        == f"oracle-guard {__version__} (commit {head})"
    )


def test_an_edited_checkout_says_it_is_not_that_commit(tmp_path):
    repo = checkout(tmp_path)
    head = git(repo, "rev-parse", "HEAD").strip()
    (repo / "hooks" / "__init__.py").write_text("# edited\n")
    assert build_info.checkout_commit(str(repo / "hooks")) == f"{head} with local changes"


def test_a_checkout_of_another_project_is_not_read(tmp_path):
    repo = checkout(tmp_path, name="something-else")
    assert build_info.checkout_commit(str(repo / "hooks")) is None


def test_cli_version_is_the_version_line(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "oracle_guard", "--version"], stdout=subprocess.PIPE, text=True
    )
    assert proc.returncode == 0
    assert proc.stdout == build_info.version_line() + "\n"


def built_wheel(source: Path, out: Path) -> Path:
    """The wheel ``python -m build`` makes from the folder ``source`` (offline)."""
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", str(out), str(source)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:]
    (wheel,) = out.glob("*.whl")
    return wheel


def test_a_wheel_built_from_a_clean_checkout_records_its_commit(tmp_path):
    source, sha = snapshot_checkout(tmp_path / "oracle-guard")
    with zipfile.ZipFile(str(built_wheel(source, tmp_path / "dist"))) as whl:
        assert whl.read("oracle_guard/BUILD_COMMIT").decode() == sha + "\n"
    assert not (source / "hooks" / "BUILD_COMMIT").exists()  # the source tree is left alone


def test_a_checkout_inside_another_repository_is_not_read(tmp_path):
    # an sdist unpacked in some other project's work tree: that project's HEAD is not ours
    outer = init_repo(tmp_path / "outer")
    commit(outer, {"README.md": "x\n"})
    inner = outer / "oracle-guard-0.2.0"
    (inner / "hooks").mkdir(parents=True)
    (inner / "setup.cfg").write_text("[metadata]\nname = oracle-guard\n")
    assert build_info.checkout_commit(str(inner / "hooks")) is None


def test_a_wheel_built_from_edited_files_records_no_commit(tmp_path):
    # near miss of the recorded commit: the files differ from HEAD
    source, _ = snapshot_checkout(tmp_path / "oracle-guard")
    with open(source / "hooks" / "__init__.py", "a") as f:
        f.write("# edited\n")
    with zipfile.ZipFile(str(built_wheel(source, tmp_path / "dist"))) as whl:
        assert "oracle_guard/BUILD_COMMIT" not in whl.namelist()
