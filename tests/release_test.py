"""The release: the sdist and wheel `python -m build` makes from this checkout,
checked by `twine check --strict`, and what each carries.

The build runs offline (`--no-isolation`: setuptools and wheel come from this
environment) on a copy of the files git lists, with junk planted beside them
(a venv, build/, bytecode), so the sdist's list can be held to git's exactly.
"""

from __future__ import annotations

import email.parser
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Dict, List, NamedTuple

import pytest

from oracle_guard import __version__

ROOT = Path(__file__).resolve().parent.parent

# what issue #18 asks the sdist to carry, beside the package
SDIST_CARRIES = [
    "tests/release_test.py",
    "testing/conformance.py",
    "testing/git.py",
    "examples/harness/.oracle-guard.yaml",
    "examples/ci/gitlab-ci.yml",
    "benchmarks/bench_imports.py",
    "schemas/contract.schema.json",
    "docs/index.md",
    "docs/changelog.md",
    "mkdocs.yml",
    "templates/oracle-guard.yml",
    "action.yml",
    ".pre-commit-hooks.yaml",
    "LICENSE",
    "CHANGELOG.md",
    "CONTRIBUTING.md",
    "README.md",
    "setup.cfg",
    "pyproject.toml",
    "MANIFEST.in",
    ".ci/run",
]

JUNK = [
    ".venv/bin/python3",
    "build/lib/oracle_guard/__init__.py",
    "tests/__pycache__/release_test.cpython-311.pyc",
    "hooks/__pycache__/cli.cpython-311.pyc",
    "hooks/cli.pyc",
    "dist/oracle_guard-0.0.0-py3-none-any.whl",
    ".pytest_cache/README.md",
    ".hypothesis/examples/x",
]


class Built(NamedTuple):
    sdist: Path
    wheel: Path
    tracked: List[str]


def run(*cmd: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        cmd, cwd=str(cwd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def git_files() -> List[str]:
    """The files a clone of this checkout would hold (and new ones not ignored)."""
    proc = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        stdout=subprocess.PIPE,
        check=True,
    )
    names = [name.decode() for name in proc.stdout.split(b"\0") if name]
    return sorted(name for name in set(names) if (ROOT / name).is_file())


def build(source: Path, out: Path, *which: str) -> subprocess.CompletedProcess:
    return run(
        sys.executable, "-m", "build", "--no-isolation", *which, "--outdir", str(out), str(source),
        cwd=source.parent,
    )  # fmt: skip


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Built:
    tmp = tmp_path_factory.mktemp("release")
    source = tmp / "oracle-guard"
    tracked = git_files()
    for name in tracked:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(str(ROOT / name), str(source / name))
    for name in JUNK:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_text("junk\n")
    # no --sdist/--wheel: the wheel is built from the unpacked sdist, as pip would
    proc = build(source, tmp / "dist")
    assert proc.returncode == 0, proc.stdout[-3000:]
    sdists = sorted((tmp / "dist").glob("*.tar.gz"))
    wheels = sorted((tmp / "dist").glob("*.whl"))
    assert len(sdists) == 1 and len(wheels) == 1, os.listdir(str(tmp / "dist"))
    return Built(sdists[0], wheels[0], tracked)


def sdist_names(sdist: Path) -> List[str]:
    with tarfile.open(str(sdist)) as tar:
        members = [m for m in tar.getmembers() if m.isfile()]
    tops = {m.name.split("/", 1)[0] for m in members}
    assert tops in ({f"oracle-guard-{__version__}"}, {f"oracle_guard-{__version__}"}), tops
    return sorted(m.name.split("/", 1)[1] for m in members)


def wheel_metadata(wheel: Path) -> Dict[str, List[str]]:
    with zipfile.ZipFile(str(wheel)) as whl:
        text = whl.read(f"oracle_guard-{__version__}.dist-info/METADATA").decode()
    message = email.parser.Parser().parsestr(text, headersonly=True)
    fields: Dict[str, List[str]] = {}
    for key, value in message.items():
        fields.setdefault(key, []).append(value)
    return fields


def test_twine_check_strict_passes_both(built):
    proc = run(sys.executable, "-m", "twine", "check", "--strict", str(built.sdist), str(built.wheel), cwd=ROOT)  # fmt: skip
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.count("PASSED") == 2, proc.stdout


def test_the_sdist_carries_what_git_tracks_and_nothing_else(built):
    names = sdist_names(built.sdist)
    missing = [name for name in SDIST_CARRIES if name not in names]
    assert not missing, missing
    extra = [
        name
        for name in names
        if name not in built.tracked
        and name != "PKG-INFO"
        and not name.startswith("oracle_guard.egg-info/")
    ]
    assert not extra, extra  # the planted junk among them, if MANIFEST.in lets it in
    assert sorted(set(built.tracked) - set(names)) == []


def test_the_planted_junk_was_there_to_leave_out(built):
    # the near-miss: the sdist's own egg-info is its one folder outside git's list
    names = sdist_names(built.sdist)
    assert any(name.startswith("oracle_guard.egg-info/") for name in names)
    assert not [name for name in names if name in JUNK or "__pycache__" in name]


def test_the_wheel_carries_the_package_alone(built):
    with zipfile.ZipFile(str(built.wheel)) as whl:
        names = sorted(whl.namelist())
        schemas = {n: whl.read(n) for n in names if n.startswith("oracle_guard/schemas/")}
        recipes = {n: whl.read(n) for n in names if n.startswith("oracle_guard/recipes/")}
        entry_points = whl.read(f"oracle_guard-{__version__}.dist-info/entry_points.txt").decode()
    dist_info = f"oracle_guard-{__version__}.dist-info/"
    package = [n for n in names if not n.startswith(dist_info)]
    # hooks/ is oracle_guard, schemas/ oracle_guard.schemas; recipes/ is in hooks/
    expected = [
        "oracle_guard/" + n[len("hooks/") :] for n in built.tracked if n.startswith("hooks/")
    ]
    expected += ["oracle_guard/" + n for n in built.tracked if n.startswith("schemas/")]
    assert package == sorted(expected)
    for name, data in schemas.items():
        assert data == (ROOT / "schemas" / name.rsplit("/", 1)[1]).read_bytes(), name
    assert set(recipes) >= {"oracle_guard/recipes/gitlab-ci.yml"}
    for name, data in recipes.items():
        if name.endswith(".yml"):  # byte for byte what examples/ci shows
            assert data == (ROOT / "examples/ci" / name.rsplit("/", 1)[1]).read_bytes(), name
    assert "oracle-guard = oracle_guard.cli:main" in entry_points
    license_files = [n for n in names if n.startswith(dist_info) and n.endswith("/LICENSE")]
    assert len(license_files) == 1, names
    with zipfile.ZipFile(str(built.wheel)) as whl:
        assert whl.read(license_files[0]) == (ROOT / "LICENSE").read_bytes()


def test_the_wheel_metadata_names_version_and_licence(built):
    fields = wheel_metadata(built.wheel)
    assert fields["Name"] == ["oracle-guard"]
    assert fields["Version"] == [__version__] == ["0.2.0"]
    # setuptools before 77 writes License:, later ones the SPDX License-Expression:
    assert (fields.get("License") or fields.get("License-Expression")) == ["MIT"], fields
    assert fields["License-File"] == ["LICENSE"]
    assert fields["Requires-Python"] == [">=3.9"]
    assert not [
        req for req in fields.get("Requires-Dist", []) if req.lower().startswith("gitpython")
    ]
    assert fields["Description-Content-Type"] == ["text/markdown"]


def test_the_wheel_metadata_names_the_project_urls_and_classifiers(built):
    fields = wheel_metadata(built.wheel)
    source = "https://github.com/your-org/oracle-guard"
    site = "https://your-org.github.io/oracle-guard/"
    assert fields["Project-URL"] == [
        f"Documentation, {site}",
        f"Source, {source}",
        f"Changelog, {site}changelog/",
        f"Issues, {source}/issues",
    ]
    assert fields["Home-page"] == [source]
    classifiers = fields["Classifier"]
    assert "License :: OSI Approved :: MIT License" in classifiers
    assert [c for c in classifiers if c.startswith("Programming Language :: Python :: 3.")] == [
        f"Programming Language :: Python :: 3.{minor}" for minor in range(9, 14)
    ]


def test_the_licence_is_mit_for_the_authors():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n\nCopyright (c) 2026 the oracle-guard authors\n")
    assert "WITHOUT WARRANTY OF ANY KIND" in text


# -- twine check --strict can fail: a throwaway package with a broken long description --


PACKAGE_SETUP = """\
[metadata]
name = throwaway-demo
version = 1.0
description = a package built to be checked
long_description = file: README.rst
long_description_content_type = text/x-rst
license = MIT

[options]
py_modules = throwaway_demo
"""


def throwaway(
    tmp_path: Path, readme: str, setup: str = PACKAGE_SETUP
) -> subprocess.CompletedProcess:
    source = tmp_path / "throwaway"
    source.mkdir()
    (source / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=61", "wheel"]\n'
        'build-backend = "setuptools.build_meta"\n'
    )
    (source / "setup.cfg").write_text(setup)
    (source / "README.rst").write_text(readme)
    (source / "throwaway_demo.py").write_text("")
    out = tmp_path / "dist"
    proc = build(source, out, "--wheel")
    assert proc.returncode == 0, proc.stdout[-2000:]
    return run(sys.executable, "-m", "twine", "check", "--strict", *map(str, out.glob("*.whl")), cwd=tmp_path)  # fmt: skip


def test_twine_strict_fails_a_long_description_that_does_not_render(tmp_path):
    proc = throwaway(tmp_path, "Title\n=====\n\nA link to `nowhere <broken_\n")
    assert proc.returncode == 1, proc.stdout
    assert "FAILED" in proc.stdout and "long_description" in proc.stdout, proc.stdout


def test_twine_strict_fails_a_long_description_without_its_content_type(tmp_path):
    # twine renders no markdown (it cannot fail, so relative links pass unseen); what
    # --strict catches for a markdown README is a missing content type
    setup = PACKAGE_SETUP.replace("long_description_content_type = text/x-rst\n", "")
    proc = throwaway(tmp_path, "Title\n=====\n\nFine text.\n", setup)
    assert proc.returncode == 1, proc.stdout
    assert (
        "FAILED due to warnings" in proc.stdout and "long_description_content_type" in proc.stdout
    )


def test_twine_strict_passes_the_same_package_with_a_sound_description(tmp_path):
    proc = throwaway(tmp_path, "Title\n=====\n\nA link to `somewhere <https://example.com/>`_.\n")
    assert proc.returncode == 0, proc.stdout
    assert "PASSED" in proc.stdout
