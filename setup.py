"""The build records the commit it was built from in the package (BUILD_COMMIT), so
``oracle-guard --version`` can name it: a clone without tags pins that commit id.
Everything else is in setup.cfg. A build outside a git checkout records nothing."""

import os
import re
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def source_commit():
    """HEAD of the checkout being built, when it is one and its tree is clean."""

    def git(*args):
        try:
            done = subprocess.run(
                ["git", "-C", HERE, *args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                timeout=30,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.decode("ascii", "replace").strip() if done.returncode == 0 else None

    # only the checkout's own git: never a repository some folder above it belongs to
    if not os.path.exists(os.path.join(HERE, ".git")):
        return None
    head = git("rev-parse", "--verify", "-q", "HEAD")
    if not head or not re.fullmatch(r"[0-9a-f]{40}(?:[0-9a-f]{24})?", head):
        return None
    # a build of edited files is not that commit
    if git("status", "--porcelain", "--untracked-files=no", "--", "hooks", "schemas") != "":
        return None
    return head


class BuildWithCommit(build_py):
    def run(self):
        super().run()
        commit = source_commit()
        if commit and not self.dry_run:
            target = os.path.join(self.build_lib, "oracle_guard", "BUILD_COMMIT")
            with open(target, "w", encoding="ascii") as f:
                f.write(commit + "\n")


setup(cmdclass={"build_py": BuildWithCommit})
