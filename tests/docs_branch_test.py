"""Every example works whatever git names a new branch: each `git init` in the
documentation and the examples names `main` itself, and the pages' sessions run
under git's own default, `master`, so one that relies on `main` fails."""

from __future__ import annotations

import re
from pathlib import Path

from testing import docs
from testing.docs import ROOT

# a git init command, up to the end of its shell command
GIT_INIT = re.compile(r"\bgit init\b[^;&|\n`]*")


def documents():
    yield ROOT / "README.md"
    yield ROOT / "CONTRIBUTING.md"
    yield from sorted((ROOT / "docs").rglob("*.md"))
    yield from sorted(p for p in (ROOT / "examples").rglob("*") if p.is_file())


def unnamed_branches(text: str):
    return [
        m.group(0)
        for m in GIT_INIT.finditer(text)
        if not re.search(r" (-b|--initial-branch)[ =]", m.group(0))
    ]


def test_every_git_init_in_the_docs_and_examples_names_main():
    found = {
        str(path.relative_to(ROOT)): unnamed_branches(
            path.read_text(encoding="utf-8", errors="replace")
        )
        for path in documents()
    }
    assert {page: inits for page, inits in found.items() if inits} == {}


def test_a_git_init_without_a_branch_is_caught():
    # near miss: the same commands, one with the branch named
    assert unnamed_branches("$ mkdir shop && cd shop && git init -q\n") == ["git init -q"]
    assert unnamed_branches("$ git init -q -b main shop && cd shop\n") == []
    assert unnamed_branches("git init --bare --initial-branch=main x.git") == []


def test_the_pages_run_with_master_as_gits_default(tmp_path: Path):
    (tmp_path / "home").mkdir()
    env = docs.session_environment(tmp_path / "home", programs=())
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path / "r")], env=env, check=True)
    head = subprocess.run(
        ["git", "-C", str(tmp_path / "r"), "symbolic-ref", "HEAD"],
        env=env, stdout=subprocess.PIPE, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert head == "refs/heads/master"
