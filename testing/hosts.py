"""Real hosts for tests: Unix accounts, a hook venv other accounts can run, an
sshd of our own on 127.0.0.1, gitolite3 behind it. Everything is started and
stopped by the tests, each process by its own pid. Needs root."""
from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Union

REPO_ROOT = Path(__file__).resolve().parent.parent
SYSTEM_PYTHON = "/usr/bin/python3"  # the project's own Python lives under /root (0700)
PATH = "/usr/local/bin:/usr/bin:/bin"


# -- a world-traversable base folder ---------------------------------------------
def world_base(prefix: str = "og-hosts-") -> Path:
    """A fresh 0755 folder under /var/tmp: other accounts can traverse it
    (/tmp/pytest-of-root is 0700). The caller removes it."""
    base = Path(tempfile.mkdtemp(prefix=prefix, dir="/var/tmp"))
    base.chmod(0o755)
    return base


@contextlib.contextmanager
def world_folder(prefix: str = "og-hosts-") -> Iterator[Path]:
    base = world_base(prefix)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


# -- accounts ------------------------------------------------------------------
@dataclass(frozen=True)
class Account:
    name: str
    uid: int
    gid: int
    home: Path


def _pids_of(uid: int) -> List[int]:
    """Live processes of ``uid`` (zombies are reaped when they are ours, else left
    to their parent: they hold nothing)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid != uid:
                continue
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if state == b"Z":
            with contextlib.suppress(ChildProcessError):
                os.waitpid(int(entry), os.WNOHANG)
            continue
        pids.append(int(entry))
    return pids


def kill_processes_of(uid: int, wait_s: float = 5.0) -> List[int]:
    """SIGKILL every process owned by ``uid``, each by its pid; returns the pids
    that were running. Raises when one is still there after ``wait_s``."""
    found = _pids_of(uid)
    for pid in found:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + wait_s
    while _pids_of(uid):
        if time.monotonic() > deadline:
            raise AssertionError(f"processes of uid {uid} survive SIGKILL: {_pids_of(uid)}")
        time.sleep(0.05)
    return found


@contextlib.contextmanager
def system_account(prefix: str, shell: str = "/bin/sh",
                   base: Optional[Path] = None) -> Iterator[Account]:
    """A Unix account ``<prefix><hex>`` whose home (0755, owned by it) lies in a
    0755 folder (``base``, or a fresh one under /var/tmp); on exit every process
    it still owns is killed and it is removed with ``userdel -r``. Its password
    is '*' (no password, not locked: sshd without PAM refuses locked accounts)."""
    name = f"{prefix}{secrets.token_hex(3)}"[:32]
    own_base = base is None
    parent = world_base() if own_base else Path(base)
    home = parent / name
    subprocess.run(["useradd", "--create-home", "--home-dir", str(home), "--shell", shell,
                    "--user-group", "--password", "*", name],
                   check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        entry = pwd.getpwnam(name)
        home.chmod(0o755)
        yield Account(name, entry.pw_uid, entry.pw_gid, home)
    finally:
        with contextlib.suppress(KeyError):
            uid = pwd.getpwnam(name).pw_uid
            kill_processes_of(uid)
            subprocess.run(["userdel", "-r", name], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)  # -r warns about the mail spool
        shutil.rmtree(home, ignore_errors=True)
        if own_base:
            shutil.rmtree(parent, ignore_errors=True)
    with contextlib.suppress(KeyError):
        pwd.getpwnam(name)
        raise AssertionError(f"account {name} was not removed")


def account_env(account: Account, env: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """A login-like environment for ``account``: nothing of root's but the locale."""
    out = {"HOME": str(account.home), "USER": account.name, "LOGNAME": account.name,
           "PATH": PATH, "LANG": "C.UTF-8"}
    out.update(env or {})
    return out


def run_as(account: Account, argv: Sequence[Union[str, Path]], *,
           env: Optional[Mapping[str, str]] = None, input: Optional[Union[str, bytes]] = None,
           cwd: Optional[Union[str, Path]] = None, check: bool = False,
           timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``argv`` as ``account`` (its uid, gid and no other group), in its home
    unless ``cwd``, with account_env(account, env). Text output, like the CLI
    prints it. ``check`` raises with both streams on a non-zero exit."""
    proc = subprocess.run([str(a) for a in argv], user=account.uid, group=account.gid,
                          extra_groups=[], env=account_env(account, env),
                          cwd=str(cwd or account.home), input=input,
                          text=not isinstance(input, bytes), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, argv))} as {account.name} exited "
                             f"{proc.returncode}:\n{proc.stdout}{proc.stderr}")
    return proc


# -- a venv every account can run ------------------------------------------------
def source_copy(target: Path) -> Path:
    """The work tree's files (tracked and new, not ignored) copied to ``target``:
    pip builds in the source folder, and the work tree is not ours to write."""
    names = subprocess.run(["git", "-C", str(REPO_ROOT), "ls-files", "-z", "--cached",
                            "--others", "--exclude-standard"], check=True,
                           stdout=subprocess.PIPE).stdout.decode().split("\0")
    for name in filter(None, names):
        src = REPO_ROOT / name
        if src.is_file():
            dst = target / name
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    return target


def hook_venv(base: Path) -> Path:
    """A venv at ``base/venv`` made with Debian's /usr/bin/python3, with this
    project installed into it (not editable); world-readable, so a hook run by
    any account can use it. Returns the venv's python. ``base`` and its parents
    must be traversable by those accounts (world_base())."""
    venv = Path(base) / "venv"
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    with tempfile.TemporaryDirectory(prefix="og-src-") as scratch:
        src = source_copy(Path(scratch) / "oracle-guard")
        proc = subprocess.run([str(python), "-m", "pip", "install", "-q",
                               "--disable-pip-version-check", str(src)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if proc.returncode != 0:
            raise AssertionError(f"pip install into {venv} failed:\n{proc.stdout}")
    subprocess.run(["chmod", "-R", "a+rX", str(venv)], check=True)
    return python
