"""Real git servers for tests: bare repositories with the hook installed,
pushes through real ``git push``, and a ``git daemon`` on 127.0.0.1."""

from __future__ import annotations

import contextlib
import io
import os
import re
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Union

from testing.git import git, init_repo
from testing.oracle import NOW  # the hook's clock in every push unless a test says otherwise

# Variables that change how the server-side hook judges a push; a push's
# environment never inherits them from the test process.
SERVER_ENV = (
    "GL_ID",
    "GL_USERNAME",
    "GITEA_PUSHER_NAME",
    "GL_USER",
    "GITHUB_USER_LOGIN",
    "REMOTE_USER",
    "ORACLE_GUARD_NOW",
)
ZERO = "0" * 40


def install_hook(repo: Union[str, Path], *args: str) -> str:
    """``oracle-guard install-pre-receive REPO ARGS`` in-process; returns what it printed.
    Raises AssertionError when it does not exit 0."""
    from oracle_guard.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["install-pre-receive", str(repo), *args], env={})
    if rc != 0:
        raise AssertionError(f"install-pre-receive exited {rc}: {err.getvalue()}")
    return out.getvalue()


def make_server(
    path: Union[str, Path], *, object_format: Optional[str] = None, hook: bool = True
) -> Path:
    """A bare repository (default branch main), with the hook installed."""
    path = Path(path)
    if object_format is None:
        init_repo(path, bare=True)
    else:
        subprocess.run(
            [
                "git",
                "init",
                "-q",
                "--bare",
                "-b",
                "main",
                f"--object-format={object_format}",
                str(path),
            ],
            check=True,
        )
    if hook:
        install_hook(path)
    return path


def make_client(
    path: Union[str, Path], server: Path, *, object_format: Optional[str] = None
) -> Path:
    """A working repository whose remote ``origin`` is ``server`` over file://."""
    path = Path(path)
    if object_format is None:
        init_repo(path)
    else:
        subprocess.run(
            ["git", "init", "-q", "-b", "main", f"--object-format={object_format}", str(path)],
            check=True,
        )
    git(path, "remote", "add", "origin", file_url(server))
    return path


def file_url(repo: Path) -> str:
    return Path(repo).resolve().as_uri()


def push_env(**variables: str) -> Dict[str, str]:
    """The test process's environment without any server variable, the hook's
    clock fixed at NOW, then ``variables`` (a file:// push hands its environment
    to the receiving git, hence to the hook)."""
    env = {k: v for k, v in os.environ.items() if k not in SERVER_ENV}
    env["ORACLE_GUARD_NOW"] = NOW
    env.update(variables)
    return env


@dataclass
class Push:
    rc: int
    stderr: str

    @property
    def remote(self) -> List[str]:
        """What the server said: the text of every ``remote:`` line."""
        return [
            line[len("remote: ") :].rstrip()
            for line in self.stderr.splitlines()
            if line.startswith("remote: ")
        ]

    @property
    def guard(self) -> List[str]:
        """The hook's lines, without a GL-HOOK-ERR prefix."""
        lines = [line.replace("GL-HOOK-ERR: ", "", 1) for line in self.remote]
        return [line for line in lines if line.startswith("oracle-guard:")]

    def findings(self) -> List[str]:
        """``ref: path: code`` of every finding line, without commit id and line
        number: 'refs/heads/main: seeds/a.json: seed-rewritten' ('-' for no path)."""
        from oracle_guard.checks.codes import CODES

        out = []
        for line in self.guard:
            parts = line[len("oracle-guard: ") :].split(": ")
            ref = parts[0].split(" (")[0]
            if len(parts) >= 3 and parts[1] in CODES:  # about the ref itself: no path
                out.append(f"{ref}: -: {parts[1]}")
            elif len(parts) >= 4 and parts[2] in CODES:
                path = re.sub(r":[0-9]+$", "", parts[1])
                out.append(f"{ref}: {path}: {parts[2]}")
        return out


def push(
    client: Path, *args: str, env: Optional[Dict[str, str]] = None, remote: str = "origin"
) -> Push:
    """``git push REMOTE ARGS`` from ``client``; ``env`` defaults to push_env()."""
    proc = subprocess.run(
        ["git", "-C", str(client), "push", remote, *args],
        env=env if env is not None else push_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        timeout=60,
    )
    return Push(proc.returncode, proc.stderr.decode("utf-8", "replace"))


def rev(repo: Path, ref: str) -> Optional[str]:
    """The object ``ref`` names in ``repo``, or None when it does not exist."""
    proc = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", ref],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    return proc.stdout.decode().strip() or None


def fast_commits(
    repo: Path,
    count: int,
    *,
    branch: str = "main",
    files: Optional[Dict[int, Dict[str, bytes]]] = None,
    path: str = "src/gen.txt",
) -> str:
    """Append ``count`` commits to ``branch`` with one ``git fast-import``: commit i
    writes ``path`` (content i) and whatever ``files[i]`` names; returns the tip."""
    files = files or {}
    parent = git(repo, "rev-parse", f"refs/heads/{branch}").strip()
    stream = io.BytesIO()
    when = 1_700_000_000
    for i in range(count):
        changes = {path: f"{i}\n".encode(), **files.get(i, {})}
        message = f"generated {i}\n".encode()
        stream.write(f"commit refs/heads/{branch}\n".encode())
        stream.write(f"committer Test Author <author@example.invalid> {when + i} +0000\n".encode())
        stream.write(b"data %d\n%s" % (len(message), message))
        if i == 0:
            stream.write(f"from {parent}\n".encode())
        for name, data in changes.items():
            stream.write(b"M 100644 inline %s\ndata %d\n%s\n" % (name.encode(), len(data), data))
        stream.write(b"\n")
    git(repo, "fast-import", "--quiet", "--force", input=stream.getvalue())
    tip = git(repo, "rev-parse", f"refs/heads/{branch}").strip()
    if git(repo, "symbolic-ref", "HEAD").strip() == f"refs/heads/{branch}":
        git(repo, "reset", "-q", "--hard", tip)  # the working tree follows the branch
    return tip


# -- git daemon -----------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def listening(process: subprocess.Popen, port: int, wait_s: float, what: str, log: Path) -> bool:
    """Wait until ``process`` accepts on ``port``: True; False when it exited
    first (another process took the port); raises after ``wait_s``."""
    deadline = time.monotonic() + wait_s
    while process.poll() is None and not _accepts(port):
        if time.monotonic() > deadline:
            raise AssertionError(
                f"{what} did not listen on port {port} within {wait_s:g} s: "
                f"{log.read_text(errors='replace')}"
            )
        time.sleep(0.05)
    return process.poll() is None


@dataclass
class Daemon:
    process: subprocess.Popen
    port: int
    log: Path

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}"


@contextlib.contextmanager
def git_daemon(base_path: Path, env: Dict[str, str], *, wait_s: float = 10.0) -> Iterator[Daemon]:
    """``git daemon --enable=receive-pack`` serving ``base_path`` on 127.0.0.1;
    killed on exit whatever happens. The hooks it runs get ``env``."""
    log = Path(base_path) / "daemon.log"
    # git-daemon itself, not the 'git daemon' wrapper: the pid stopped is the server's
    exec_path = subprocess.run(
        ["git", "--exec-path"], stdout=subprocess.PIPE, check=True, text=True
    ).stdout.strip()
    for _attempt in range(3):  # another process may take the port first
        port = free_port()
        with open(log, "wb") as sink:
            process = subprocess.Popen(
                [
                    os.path.join(exec_path, "git-daemon"),
                    "--enable=receive-pack",
                    "--export-all",
                    f"--base-path={base_path}",
                    "--listen=127.0.0.1",
                    f"--port={port}",
                    "--reuseaddr",
                    "--informative-errors",
                    str(base_path),
                ],
                env=env,
                stdout=sink,
                stderr=sink,
                stdin=subprocess.DEVNULL,
            )
        try:
            if listening(process, port, wait_s, "git daemon", log):
                yield Daemon(process, port, log)
                return
        finally:
            process.kill()
            process.wait(timeout=10)
    raise AssertionError(f"git daemon would not start: {log.read_text(errors='replace')}")


def run_pre_receive(
    repo: Path,
    stdin: bytes,
    env: Optional[Dict[str, str]] = None,
) -> subprocess.CompletedProcess:
    """``python -m oracle_guard pre-receive`` the way git runs it: in the repository."""
    return subprocess.run(
        [sys.executable, "-m", "oracle_guard", "pre-receive"],
        cwd=str(repo),
        input=stdin,
        env=env if env is not None else push_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        timeout=60,
    )


def updates(*lines: Sequence[str]) -> bytes:
    return "".join(" ".join(line) + "\n" for line in lines).encode()
