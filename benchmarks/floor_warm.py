"""The floor a warm `oracle-guard check` is measured against: what any tool that
judges the index from git must do at least. Python starts, asks git once where
the repository is (`git rev-parse`), lists the index (`git ls-files -s`) and
reads one small file (the contract, from the work tree). Nothing is judged.

    python benchmarks/floor_warm.py [REPO]

Run it with the Python that runs oracle-guard, from the repository (or name it),
beside the timed `oracle-guard check`; it prints one line, as a tool would.
"""

from __future__ import annotations

import os
import subprocess
import sys

CONTRACT = ".oracle-guard.yaml"


def main(argv: list) -> int:
    repo = argv[1] if len(argv) > 1 else "."
    top, git_dir = subprocess.run(
        ["git", "-C", repo, "rev-parse", "--show-toplevel", "--git-dir", "--verify", "HEAD"],
        stdout=subprocess.PIPE,
        check=True,
    ).stdout.split(b"\n")[:2]
    listing = subprocess.run(
        ["git", "-C", repo, "ls-files", "-s", "-z", "--", ":(top)"],
        stdout=subprocess.PIPE,
        check=True,
    ).stdout
    # the contract in the work tree; a repository built without a checkout of it
    # (bench_scale's) has the git directory's HEAD read instead
    small = os.path.join(os.fsdecode(top), CONTRACT)
    if not os.path.exists(small):
        small = os.path.join(repo, os.fsdecode(git_dir), "HEAD")
    with open(small, "rb") as f:
        size = len(f.read())
    entries = listing.count(b"\0")
    print(f"floor: {entries} index entries, {os.path.basename(small)} {size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
