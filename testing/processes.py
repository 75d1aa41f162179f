"""Processes a test run left behind: every server the tests start is stopped by
its pid, and the suite checks that nothing naming its folders still runs."""

from __future__ import annotations

import os
import signal
import time
from typing import Callable, List, Tuple

HANG_GUARD_S = 120.0  # generous: a loaded machine may take seconds, a hang takes forever


def wait_until(condition: Callable[[], bool], what: str, wait_s: float = HANG_GUARD_S) -> None:
    """Poll ``condition`` until it holds; a hang guard, never a speed bound:
    AssertionError naming ``what`` only after ``wait_s`` seconds."""
    deadline = time.monotonic() + wait_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} (waited {wait_s:g} s)")
        time.sleep(0.05)


def survivors(marker: str) -> List[Tuple[int, str]]:
    """(pid, command line) of every process but this one whose command line
    names ``marker`` (a folder the tests made) or a path inside it; a folder that
    merely starts the same (pytest-1 and another run's pytest-12) is not it."""
    folder = marker.rstrip("/")
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                line = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        except OSError:  # gone meanwhile
            continue
        if _names(line, folder):
            found.append((int(name), line))
    return found


def _names(line: str, folder: str) -> bool:
    start = line.find(folder)
    while start != -1:
        end = start + len(folder)
        if end == len(line) or line[end] in "/ \"'=:":
            return True
        start = line.find(folder, start + 1)
    return False


def settle(marker: str, wait_s: float = 5.0) -> None:
    """Collect dropped objects and give the readers they held (``git cat-file
    --batch``, which exits at end of input) a moment to go; a server stays."""
    import gc
    import time

    gc.collect()
    deadline = time.monotonic() + wait_s
    while survivors(marker) and time.monotonic() < deadline:
        time.sleep(0.05)


def stop_survivors(marker: str) -> List[Tuple[int, str]]:
    """Kill what survives (so one failure leaves no daemon), and say what it was."""
    left = survivors(marker)
    for pid, _ in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return left
