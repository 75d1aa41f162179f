"""Real fault injection for tests: a ``git`` that dies, a ``git`` that is not
there, object files that are gone or garbage, and the CLI run as a process."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Union

from testing.git import GIT_ENV, REVISION_ENV, git

REAL_GIT = shutil.which("git")


def _write_script(folder: Path, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "git"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return folder


def _counter(folder: Path) -> str:
    """Shell lines that number this invocation (1, 2, ...) in $n and log its arguments,
    under a lock: the guard runs some git processes side by side (rev-list and
    diff-tree beside the hooks), and a count read while another writes it is lost."""
    count, log = shlex.quote(str(folder / "count")), shlex.quote(str(folder / "calls"))
    lock = shlex.quote(str(folder / "lock"))
    return (
        f"exec 9>>{lock}\nflock 9\n"
        f"n=$(( $(cat {count} 2>/dev/null || echo 0) + 1 ))\n"
        f"echo $n > {count}\n"
        f'echo "$*" >> {log}\n'
        "exec 9>&-\n"
    )


def dying_git(folder: Path, after: int, how: str = "kill", deaths: Optional[int] = None) -> Path:
    """A folder whose ``git`` runs the real git for its first ``after`` invocations,
    then dies: ``kill`` sends itself SIGKILL, ``exit`` exits 128 (git's fatal code)
    without a word. With ``deaths`` only that many invocations die (a transient
    fault); later ones are the real git again. Put the folder first on PATH."""
    death = {"kill": "kill -9 $$\n", "exit": "exit 128\n"}[how]
    last = after + deaths if deaths is not None else 10**9
    return _write_script(
        folder,
        _counter(folder)
        + f"if [ $n -gt {after} ] && [ $n -le {last} ]; then {death}fi\n"
        + f'exec {shlex.quote(REAL_GIT)} "$@"\n',
    )


def logging_git(folder: Path) -> Path:
    """A ``git`` that runs the real one and logs each invocation's arguments."""
    return dying_git(folder, after=10**6)


def calls(folder: Path) -> List[str]:
    """The logged invocations of a wrapper, without the leading ``-C DIR`` and
    ``-c key=value`` options."""
    log = folder / "calls"
    if not log.exists():
        return []
    out = []
    for line in log.read_text().splitlines():
        words = line.split()
        while words[:1] in (["-C"], ["-c"]):
            words = words[2:]
        out.append(" ".join(words))
    return out


def batch_dies_after_first_object(folder: Path) -> Path:
    """A ``git`` whose ``cat-file --batch`` answers one request, then exits 0;
    every other command is the real git. The wrapper closes its end of the
    request pipe before the answer goes out, so the next request always meets
    a closed pipe (EPIPE), not a race."""
    real = shlex.quote(REAL_GIT)
    return _write_script(
        folder,
        _counter(folder)
        + 'for arg in "$@"; do [ "$arg" = --batch ] && batch=1; done\n'
        + 'if [ -n "$batch" ]; then\n'
        + "  read -r request; exec 0<&-\n"
        + f'  printf \'%s\\n\' "$request" | {real} "$@"; exit 0\n'
        + "fi\n"
        + f'exec {real} "$@"\n',
    )


def path_with(folder: Path) -> str:
    return f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"


def object_file(repo: Path, oid: str) -> Path:
    """The loose object file of ``oid`` (the repository must not be packed)."""
    git_dir = Path(git(repo, "rev-parse", "--absolute-git-dir").strip())
    path = git_dir / "objects" / oid[:2] / oid[2:]
    assert path.is_file(), f"{oid} is not a loose object in {repo}"
    return path


def delete_object(repo: Path, oid: str) -> None:
    object_file(repo, oid).unlink()


def corrupt_object(repo: Path, oid: str) -> None:
    """Overwrite the object's file with bytes that are not zlib data."""
    path = object_file(repo, oid)
    path.chmod(0o644)
    path.write_bytes(b"this is not a zlib stream\n" * 4)


def blob_id(repo: Path, rev_path: str) -> str:
    """The object id of ``REV:PATH`` or ``:PATH`` (the index)."""
    return git(repo, "rev-parse", rev_path).strip()


def cli_env(path: Optional[str] = None, **more: str) -> Dict[str, str]:
    """This process's environment without revision variables, a fixed git
    identity, and ``path`` as PATH when given."""
    env = {k: v for k, v in os.environ.items() if k not in REVISION_ENV}
    env.update(GIT_ENV)
    if path is not None:
        env["PATH"] = path
    env.update(more)
    return env


def run_cli(
    args: Sequence[str], env: Dict[str, str], cwd: Optional[Union[str, Path]] = None
) -> subprocess.CompletedProcess:
    """``python -m oracle_guard ARGS`` as its own process (the interpreter by
    absolute path, so an empty PATH still starts it); text output."""
    return subprocess.run(
        [sys.executable, "-m", "oracle_guard", *args],
        env=env,
        cwd=None if cwd is None else str(cwd),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
    )
