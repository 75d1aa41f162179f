"""What a long run is doing, for the person at the terminal: a check or a lock
that has run past a couple of seconds shows, on standard error, how many files
it has hashed of how many, a few times a second at most.

Only on a terminal (stderr a tty), never on standard output or in a report:
CI logs and pipes get nothing, and neither does a hook pre-commit or prek runs
(PRE_COMMIT=1, or prek's PREK_HOOK_STAGE): they hold a hook's output, terminal
or not, till it ends. ``ORACLE_GUARD_PROGRESS_AFTER``
(seconds, default 2) moves the threshold, so a test can see it without waiting.
A command turns it on with ``started``; the code that hashes calls ``counting``,
which costs nothing when it is off."""

from __future__ import annotations

import threading
import time
from typing import Mapping, Optional, TextIO

AFTER_ENV = "ORACLE_GUARD_PROGRESS_AFTER"
DEFAULT_AFTER = 2.0  # seconds before the first line: a short run stays silent
EVERY = 0.25  # seconds between two lines at least


class Meter:
    """One run's progress line on ``stream``."""

    def __init__(self, stream: TextIO, after: float) -> None:
        self._stream = stream
        self._started = time.monotonic()
        self._after = after
        self._shown_at = 0.0
        self._shown = False
        self._lock = threading.Lock()

    def show(self, what: str, done: int, total: int, last: bool = False) -> None:
        now = time.monotonic()
        if now - self._started < self._after:
            return
        if not last and now - self._shown_at < EVERY:
            return
        with self._lock:
            self._shown_at = now
            self._shown = True
            self._stream.write(f"\roracle-guard: {what}: {done:,} of {total:,} files\x1b[K")
            self._stream.flush()

    def close(self) -> None:
        """Take the line away, so what follows starts at the line's beginning."""
        with self._lock:
            if self._shown:
                self._stream.write("\r\x1b[K")
                self._stream.flush()
                self._shown = False


_current: Optional[Meter] = None


def started(stream: TextIO, env: Mapping[str, str]) -> Optional[Meter]:
    """Turn progress on for this run when ``stream`` is a terminal; None otherwise."""
    global _current
    isatty = getattr(stream, "isatty", None)
    if isatty is None or not isatty():
        return None
    if env.get("PRE_COMMIT") == "1" or env.get("PREK_HOOK_STAGE"):
        return None  # a hook runner's output, shown once the hook has ended
    try:
        after = float(env.get(AFTER_ENV, DEFAULT_AFTER))
    except ValueError:
        after = DEFAULT_AFTER
    _current = Meter(stream, max(after, 0.0))
    return _current


def stopped() -> None:
    global _current
    if _current is not None:
        _current.close()
    _current = None


class Counter:
    """Files done of ``total``, shown through the run's meter (if any)."""

    def __init__(self, what: str, total: int, meter: Optional[Meter]) -> None:
        self.what, self.total, self.done = what, total, 0
        self._meter = meter
        self._lock = threading.Lock()

    def advance(self, n: int = 1) -> None:
        if self._meter is None:
            return
        with self._lock:  # the pack readers' threads count too
            self.done += n
            done = self.done
        self._meter.show(self.what, done, self.total, last=done == self.total)


def counting(what: str, total: int) -> Counter:
    return Counter(what, total, _current)
