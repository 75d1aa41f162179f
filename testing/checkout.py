"""This checkout as a committed git repository, for pre-commit to install from."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from testing.git import commit, git, init_repo

ROOT = Path(__file__).resolve().parents[1]


def snapshot_checkout(dest: Path) -> tuple:
    """Copy the files git would see in this checkout (tracked and untracked,
    not ignored) into a new repository and commit them; (path, commit id).

    pre-commit installs hooks from a commit, and the checkout under test may
    have uncommitted changes, so the tests install from this snapshot."""
    listing = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        stdout=subprocess.PIPE,
        check=True,
    ).stdout
    init_repo(dest)
    for raw in filter(None, listing.split(b"\0")):
        source = ROOT / raw.decode()
        if not source.is_file():
            continue  # deleted but still in the index
        target = dest / raw.decode()
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    sha = commit(dest, message="snapshot of the oracle-guard checkout")
    git(dest, "tag", "v-test")
    return dest, sha
