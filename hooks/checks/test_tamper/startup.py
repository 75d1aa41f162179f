"""startup-file: files that run or load before any test does, wherever they are."""

from __future__ import annotations

from typing import Optional

from oracle_guard.checks.test_tamper.marks import Mark
from oracle_guard.git.objects import BlobTooLarge, Entry
from oracle_guard.snapshot import Snapshot

# Files run or loaded at start-up from any folder on sys.path: site.py runs
# sitecustomize and usercustomize and the .pth files of site folders, and
# importlib.metadata reads entry points from every .dist-info or .egg-info folder
# on sys.path, where pytest finds its pytest11 plugins.
_STARTUP_MODULES = ("sitecustomize.py", "usercustomize.py")
_METADATA_FOLDERS = (".dist-info", ".egg-info")


def start_up_file(path: str, entry: Entry, candidate: Snapshot, limit: int) -> Optional[Mark]:
    """The startup-file mark of a file the change adds or modifies, or None."""
    folder, _, name = path.rpartition("/")
    name = name.lower()
    if name in _STARTUP_MODULES:
        effect = (
            f"{name} runs at every interpreter start with its folder on sys.path: it can set "
            "PYTEST_ADDOPTS, patch modules or exit before a test runs"
        )
    elif name.endswith(".pth"):
        effect = (
            f"{name} is read at interpreter start in a site folder: its import lines run "
            "before a test does"
        )
    elif name == "entry_points.txt" and folder.lower().endswith(_METADATA_FOLDERS):
        try:
            text = candidate.read(path, limit) if entry.is_regular else b""
        except BlobTooLarge:
            text = b"[pytest11]"  # not read: taken to declare plugins
        plugins = b"pytest11" in text
        effect = (
            "declares pytest11 entry points: pytest loads them as plugins"
            if plugins
            else "its entry points load from the folder on sys.path"
        ) + f" at start-up, from {folder.rpartition('/')[2]} on sys.path"
    else:
        return None
    return Mark("startup-file", 1, f"startup {name}", "", effect)
