"""Processes a test run left behind: every server the tests start is stopped by
its pid, and the suite checks that nothing naming its folders still runs."""

from __future__ import annotations

import os
import signal
from typing import List, Tuple


def survivors(marker: str) -> List[Tuple[int, str]]:
    """(pid, command line) of every process but this one whose command line
    names ``marker`` (a folder the tests made)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                line = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        except OSError:  # gone meanwhile
            continue
        if marker in line:
            found.append((int(name), line))
    return found


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
