"""The build records the commit it was built from in the package (BUILD_COMMIT), so
``oracle-guard --version`` can name it: a clone without tags pins that commit id.
Everything else is in setup.cfg. A build outside a git checkout, or of files that
differ from the commit, records nothing."""

import importlib.util
import os

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def source_commit():
    """HEAD of the checkout being built, when the package's files are that commit's
    (hooks/build_info.py says, loaded by its path: the package is not installed)."""
    spec = importlib.util.spec_from_file_location(
        "oracle_guard_build_info", os.path.join(HERE, "hooks", "build_info.py")
    )
    build_info = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build_info)
    commit = build_info.checkout_commit(os.path.join(HERE, "hooks"))
    return commit if commit and " " not in commit else None


class BuildWithCommit(build_py):
    def run(self):
        super().run()
        commit = source_commit()
        if commit and not self.dry_run:
            target = os.path.join(self.build_lib, "oracle_guard", "BUILD_COMMIT")
            with open(target, "w", encoding="ascii") as f:
                f.write(commit + "\n")


setup(cmdclass={"build_py": BuildWithCommit})
