"""How git is started: its environment, its processes, its failures, and its paths' bytes."""

from __future__ import annotations

import os
import subprocess
from typing import IO, Dict, Iterator, List, Optional, Sequence

from oracle_guard.errors import GitError


# Paths are kept as ``str`` decoded with ``surrogateescape`` so names that are
# not UTF-8 survive a round trip; every listing uses ``-z``.
def decode_path(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def encode_path(path: str) -> bytes:
    return path.encode("utf-8", "surrogateescape")


# What the caller's environment may not change in how git reads objects and
# paths: replace refs could swap a base's objects for others (refs/replace/* can
# be pushed), grafts rewrite parents and so merge-bases, and pathspec variables
# change what a folder listing returns. Everything else (GIT_DIR, a server's
# quarantine GIT_OBJECT_DIRECTORY) is kept.
_PATHSPEC_VARIABLES = (
    "GIT_LITERAL_PATHSPECS",
    "GIT_GLOB_PATHSPECS",
    "GIT_NOGLOB_PATHSPECS",
    "GIT_ICASE_PATHSPECS",
)


def git_environment() -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _PATHSPEC_VARIABLES}
    env["GIT_NO_REPLACE_OBJECTS"] = "1"
    env["GIT_GRAFT_FILE"] = os.devnull  # neither $GIT_GRAFT_FILE nor info/grafts
    return env


def trust_repository_owner() -> None:
    """An admin inspects a repository another account owns (doctor, the
    installer run as root): git refuses it (safe.directory) unless told. These
    commands only read it."""
    count = int(os.environ.get("GIT_CONFIG_COUNT") or 0)
    os.environ[f"GIT_CONFIG_KEY_{count}"] = "safe.directory"
    os.environ[f"GIT_CONFIG_VALUE_{count}"] = "*"
    os.environ["GIT_CONFIG_COUNT"] = str(count + 1)


def cannot_run(exc: OSError) -> GitError:
    """git could not be started at all (not installed, not executable)."""
    return GitError(f"cannot run git: {exc.strerror or exc}")


def failure(what: str, code: int, stderr: bytes) -> GitError:
    """git ran and failed: the last line it printed, else its exit code."""
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    detail = lines[-1] if lines else f"exit {code}"
    return GitError(f"git {what} failed: {detail}")


def widen_pipe(pipe: IO[bytes]) -> None:
    """A 1 MiB pipe (Linux): fewer wake-ups between git and the reader."""
    try:
        import fcntl  # deferred: Unix only; elsewhere the ImportError keeps the default pipe

        fcntl.fcntl(pipe.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except (ImportError, OSError):
        pass  # elsewhere, or above /proc/sys/fs/pipe-max-size: the default works


def read_chunks(stream: IO[bytes], most: int = 1 << 20) -> Iterator[bytes]:
    """What a pipe holds, ``most`` bytes at most at a time, as it comes."""
    widen_pipe(stream)
    fd = stream.fileno()
    while True:
        chunk = os.read(fd, most)
        if not chunk:
            return
        yield chunk


class Runner:
    """Runs ``git -C <directory>`` in the environment above."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def command(self, *args: str) -> List[str]:
        return ["git", "-C", self.directory, *args]

    def completed(
        self, *args: str, stdin: Optional[bytes] = None
    ) -> subprocess.CompletedProcess[bytes]:
        """git run to its end, its output kept, whatever its exit code."""
        try:
            return subprocess.run(
                self.command(*args),
                input=stdin,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=git_environment(),
            )
        except OSError as exc:
            raise cannot_run(exc) from None

    def start(
        self,
        args: Sequence[str],
        *,
        stdin: bool = False,
        stderr: int = subprocess.PIPE,
        bufsize: int = -1,
    ) -> subprocess.Popen[bytes]:
        """git started beside this process, its stdout a pipe (stdin too when asked)."""
        try:
            return subprocess.Popen(
                self.command(*args),
                stdin=subprocess.PIPE if stdin else None,
                stdout=subprocess.PIPE,
                stderr=stderr,
                bufsize=bufsize,
                env=git_environment(),
            )
        except OSError as exc:
            raise cannot_run(exc) from None

    def run(self, *args: str, check: bool = True, stdin: Optional[bytes] = None) -> bytes:
        """stdout; a failure is a GitError, or b"" with ``check=False``."""
        proc = self.completed(*args, stdin=stdin)
        if check and proc.returncode != 0:
            raise failure(" ".join(args[:2]), proc.returncode, proc.stderr)
        return proc.stdout if check or proc.returncode == 0 else b""

    def ok(self, *args: str) -> bool:
        try:
            proc = subprocess.run(
                self.command(*args),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=git_environment(),
            )
        except OSError as exc:
            raise cannot_run(exc) from None
        return proc.returncode == 0

    def answer(self, *args: str) -> Optional[bytes]:
        """stdout when git answers yes (exit 0), None when it answers no (exit 1);
        a git that dies or fails otherwise is a GitError, never a "no"."""
        proc = self.completed(*args)
        if proc.returncode == 1:
            return None
        if proc.returncode != 0:
            raise failure(" ".join(args[:2]), proc.returncode, proc.stderr)
        return proc.stdout
