"""A new configuration file that moves pytest's rootdir, and so its confcutdir.

pytest loads a test's conftest.py files from its folder up to the confcutdir,
which is the configuration file's folder (``_pytest/config/__init__.py``:
confcutdir defaults to the inipath's parent, else the rootdir). A new file that
pytest takes as its configuration in ``tests/`` makes ``tests/`` that folder:
the conftest.py files above it, the oracle's root conftest among them, stop
loading, whatever the file holds. A pyproject.toml with no pytest table counts
too, when no file above it does: pytest then takes the first pyproject.toml it
finds (``findpaths.locate_config``)."""

from __future__ import annotations

from typing import List, Optional

from oracle_guard.checks.test_tamper.marks import Mark
from oracle_guard.checks.test_tamper.options import counts, is_config
from oracle_guard.git.objects import BlobTooLarge
from oracle_guard.snapshot import Snapshot


def moved(path: str, data: bytes, base: Snapshot, candidate: Snapshot, limit: int) -> List[Mark]:
    """The mark of a new configuration file ``path`` that cuts conftest.py files
    of the base off from the runs under its folder."""
    folder, _, name = path.rpartition("/")
    name = name.lower()
    if not folder:
        return []  # the root: nothing above it to cut off
    if not counts(path, data):
        if name != "pyproject.toml" or _counting_above(folder, candidate, limit, path) is not None:
            return []
    previous = _counting_above(folder, base, limit, path)
    cut = previous if previous is not None else ""
    conftests = [
        other
        for other, entry in base.entries.items()
        if entry.is_regular
        and other.rpartition("/")[2].lower() == "conftest.py"
        and _strictly_between(other.rpartition("/")[0], cut, folder)
    ]
    if not conftests:
        return []
    shown = ", ".join(sorted(conftests)[:3]) + (", ..." if len(conftests) > 3 else "")
    return [
        Mark(
            "runner-options",
            1,
            f"rootdir {folder}",
            "",
            f"a new {name} makes {folder}/ pytest's rootdir for the runs under it: {shown} "
            "above it stop loading, and whatever they set up for the tests with them",
        )
    ]


def _counting_above(folder: str, snapshot: Snapshot, limit: int, skip: str) -> Optional[str]:
    """The nearest folder, ``folder`` or above, holding a file pytest takes as its
    configuration (other than ``skip``), or None."""
    found: Optional[str] = None
    for other, entry in snapshot.entries.items():
        if other == skip or not entry.is_regular or not is_config(other):
            continue
        above = other.rpartition("/")[0]
        if not (above == folder or above == "" or folder.startswith(above + "/")):
            continue
        if found is not None and len(above) <= len(found):
            continue
        try:
            counted = counts(other, snapshot.read(other, limit))
        except BlobTooLarge:
            counted = True  # not read: taken to count
        if counted:
            found = above
    return found


def _strictly_between(where: str, top: str, folder: str) -> bool:
    """Is ``where`` at ``top`` or below it, and above ``folder``?"""
    below_top = top == "" or where == top or where.startswith(top + "/")
    above_folder = where == "" or folder.startswith(where + "/")
    return below_top and above_folder and where != folder
