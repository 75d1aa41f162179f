"""The tree passes ruff (lint and format) and mypy as pyproject.toml configures
them; a near miss and a fire for each tool show the configuration is the one
read, so a check cannot pass by running with no rules."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "pyproject.toml"
# mypy_path in pyproject.toml: the source folder hooks/ under its package name
MYPY_SOURCE = ROOT / ".mypy_cache" / "src"


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def report(result: subprocess.CompletedProcess) -> str:
    return f"exit {result.returncode}:\n{result.stdout}"


def link_package() -> None:
    """``.mypy_cache/src/oracle_guard`` -> ``hooks/`` (setup.cfg's package_dir):
    mypy finds modules by folder name, and imports say ``oracle_guard``. The
    cache folder is mypy's own, which it keeps out of git."""
    link = MYPY_SOURCE / "oracle_guard"
    target = os.path.relpath(ROOT / "hooks", MYPY_SOURCE)
    if os.path.islink(link) and os.readlink(link) == target:
        return
    MYPY_SOURCE.mkdir(parents=True, exist_ok=True)
    ignore = MYPY_SOURCE.parent / ".gitignore"  # as mypy writes it
    if not ignore.exists():
        ignore.write_text("# Automatically created by mypy\n*\n")
    fresh = MYPY_SOURCE / f".oracle_guard.{os.getpid()}"
    os.symlink(target, fresh)
    os.replace(fresh, link)  # another run may have made it meanwhile


def mypy(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    link_package()
    result = run("mypy", "--config-file", str(CONFIG), *args, cwd=cwd)
    linked = MYPY_SOURCE / "oracle_guard"
    for shown in (str(linked), os.path.relpath(linked, cwd)):  # as the source folder
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


def test_mypy_passes_on_the_package():
    result = mypy()
    assert result.returncode == 0, report(result)
    assert "no issues found" in result.stdout, report(result)


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


def f():
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


def test_mypy_checks_untyped_code_for_python_3_9(tmp_path):
    # a bug in an unannotated function, and a function new in 3.10: both only as configured
    write(tmp_path, "near.py", MYPY_NEAR)
    write(tmp_path, "fire.py", MYPY_FIRE)
    cache = str(MYPY_SOURCE.parent / "near-miss")  # typeshed's modules, kept between runs
    near = mypy("--cache-dir", cache, "near.py", cwd=tmp_path)
    assert near.returncode == 0, report(near)
    fire = mypy("--cache-dir", cache, "fire.py", cwd=tmp_path)
    assert fire.returncode == 1, report(fire)
    assert 'Unsupported operand types for + ("int" and "str")' in fire.stdout, report(fire)
    assert 'Module has no attribute "pairwise"' in fire.stdout, report(fire)
