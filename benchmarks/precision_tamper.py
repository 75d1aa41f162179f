"""test-tamper's precision on honest history: how many maintainers' commits it flags.

What it measures: for each repository given (a git directory: a clone, or a
bare mirror), the last ``--commits`` non-merge commits that touch its test
folders are each judged by test-tamper against their first parent, with the
contract a team would write for it (``tamper.paths`` the test folders, no
``frozen_tests``, no ``allow``). Every such commit is an honest maintainer's, so
each finding is either right (a maintainer did add a skip, a collection hook, a
rerun) or wrong (nothing moved the goalposts). The script prints each
finding, one a line, for that review, and the share of commits flagged.

The projects' files are read from their git objects and never written or kept;
commit only this script.

Run it:

    .venv/bin/python benchmarks/precision_tamper.py /path/to/click /path/to/pluggy \\
        --commits 150 --out /tmp/precision.txt
"""

from __future__ import annotations

import argparse
import collections
import datetime
import subprocess
import sys
from typing import Dict, List, Tuple

NOW = datetime.datetime(2026, 12, 2, tzinfo=datetime.timezone.utc)
TEST_FOLDERS = ("tests", "testing", "test")


def commits(directory: str, count: int) -> List[Tuple[str, str]]:
    """(commit, first parent) of the last ``count`` non-merge commits touching tests."""
    out = subprocess.run(
        ["git", "-C", directory, "log", "--no-merges", "--format=%H %P", f"-n{count}", "--"]
        + list(TEST_FOLDERS),
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    pairs = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2:
            pairs.append((parts[0], parts[1]))
    return pairs


def judge(directory: str, commit: str, parent: str) -> List[str]:
    from oracle_guard.checks import test_tamper
    from oracle_guard.contract import Contract
    from oracle_guard.git.plumbing import Git
    from oracle_guard.snapshot import GitSnapshot

    git = Git(directory, use_cache=False)
    base = GitSnapshot(git, parent[:12], None, commit=parent)
    candidate = GitSnapshot(git, commit[:12], None, commit=commit)
    data = {"version": 1, "tamper": {"paths": [f"{folder}/**" for folder in TEST_FOLDERS]}}
    contract = Contract(data, base, from_base=True)
    try:
        found = test_tamper.check(contract, base, candidate, NOW)
    finally:
        git.close()
    return [f"{f.path}:{f.line}: {f.code}: {f.message}" for f in found]


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repositories", nargs="+")
    parser.add_argument("--commits", type=int, default=150)
    parser.add_argument("--out", help="write every finding here, for review")
    options = parser.parse_args(argv)
    flagged = judged = 0
    by_code: Dict[str, int] = collections.Counter()
    lines: List[str] = []
    for directory in options.repositories:
        for commit, parent in commits(directory, options.commits):
            judged += 1
            found = judge(directory, commit, parent)
            if found:
                flagged += 1
            for finding in found:
                by_code[finding.split(": ")[1]] += 1
                lines.append(f"{directory} {commit[:12]} {finding}")
    if options.out:
        with open(options.out, "w", encoding="utf-8") as out:
            out.write("\n".join(lines) + "\n")
    share = 100.0 * flagged / judged if judged else 0.0
    print(f"commits judged: {judged}; flagged: {flagged} ({share:.1f}%)")
    for code, count in sorted(by_code.items(), key=lambda kv: -kv[1]):
        print(f"  {code}: {count}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
