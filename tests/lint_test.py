"""The tree passes ruff (lint and format) and mypy as pyproject.toml configures
them; a near miss and a fire for each tool show the configuration is the one
read, so a check cannot pass by running with no rules."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "pyproject.toml"
PACKAGE = "oracle_guard"  # hooks/ as setup.cfg's package_dir installs it


def run(
    *args: str, cwd: Path = ROOT, env: Optional[Dict[str, str]] = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def report(result: subprocess.CompletedProcess) -> str:
    return f"exit {result.returncode}:\n{result.stdout}"


def copy_checkout(dest: Path) -> Path:
    """The files a clone of this checkout would hold (and new ones git does not
    ignore), copied to dest: pip builds in the source folder (build/, egg-info),
    so the build runs on a copy and never in the tree."""
    names = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        stdout=subprocess.PIPE,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (raw.decode() for raw in names)):
        if (ROOT / name).is_file():  # a tracked file deleted in the tree is not there
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    return dest


def install(source: Path, target: Path) -> Path:
    """The package as pip installs it (not editable: the files themselves, under
    their package's name), into target."""
    result = run(
        "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-compile",
        "--target", str(target), str(source),
    )  # fmt: skip
    assert result.returncode == 0, report(result)
    return target


def mypy(
    *args: str, cwd: Path = ROOT, installed: Optional[Path] = None
) -> subprocess.CompletedProcess:
    """mypy as pyproject.toml configures it; with installed, the package there is
    the one checked (MYPYPATH: mypy reports errors in it, as in a project's own
    code), and its paths read as the source folder's."""
    env = dict(os.environ)
    if installed is not None:
        env["MYPYPATH"] = str(installed)
    result = run("mypy", "--config-file", str(CONFIG), *args, cwd=cwd, env=env)
    if installed is not None:
        for shown in (str(installed / PACKAGE), os.path.relpath(installed / PACKAGE, cwd)):
            result.stdout = result.stdout.replace(shown + os.sep, "hooks" + os.sep)
    return result


def write(folder: Path, name: str, text: str) -> None:
    (folder / name).write_text(text, encoding="utf-8")


# -- the tree -----------------------------------------------------------------


def test_ruff_check_passes():
    result = run("ruff", "check", "--no-cache", "--output-format", "concise", ".")
    assert result.returncode == 0, report(result)


def test_ruff_format_leaves_every_file_as_it_is():
    result = run("ruff", "format", "--no-cache", "--check", "--output-format", "concise", ".")
    assert result.returncode == 0, report(result)


def test_mypy_passes_on_the_package_as_installed(tmp_path):
    installed = install(copy_checkout(tmp_path / "source"), tmp_path / "site")
    # the marker ships: a project that imports oracle_guard gets its types
    assert (installed / PACKAGE / "py.typed").is_file()
    result = mypy(installed=installed)
    assert result.returncode == 0, report(result)
    assert "no issues found" in result.stdout, report(result)


def test_mypy_checks_the_sources_of_the_tree(tmp_path):
    # the checkout's files, as they are now: a bug written into the copy is found,
    # at its path under hooks/
    source = copy_checkout(tmp_path / "source")
    with (source / "hooks" / "clock.py").open("a", encoding="utf-8") as f:
        f.write('\n\ndef broken() -> int:\n    return "not an int"\n')
    # a cache of its own, new: the tree's stays the tree's, and no error is
    # replayed from a cache under an earlier run's folder
    cache = str(tmp_path / "cache")
    result = mypy("--cache-dir", cache, installed=install(source, tmp_path / "site"))
    assert result.returncode == 1, report(result)
    assert f"hooks{os.sep}clock.py:" in result.stdout, report(result)
    assert "Incompatible return value type" in result.stdout, report(result)


# -- each tool reads the configuration ---------------------------------------

RUFF_NEAR = """\
import os


def f(x=None):
    return os.sep, x
"""
RUFF_FIRE = """\
import sys
import os


def f(x=[]):
    return os.sep, x
"""
MYPY_NEAR = """\
import itertools


def f() -> object:
    return 1 + 2, itertools.chain
"""
MYPY_FIRE = """\
import itertools


def f():
    return 1 + "2", itertools.pairwise
"""


def test_ruff_check_finds_what_the_configured_rules_name(tmp_path):
    # F401 is on by default; B006 and I001 only as configured
    write(tmp_path, "near.py", RUFF_NEAR)
    write(tmp_path, "fire.py", RUFF_FIRE)
    near = run("ruff", "check", "--no-cache", "--config", str(CONFIG), "near.py", cwd=tmp_path)
    assert near.returncode == 0, report(near)
    fire = run("ruff", "check", "--no-cache", "--config", str(CONFIG), "fire.py", cwd=tmp_path)
    assert fire.returncode == 1, report(fire)
    for code in ("F401", "B006", "I001"):
        assert code in fire.stdout, report(fire)


def test_ruff_format_wraps_at_the_configured_width(tmp_path):
    # 99 columns: past ruff's default 88, within the configured 100
    call = "value = compute(" + ", ".join(f'"{c * 8}"' for c in "abcdefg") + ")"
    assert len(call) == 99
    write(tmp_path, "near.py", call + "\n")
    write(tmp_path, "fire.py", call.replace('"a', '"aaaaa') + "\n")
    check = ("ruff", "format", "--no-cache", "--check", "--config", str(CONFIG))
    near = run(*check, "near.py", cwd=tmp_path)
    assert near.returncode == 0, report(near)
    fire = run(*check, "fire.py", cwd=tmp_path)
    assert fire.returncode == 1 and "fire.py" in fire.stdout, report(fire)


def test_mypy_wants_annotations_and_checks_for_python_3_9(tmp_path):
    # a function with no annotations, the bug in it, and a function new in 3.10:
    # all three only as configured
    write(tmp_path, "near.py", MYPY_NEAR)
    write(tmp_path, "fire.py", MYPY_FIRE)
    cache = str(ROOT / ".mypy_cache" / "near-miss")  # typeshed's modules, kept between runs
    near = mypy("--cache-dir", cache, "near.py", cwd=tmp_path)
    assert near.returncode == 0, report(near)
    fire = mypy("--cache-dir", cache, "fire.py", cwd=tmp_path)
    assert fire.returncode == 1, report(fire)
    assert 'Unsupported operand types for + ("int" and "str")' in fire.stdout, report(fire)
    assert 'Module has no attribute "pairwise"' in fire.stdout, report(fire)
    assert "[no-untyped-def]" in fire.stdout, report(fire)
