"""Progress on a terminal: the real `oracle-guard check` and `lock`, their
stderr on a pseudo-terminal (the pty module), show the files hashed out of the
files; with stderr a pipe, or before the threshold, they show nothing; and no
report, on stdout or in an --output file, ever holds it. The threshold comes
from ORACLE_GUARD_PROGRESS_AFTER, so no test waits for it."""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional, Tuple

import pytest

from oracle_guard import progress
from testing.git import commit, init_repo
from testing.oracle import NOW

CONTRACT = 'version: 1\nfixtures:\n  - lock: fx.lock\n    paths: ["fx/**"]\n'
FILES = 300  # enough for the pack reader (and its threads) and the stream alike


@pytest.fixture(scope="module")
def locked(tmp_path_factory) -> Path:
    """A repository of FILES fixtures and their lock, committed."""
    repo = init_repo(tmp_path_factory.mktemp("progress") / "r")
    files: Dict[str, object] = {".oracle-guard.yaml": CONTRACT}
    files.update({f"fx/{i:04d}.bin": os.urandom(256) for i in range(FILES)})
    commit(repo, files, "fixtures")
    done = guard(repo, ["lock"], tty=False)
    assert done[0] == 0, done
    commit(repo, {"fx.lock": (repo / "fx.lock").read_bytes()}, "lock")
    return repo


def guard(
    repo: Path, args, tty: bool, after: str = "0", extra: Optional[Dict[str, str]] = None
) -> Tuple[int, str, str]:
    """oracle-guard ARGS in ``repo``: (exit code, stdout, stderr), stderr a
    pseudo-terminal when ``tty``, else a pipe."""
    env = dict(os.environ, ORACLE_GUARD_PROGRESS_AFTER=after, TERM="xterm")
    for runner in ("PRE_COMMIT", "PREK_HOOK_STAGE"):  # as a person at a terminal runs it
        env.pop(runner, None)
    env.update(extra or {})
    command = [sys.executable, "-m", "oracle_guard", *args]
    if not tty:
        done = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True)
        return done.returncode, done.stdout, done.stderr
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        command,
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=follower,
        stdin=subprocess.DEVNULL,
    )
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: every end of the terminal is closed
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    out = proc.stdout.read().decode() if proc.stdout else ""
    proc.wait()
    return proc.returncode, out, seen.decode("utf-8", "replace")


LINE = f"oracle-guard: hashing: {FILES:,} of {FILES:,} files"


def test_a_check_on_a_terminal_shows_the_files_hashed(locked, tmp_path):
    report = tmp_path / "report.json"
    args = ["check", "--only", "fixture-lock", "--no-cache", "--now", NOW]
    rc, out, err = guard(locked, [*args, "--output", f"json={report}"], tty=True)
    assert rc == 0, (out, err)
    assert LINE in err  # the last count, whatever the throttle left out before it
    assert err.rstrip("\r\n").endswith("\r\x1b[K")  # the line is taken away at the end
    assert "hashing" not in out and "\x1b" not in out
    assert "hashing" not in report.read_text()
    assert json.loads(report.read_text())["checks"]["fixture-lock"]["status"] == "passed"


def test_lock_on_a_terminal_shows_the_files_hashed(locked):
    rc, out, err = guard(locked, ["lock", "--no-cache"], tty=True)
    assert rc == 0, (out, err)
    assert LINE in err
    assert "hashing" not in (locked / "fx.lock").read_text()


def test_no_progress_when_stderr_is_not_a_terminal(locked):
    rc, out, err = guard(locked, ["check", "--only", "fixture-lock", "--no-cache"], tty=False)
    assert rc == 0, (out, err)
    assert "hashing" not in err and "\r" not in err and "hashing" not in out


def test_no_progress_before_the_threshold(locked):
    # the near miss on a terminal: a run shorter than the threshold stays silent
    args = ["check", "--only", "fixture-lock", "--no-cache"]
    rc, out, err = guard(locked, args, tty=True, after="3600")
    assert rc == 0, (out, err)
    assert "hashing" not in err


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_line_is_throttled():
    stream = Terminal()
    progress.started(stream, {progress.AFTER_ENV: "0"})
    try:
        counter = progress.counting("hashing", 10_000)
        for _ in range(10_000):
            counter.advance()
    finally:
        progress.stopped()
    lines = stream.getvalue().count("\roracle-guard: hashing:")
    assert 1 <= lines < 100, lines  # the first, the last, and at most four a second between
    assert "10,000 of 10,000 files" in stream.getvalue()


def test_a_threshold_that_is_no_number_is_the_default():
    stream = Terminal()
    meter = progress.started(stream, {progress.AFTER_ENV: "soon"})
    progress.stopped()
    assert meter is not None and meter._after == progress.DEFAULT_AFTER


def test_no_progress_in_a_hook_pre_commit_runs(locked):
    # pre-commit and prek hand a hook a terminal when their colour is on, and show
    # its output only once it ends: a progress line there is noise
    args = ["check", "--only", "fixture-lock", "--no-cache"]
    for runner in ({"PRE_COMMIT": "1"}, {"PREK_HOOK_STAGE": "pre-commit"}):
        rc, out, err = guard(locked, args, tty=True, extra=runner)
        assert rc == 0, (out, err)
        assert "hashing" not in err, runner


def test_off_the_terminal_counting_costs_nothing():
    assert progress.started(io.StringIO(), {progress.AFTER_ENV: "0"}) is None
    counter = progress.counting("hashing", 3)
    counter.advance()
    assert counter.done == 0  # nothing is counted, nothing is shown
