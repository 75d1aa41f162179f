"""Real hosts for tests: Unix accounts, a hook venv other accounts can run, an
sshd of our own on 127.0.0.1, gitolite3 behind it. Everything is started and
stopped by the tests, each process by its own pid. Needs root."""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

REPO_ROOT = Path(__file__).resolve().parent.parent
SYSTEM_PYTHON = "/usr/bin/python3"  # the project's own Python lives under /root (0700)
PATH = "/usr/local/bin:/usr/bin:/bin"
# pytest-xdist's workerinput key: the folder under /var/tmp its workers share
SHARED_HOSTS = "og_shared_hosts"


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
def system_account(
    prefix: str, shell: str = "/bin/sh", base: Optional[Path] = None
) -> Iterator[Account]:
    """A Unix account ``<prefix><hex>`` whose home (0755, owned by it) lies in a
    0755 folder (``base``, or a fresh one under /var/tmp); on exit every process
    it still owns is killed and it is removed with ``userdel -r``. Its password
    is '*' (no password, not locked: sshd without PAM refuses locked accounts)."""
    name = f"{prefix}{secrets.token_hex(3)}"[:32]
    own_base = base is None
    parent = world_base() if own_base else Path(base)
    home = parent / name
    subprocess.run(
        [
            "useradd",
            "--create-home",
            "--home-dir",
            str(home),
            "--shell",
            shell,
            "--user-group",
            "--password",
            "*",
            name,
        ],
        check=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        entry = pwd.getpwnam(name)
        home.chmod(0o755)
        yield Account(name, entry.pw_uid, entry.pw_gid, home)
    finally:
        with contextlib.suppress(KeyError):
            uid = pwd.getpwnam(name).pw_uid
            kill_processes_of(uid)
            subprocess.run(
                ["userdel", "-r", name], stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )  # -r warns about the mail spool
        shutil.rmtree(home, ignore_errors=True)
        if own_base:
            shutil.rmtree(parent, ignore_errors=True)
    with contextlib.suppress(KeyError):
        pwd.getpwnam(name)
        raise AssertionError(f"account {name} was not removed")


def account_env(account: Account, env: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """A login-like environment for ``account``: nothing of root's but the locale."""
    out = {
        "HOME": str(account.home),
        "USER": account.name,
        "LOGNAME": account.name,
        "PATH": PATH,
        "LANG": "C.UTF-8",
    }
    out.update(env or {})
    return out


def run_as(
    account: Account,
    argv: Sequence[Union[str, Path]],
    *,
    env: Optional[Mapping[str, str]] = None,
    input: Optional[Union[str, bytes]] = None,
    cwd: Optional[Union[str, Path]] = None,
    check: bool = False,
    timeout: float = 120,
) -> subprocess.CompletedProcess:
    """Run ``argv`` as ``account`` (its uid, gid and no other group), in its home
    unless ``cwd``, with account_env(account, env). Text output, like the CLI
    prints it. ``check`` raises with both streams on a non-zero exit."""
    proc = subprocess.run(
        [str(a) for a in argv],
        user=account.uid,
        group=account.gid,
        extra_groups=[],
        env=account_env(account, env),
        cwd=str(cwd or account.home),
        input=input,
        text=not isinstance(input, bytes),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        timeout=timeout,
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(map(str, argv))} as {account.name} exited "
            f"{proc.returncode}:\n{proc.stdout}{proc.stderr}"
        )
    return proc


# -- a venv every account can run ------------------------------------------------
def source_copy(target: Path) -> Path:
    """The work tree's files (tracked and new, not ignored) copied to ``target``:
    pip builds in the source folder, and the work tree is not ours to write."""
    names = (
        subprocess.run(
            [
                "git",
                "-C",
                str(REPO_ROOT),
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
            ],
            check=True,
            stdout=subprocess.PIPE,
        )
        .stdout.decode()
        .split("\0")
    )
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
        proc = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(src)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        if proc.returncode != 0:
            raise AssertionError(f"pip install into {venv} failed:\n{proc.stdout}")
    subprocess.run(["chmod", "-R", "a+rX", str(venv)], check=True)
    return python


def shared_hook_venv(shared: Path) -> Path:
    """hook_venv(shared) built by the first caller and reused by the others (the
    workers of one xdist run, serialised by a lock file); the run removes it."""
    import fcntl

    python = Path(shared) / "venv" / "bin" / "python"
    ready = Path(shared) / "venv.ready"
    with open(Path(shared) / "venv.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not ready.exists():
            shutil.rmtree(Path(shared) / "venv", ignore_errors=True)  # a half-built one
            hook_venv(shared)
            ready.touch()
    return python


# -- sshd ----------------------------------------------------------------------
def keygen(folder: Path, name: str) -> Path:
    """An ed25519 key pair ``folder/name`` (+ ``.pub``), no passphrase."""
    key = Path(folder) / name
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True
    )
    return key


def public(key: Path) -> str:
    """``type base64`` of ``key``'s public half."""
    return " ".join(Path(f"{key}.pub").read_text().split()[:2])


@dataclass
class Sshd:
    process: subprocess.Popen
    port: int
    folder: Path
    log: Path

    @property
    def config(self) -> Path:
        return self.folder / "sshd_config"

    def argv(self, key: Path, *options: str) -> List[str]:
        """ssh to this server with ``key``; ``options`` are more -o values, passed
        as argv (no shell), so quotes and spaces reach ssh's own parser."""
        argv = [
            "ssh",
            "-F",
            "/dev/null",
            "-i",
            str(key),
            "-p",
            str(self.port),
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            f"UserKnownHostsFile={self.folder}/known_hosts",
            "-o",
            "StrictHostKeyChecking=accept-new",
            "-o",
            "BatchMode=yes",
            "-o",
            "LogLevel=ERROR",
        ]
        for option in options:
            argv += ["-o", option]
        return argv

    def ssh_command(self, key: Path, *options: str) -> str:
        """A GIT_SSH_COMMAND for ``key`` to this server; ``options`` are more
        ``-o`` values (e.g. 'SetEnv=GL_USER=alice')."""
        return " ".join(shlex.quote(p) for p in self.argv(key, *options))

    def url(self, account: Account, path: str) -> str:
        return f"ssh://{account.name}@127.0.0.1:{self.port}/{path.lstrip('/')}"

    def ssh(
        self,
        key: Path,
        account: Account,
        command: str,
        *options: str,
        input: Optional[bytes] = None,
    ) -> subprocess.CompletedProcess:
        """``ssh account@127.0.0.1 command`` with ``key``; text output."""
        argv = self.argv(key, *options) + [f"{account.name}@127.0.0.1", command]
        return subprocess.run(
            argv, input=input, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60
        )


# what docs/how-to/server-ssh.md allows: the locale (Debian's default) and git's protocol
ACCEPT_ENV = "LANG LC_* GIT_PROTOCOL"
# every host's pusher variable too, so spoofing by SetEnv is really attempted (and
# doctor calls it a problem)
SPOOF_ACCEPT_ENV = "LANG LC_* GL_* REMOTE_USER GITEA_* GITHUB_*"
SSHD_CONFIG = """\
Port {port}
ListenAddress 127.0.0.1
HostKey {folder}/host_ed25519
PidFile {folder}/sshd.pid
UsePAM no
AuthenticationMethods publickey
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
AuthorizedKeysFile .ssh/authorized_keys
StrictModes yes
AllowUsers {users}
AcceptEnv {accept_env}
PermitUserEnvironment {permit_user_environment}
LogLevel VERBOSE
"""


@contextlib.contextmanager
def sshd(
    folder: Path,
    users: Sequence[str],
    *,
    wait_s: float = 10.0,
    accept_env: str = ACCEPT_ENV,
    permit_user_environment: str = "REMOTE_USER",
) -> Iterator[Sshd]:
    """``/usr/sbin/sshd -D -e`` with its own config and host key in ``folder``, on
    127.0.0.1 at a free port, letting in only ``users`` and the client variables
    ``accept_env`` names. Stopped by its pid on exit (its session children with
    it); raises if it is still there."""
    from testing.server import free_port, listening

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # privilege separation dir
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(folder / "host_ed25519")],
        check=True,
    )
    log = folder / "sshd.log"
    for _attempt in range(3):  # another process may take the port first
        port = free_port()
        config = folder / "sshd_config"
        config.write_text(
            SSHD_CONFIG.format(
                port=port,
                folder=folder,
                users=" ".join(users),
                accept_env=accept_env,
                permit_user_environment=permit_user_environment,
            )
        )
        subprocess.run(["/usr/sbin/sshd", "-t", "-f", str(config)], check=True)
        with open(log, "ab") as sink:
            process = subprocess.Popen(
                ["/usr/sbin/sshd", "-D", "-e", "-f", str(config)],
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=sink,
                start_new_session=True,
            )
        try:
            if listening(process, port, wait_s, "sshd", log):
                yield Sshd(process, port, folder, log)
                return
        finally:
            stop(process)
    raise AssertionError(f"sshd would not start: {log.read_text()}")


def stop(process: subprocess.Popen, wait_s: float = 10.0) -> None:
    """SIGTERM ``process`` by its pid, SIGKILL after ``wait_s``; reaped either way."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=wait_s)


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def authorize(account: Account, lines: Sequence[str]) -> Path:
    """Write ``~/.ssh/authorized_keys`` for ``account`` as StrictModes wants it:
    owned by the account, ~/.ssh 0700, the file 0600."""
    ssh = account.home / ".ssh"
    ssh.mkdir(mode=0o700, exist_ok=True)
    keys = ssh / "authorized_keys"
    keys.write_text("".join(line + "\n" for line in lines))
    keys.chmod(0o600)
    for path in (ssh, keys):
        os.chown(path, account.uid, account.gid)
    return keys


# -- gitolite3 -----------------------------------------------------------------
GITOLITE_CONF = """\
repo gitolite-admin
    RW+     =   admin

repo app
    RW+     =   alice
    RW      =   bob
"""
GITOLITE_RC_LOCAL_CODE = '# LOCAL_CODE                =>  "$ENV{HOME}/local",'


def client_env(ssh_command: str, **variables: str) -> Dict[str, str]:
    """A root client's push environment over ssh: testing.server.push_env()
    (no server variable, fixed identity) with GIT_SSH_COMMAND."""
    from testing.server import push_env

    env = push_env(**variables)
    env.pop("ORACLE_GUARD_NOW", None)  # the server's clock is the hook's
    env["GIT_SSH_COMMAND"] = ssh_command
    return env


@dataclass
class Gitolite:
    """gitolite3 for ``account`` behind ``sshd``; ``keys`` by gitolite user name
    (admin, alice, bob); ``admin_clone`` is root's clone of gitolite-admin."""

    account: Account
    sshd: Sshd
    keys: Dict[str, Path]
    admin_clone: Path

    @property
    def repositories(self) -> Path:
        return self.account.home / "repositories"

    @property
    def rc(self) -> Path:
        return self.account.home / ".gitolite.rc"

    def repo(self, name: str) -> Path:
        return self.repositories / f"{name}.git"

    def url(self, name: str) -> str:
        # gitolite's forced command takes the path after the host, without .git
        return f"{self.account.name}@127.0.0.1:{name}"

    def env(self, user: str, *options: str, **variables: str) -> Dict[str, str]:
        """The environment of a push by gitolite user ``user`` (by key);
        ``options`` are more ssh -o values (e.g. 'SetEnv=GL_USER=alice')."""
        return client_env(self.sshd.ssh_command(self.keys[user], *options), **variables)

    def run(
        self, *argv: Union[str, Path], check: bool = True, env: Optional[Mapping[str, str]] = None
    ) -> subprocess.CompletedProcess:
        """``argv`` as the gitolite account, in its home."""
        return run_as(self.account, argv, check=check, env=env)

    def gitolite(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return self.run("gitolite", *args, check=check)

    def configure(self, conf: str) -> str:
        """Push ``conf`` as conf/gitolite.conf through gitolite-admin, as an
        admin does; returns what the push printed."""
        from testing.git import git

        (self.admin_clone / "conf" / "gitolite.conf").write_text(conf)
        git(self.admin_clone, "add", "-A")
        git(self.admin_clone, "commit", "-q", "--allow-empty", "-m", "conf")
        proc = subprocess.run(
            ["git", "-C", str(self.admin_clone), "push", "-q", "origin", "HEAD:master"],
            env=self.env("admin"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
        if proc.returncode != 0:
            raise AssertionError(f"gitolite-admin push failed:\n{proc.stderr}")
        return proc.stderr

    def edit_rc(self, old: str, new: str) -> None:
        """Replace the line ``old`` (whitespace-insensitive) in ~/.gitolite.rc."""
        lines = self.rc.read_text().splitlines(keepends=True)
        want = " ".join(old.split())
        hits = [i for i, line in enumerate(lines) if " ".join(line.split()) == want]
        if len(hits) != 1:
            raise AssertionError(f"{old!r} is on {len(hits)} lines of {self.rc}")
        lines[hits[0]] = new + "\n"
        self.rc.write_text("".join(lines))


@contextlib.contextmanager
def gitolite_host(
    base: Path,
    keys_folder: Path,
    *,
    users: Sequence[str] = ("alice", "bob"),
    conf: str = GITOLITE_CONF,
) -> Iterator[Gitolite]:
    """A gitolite account in ``base`` (``gitolite setup -pk admin.pub``), an sshd
    for it, and ``users``' keys and ``conf`` pushed through gitolite-admin."""
    from testing.git import git

    Path(keys_folder).mkdir(parents=True, exist_ok=True)
    keys = {name: keygen(keys_folder, name) for name in ("admin", *users)}
    with system_account("ogl", shell="/bin/sh", base=base) as account:
        pub = account.home / "admin.pub"
        shutil.copy(f"{keys['admin']}.pub", pub)
        os.chown(pub, account.uid, account.gid)
        run_as(account, ["gitolite", "setup", "-pk", pub], check=True)
        # push options reach hooks only when advertised (a spoofing route to test)
        run_as(
            account,
            ["git", "config", "--global", "receive.advertisePushOptions", "true"],
            check=True,
        )
        # the admin's step: git refuses malformed objects for every repository
        run_as(account, ["git", "config", "--global", "receive.fsckObjects", "true"], check=True)
        with sshd(base / f"sshd-{account.name}", [account.name]) as server:
            clone = keys_folder / "gitolite-admin"
            host = Gitolite(account, server, keys, clone)
            proc = subprocess.run(
                ["git", "clone", "-q", host.url("gitolite-admin"), str(clone)],
                env=host.env("admin"),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                timeout=60,
            )
            if proc.returncode != 0:
                raise AssertionError(
                    f"cloning gitolite-admin failed:\n{proc.stderr}\n{server.log.read_text()}"
                )
            for name in users:
                shutil.copy(f"{keys[name]}.pub", clone / "keydir" / f"{name}.pub")
            git(clone, "config", "user.name", "Admin")
            git(clone, "config", "user.email", "admin@example.invalid")
            host.configure(conf)
            yield host


# -- the catalogue every host runs ----------------------------------------------
SIGNERS = ".oracle-guard/allowed_signers"
SEEDS = "seeds/a.json"
TESTS = "tests/test_app.py"  # the owners' test, which a conftest could deselect
TESTS_TEXT = "def test_app():\n    assert open('src/app.py').read() == 'v2\\n'\n"
IDENTITY_VARIABLES = (
    "GL_USER",
    "GL_USERNAME",
    "GITEA_PUSHER_NAME",
    "GITHUB_USER_LOGIN",
    "REMOTE_USER",
)


def host_contract(identity_env: str) -> str:
    """Seeds protected, src/ and tests/ the write set, tests/ the scoring tree
    test-tamper judges, alice an owner by ``identity_env`` and by signature,
    scratch branches deletable by anyone, oracle branches by owners."""
    return f"""\
version: 1
seeds:
  - {{paths: ["seeds/*.json"], format: json-array}}
write_set:
  allow: ["src/**", "tests/**"]
  owners: [alice]
tamper:
  paths: ["tests/**"]
identity_env: {identity_env}
deletable_refs: ["refs/heads/scratch/*"]
deletable:
  owners: ["refs/heads/oracle/*"]
authority:
  signers: {SIGNERS}
"""


class Site:
    """One fresh repository on a real host and root's clone of it. ``env_for(user,
    *ssh_options)`` is the environment of a push by ``user``'s key; ``server_git``
    runs git in the server's repository as the account that owns it."""

    def __init__(
        self, client: Path, remote: str, repo: Path, keys: Mapping[str, Path], env_for, server_git
    ) -> None:
        self.client, self.remote, self.repo, self.keys = client, remote, repo, keys
        self.env_for, self.server_git = env_for, server_git

    def seed(self, identity_env: str, push_as: str = "alice") -> None:
        """The first push: contract, signers (alice's key), seeds, src, and a
        scratch branch. Into an empty repository it brings its own rules."""
        from testing.git import commit, git, init_repo

        init_repo(self.client)
        git(self.client, "remote", "add", "origin", self.remote)
        commit(
            self.client,
            {
                ".oracle-guard.yaml": host_contract(identity_env),
                SIGNERS: f"alice {public(self.keys['alice'])}\n",
                SEEDS: "[1, 2]\n",
                "src/app.py": "v1\n",
                TESTS: TESTS_TEXT,
            },
            "the oracle",
        )
        pushed = self.push(push_as, "main", "main:refs/heads/scratch/x", "main:refs/heads/oracle/x")
        assert pushed.rc == 0, pushed.stderr

    def rev(self, ref: str) -> Optional[str]:
        proc = self.server_git("rev-parse", "--verify", "--quiet", ref)
        return proc.stdout.strip() or None

    def push(
        self,
        user: str,
        *args: str,
        ssh_options: Sequence[str] = (),
        git_options: Sequence[str] = (),
        **variables: str,
    ):
        """``git push origin ARGS`` by ``user``'s key; a testing.server.Push."""
        from testing.server import Push

        proc = subprocess.run(
            ["git", "-C", str(self.client), *git_options, "push", "origin", *args],
            env=self.env_for(user, *ssh_options, **variables),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            timeout=120,
        )
        return Push(proc.returncode, proc.stderr.decode("utf-8", "replace"))

    def commit(self, files: Mapping[str, str], message: str = "change") -> str:
        from testing.git import commit

        return commit(self.client, files, message)

    def signed(self, files: Mapping[str, str], signer, message: str = "signed") -> str:
        """A commit signed with ``signer``'s ssh key (a name in ``keys``, or a key
        file), as an owner signs one."""
        from testing.git import git, write

        write(self.client, files)
        git(self.client, "add", "-A")
        git(
            self.client,
            "-c",
            "gpg.format=ssh",
            "-c",
            f"user.signingkey={self.keys[signer] if isinstance(signer, str) else signer}",
            "commit",
            "-q",
            "-S",
            "-m",
            message,
        )
        return git(self.client, "rev-parse", "HEAD").strip()

    def raw_commit(self, rev: str) -> bytes:
        return subprocess.run(
            ["git", "-C", str(self.client), "cat-file", "commit", rev],
            stdout=subprocess.PIPE,
            check=True,
        ).stdout

    def write_commit(self, raw: bytes) -> str:
        from testing.git import git

        return git(self.client, "hash-object", "-t", "commit", "-w", "--stdin", input=raw).strip()

    def reset_to_root(self) -> None:
        from testing.git import git

        root = git(self.client, "rev-list", "--max-parents=0", "HEAD").split()[0]
        git(self.client, "reset", "-q", "--hard", root)


def copy_site(template: Site, repo: Path, client: Path, remote: str, server_git) -> Site:
    """A fresh repository as ``template`` stood after its first push: the server's
    copied by root with owners, modes and hook links kept (``cp -a``), the client's
    with origin pointed at the copy. A test gets its own repository without paying
    for another first push; the template's own push was judged for real."""
    from testing.git import git

    subprocess.run(["cp", "-a", "--", str(template.repo), str(repo)], check=True)
    shutil.copytree(template.client, client, symlinks=True)
    git(client, "remote", "set-url", "origin", remote)
    return Site(client, remote, repo, template.keys, template.env_for, server_git)


class Templates:
    """One seeded Site per key, made by ``make(key)`` on first use and copied by
    ``site(key, ...)`` for every test after (tests/hosts/ module fixtures)."""

    def __init__(self, make) -> None:
        self._make, self._made = make, {}

    def site(self, key: str, repo: Path, client: Path, remote: str, server_git) -> Site:
        if key not in self._made:
            self._made[key] = self._make(key)
        return copy_site(self._made[key], repo, client, remote, server_git)


@dataclass(frozen=True)
class Case:
    """A push by ``pusher`` of what ``make`` commits; ``codes`` the findings a
    rejection names (None: accepted)."""

    name: str
    pusher: str
    make: object
    codes: Optional[frozenset]
    refspecs: tuple = ("HEAD:refs/heads/main",)


def _src(site: Site) -> None:
    site.commit({"src/app.py": "v2\n"}, "src")


def _seed_rewrite(site: Site) -> None:
    site.commit({SEEDS: "[1, 9]\n"}, "rewrite a seed")


def _seed_append(site: Site) -> None:
    site.commit({SEEDS: "[1, 2, 3]\n"}, "append a seed")


def _signed_append(site: Site) -> None:
    site.signed({SEEDS: "[1, 2, 3]\n"}, "alice")


def _agent_signed_append(site: Site) -> None:
    site.signed({SEEDS: "[1, 2, 3]\n"}, "bob")


def _mixed(site: Site) -> None:
    site.commit({SEEDS: "[1, 2, 3]\n", "src/app.py": "v2\n"}, "seed and code together")


def _split(site: Site) -> None:
    site.commit({SEEDS: "[1, 2, 3]\n"}, "seed")
    site.commit({"src/app.py": "v2\n"}, "code")


def _rewrite_history_of_seeds(site: Site) -> None:
    site.commit({"src/app.py": "v2\n"}, "src")
    site.reset_to_root()
    site.commit({SEEDS: "[2, 1]\n"}, "history rewritten")


def _rewrite_history_of_src(site: Site) -> None:
    from testing.git import git

    site.commit({"src/app.py": "v2\n"}, "src")
    site.push("alice", "HEAD:refs/heads/main")
    git(site.client, "commit", "-q", "--amend", "-m", "src, reworded")


def _nothing(site: Site) -> None:
    pass


def _deselecting_conftest(site: Site) -> None:
    from testing.scenarios import TAMPER_BY_CODE

    site.commit(TAMPER_BY_CODE["collection-changed"].attack, "a conftest")


def _conftest_fixture(site: Site) -> None:
    from testing.scenarios import TAMPER_BY_CODE

    site.commit(TAMPER_BY_CODE["collection-changed"].near_miss, "a conftest")


def _ecdsa_owner_key(site: Site) -> Path:
    """alice's second key, an ECDSA one, listed in the signers file by alice's
    push as an owner by variable."""
    key = site.client.parent / f"{site.client.name}-alice-ecdsa"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ecdsa", "-N", "", "-C", "alice-ecdsa", "-f", str(key)],
        check=True,
    )
    signers = (site.client / SIGNERS).read_text() + f"alice-ecdsa {public(key)}\n"
    site.commit({SIGNERS: signers}, "alice's ecdsa key")
    pushed = site.push("alice", "HEAD:refs/heads/main")
    assert pushed.rc == 0, pushed.stderr
    return key


def _granted_then_revoked(site: Site) -> Tuple[Path, str]:
    """The owner's signed grant of an owner key to bob, landed and then revoked by
    the owner's signed commit; returns alice's ECDSA key and the grant's id."""
    key = _ecdsa_owner_key(site)
    before = (site.client / SIGNERS).read_text()
    grant = site.signed({SIGNERS: before + f"bob {public(site.keys['bob'])}\n"}, key, "grant bob")
    site.signed({SIGNERS: before}, key, "revoke bob")
    pushed = site.push("bob", "HEAD:refs/heads/main")
    assert pushed.rc == 0, pushed.stderr
    return key, grant


def _replayed_grant(site: Site) -> None:
    """bob mints the revoked grant again (the twin of its ECDSA signature: same
    signed bytes, new commit id; git verifies it) and merges it into main."""
    from oracle_guard.authority import sshsig
    from testing.git import git
    from testing.signatures import ecdsa_twin, resigned

    _, grant = _granted_then_revoked(site)
    raw = site.raw_commit(grant)
    _, armored = sshsig.split_commit(raw)
    assert armored is not None
    twin = site.write_commit(resigned(raw, ecdsa_twin(armored)))
    assert twin != grant
    git(site.client, "merge", "-q", "--no-ff", "-m", "merge", twin)


def _granted_anew(site: Site) -> None:
    """Near miss: the owner signs the grant anew, on main's tip."""
    key, _ = _granted_then_revoked(site)
    text = (site.client / SIGNERS).read_text()
    site.signed({SIGNERS: text + f"bob {public(site.keys['bob'])}\n"}, key, "grant bob again")


def _rewrapped_signed_append(site: Site) -> None:
    """alice's signed append with its armor wrapped at 64: git verifies it, and it
    is a new commit id for alice's change."""
    from oracle_guard.authority import sshsig
    from testing.git import git
    from testing.signatures import resigned

    signed = site.signed({SEEDS: "[1, 2, 3]\n"}, "alice")
    raw = site.raw_commit(signed)
    _, armored = sshsig.split_commit(raw)
    assert armored is not None
    lines = armored.splitlines()
    body = b"".join(lines[1:-1])
    wrapped = b"\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    other = resigned(raw, lines[0] + b"\n" + wrapped + b"\n" + lines[-1] + b"\n")
    git(site.client, "reset", "-q", "--hard", site.write_commit(other))


def _signers_line_ssh_keygen_skips(site: Site) -> None:
    """alice lists bob's key under ``bob\\ralice``: ssh-keygen (and git) skip the
    line; read as written, the key would be an owner's."""
    text = (site.client / SIGNERS).read_text()
    site.commit({SIGNERS: text + f"bob\ralice {public(site.keys['bob'])}\n"}, "list bob")


def _signers_line_with_crlf(site: Site) -> None:
    """Near miss: a CRLF line end, which ssh-keygen reads as the line's end."""
    text = (site.client / SIGNERS).read_text()
    site.commit({SIGNERS: text + f"bob {public(site.keys['bob'])}\r\n"}, "list bob")


SKIPPED_TESTS = "import pytest\n\n\n@pytest.mark.skip(reason='flaky')\n" + TESTS_TEXT


def _skip_added_then_removed(site: Site) -> None:
    """Net, the push changes no test; its first commit skips the owners' test."""
    site.commit({TESTS: SKIPPED_TESTS}, "skip the test")
    site.commit({TESTS: TESTS_TEXT}, "and unskip it")


def _test_added_then_removed(site: Site) -> None:
    """Near miss: a test added, then dropped again: no commit is tampering."""
    site.commit({TESTS: TESTS_TEXT + "\n\ndef test_more():\n    assert True\n"}, "a test")
    site.commit({TESTS: TESTS_TEXT}, "not yet")


def _owner_pushes_and_undoes(site: Site, files: Mapping[str, str]) -> str:
    """alice, an owner by variable, pushes ``files`` and then their undoing, in one
    push: main's history holds a state no push was judged by. Returns its commit."""
    from testing.git import git

    before = {path: (site.client / path).read_text() for path in files}
    middle = site.commit(files, "owner: try something")
    site.commit(before, "owner: and undo it")
    pushed = site.push("alice", "HEAD:refs/heads/main")
    assert pushed.rc == 0, pushed.stderr
    git(site.client, "checkout", "-q", "-B", "work", middle)
    return middle


def _branch_on_a_skip_an_owner_removed(site: Site) -> None:
    _owner_pushes_and_undoes(site, {TESTS: SKIPPED_TESTS})
    site.commit({"src/app.py": "v2\n"}, "work on top of the skipping commit")


def _tag_at_a_copy_of_rewritten_seeds(site: Site) -> None:
    """A new commit whose tree is the rewriting commit's, on top of it."""
    from testing.git import git

    middle = _owner_pushes_and_undoes(site, {SEEDS: "[1, 9]\n"})
    copy = git(site.client, "commit-tree", f"{middle}^{{tree}}", "-p", middle, "-m", "copy")
    git(site.client, "reset", "-q", "--hard", copy.strip())


def _fast_forward_onto_rewritten_seeds(site: Site) -> None:
    """refs/heads/scratch/x, at the first commit, moved onto the rewriting commit."""
    _owner_pushes_and_undoes(site, {SEEDS: "[1, 9]\n"})


def _branch_cut_before_owner_changes(site: Site) -> None:
    """Near miss: bob's branch starts at the first commit; alice then appends a seed
    and adds a test on main; bob's branch holds the older seeds and tests."""
    from testing.git import git

    root = git(site.client, "rev-parse", "HEAD").strip()
    site.commit({SEEDS: "[1, 2, 3]\n"}, "owner: append")
    site.commit({TESTS: TESTS_TEXT + "\n\ndef test_more():\n    assert True\n"}, "owner: test")
    pushed = site.push("alice", "HEAD:refs/heads/main")
    assert pushed.rc == 0, pushed.stderr
    git(site.client, "checkout", "-q", "-B", "work", root)
    site.commit({"src/app.py": "v2\n"}, "honest work")


def _signing_as_alice(site: Site) -> None:
    """The client signs pushes with alice's key; the server gives out nonces, and
    over HTTP (two requests, each its own receive-pack) takes one issued up to 60
    seconds before as its own (receive.certNonceSlop: git then says OK, not SLOP)."""
    from testing.git import git

    git(site.client, "config", "gpg.format", "ssh")
    git(site.client, "config", "user.signingkey", str(site.keys["alice"]))
    for key, value in (
        ("receive.certNonceSeed", "the server's secret"),
        ("receive.certNonceSlop", "60"),
    ):
        configured = site.server_git("config", key, value)
        assert configured.returncode == 0, configured.stderr


# an agent's oracle edit: not an owner by variable, not signed by one
DENIED = frozenset({"write-denied", "oracle-change-unsigned"})
CATALOGUE = (
    Case("agent_code_change_is_accepted", "bob", _src, None),
    Case("agent_seed_rewrite_is_rejected", "bob", _seed_rewrite, DENIED | {"seed-rewritten"}),
    Case("agent_seed_append_is_rejected", "bob", _seed_append, DENIED),
    Case(
        "agent_deselecting_conftest_is_rejected",
        "bob",
        _deselecting_conftest,
        frozenset({"collection-changed"}),
    ),
    Case("agent_conftest_fixture_is_accepted", "bob", _conftest_fixture, None),
    Case("owner_seed_append_by_identity_is_accepted", "alice", _seed_append, None),
    Case("owner_signed_seed_append_pushed_by_agent_is_accepted", "bob", _signed_append, None),
    Case("seed_append_signed_by_agent_key_is_rejected", "bob", _agent_signed_append, DENIED),
    Case(
        "owner_signed_append_with_rewrapped_armor_is_rejected",
        "bob",
        _rewrapped_signed_append,
        DENIED,
    ),
    Case(
        "replayed_owner_grant_revoked_since_is_rejected",
        "bob",
        _replayed_grant,
        frozenset({"write-denied", "signature-replayed"}),
    ),
    Case("owner_grant_signed_anew_after_a_revoke_is_accepted", "bob", _granted_anew, None),
    Case(
        "owner_signers_line_ssh_keygen_skips_is_rejected",
        "alice",
        _signers_line_ssh_keygen_skips,
        frozenset({"contract-invalid"}),
    ),
    Case("owner_signers_line_with_crlf_is_accepted", "alice", _signers_line_with_crlf, None),
    Case(
        "agent_skip_added_then_removed_in_one_push_is_rejected",
        "bob",
        _skip_added_then_removed,
        frozenset({"oracle-edit-undone"}),
    ),
    Case(
        "agent_branch_on_a_skip_an_owner_removed_is_rejected",
        "bob",
        _branch_on_a_skip_an_owner_removed,
        frozenset({"ref-holds-unjudged"}),
        ("HEAD:refs/heads/topic",),
    ),
    Case(
        "agent_tag_at_a_copy_of_rewritten_seeds_is_rejected",
        "bob",
        _tag_at_a_copy_of_rewritten_seeds,
        frozenset({"ref-holds-unjudged"}),
        ("HEAD:refs/tags/v9",),
    ),
    Case(
        "agent_fast_forward_onto_rewritten_seeds_is_rejected",
        "bob",
        _fast_forward_onto_rewritten_seeds,
        frozenset({"ref-holds-unjudged"}),
        ("HEAD:refs/heads/scratch/x",),
    ),
    Case(
        "agent_branch_cut_before_owner_changes_is_accepted",
        "bob",
        _branch_cut_before_owner_changes,
        None,
        ("HEAD:refs/heads/topic",),
    ),
    Case(
        "agent_test_added_then_removed_in_one_push_is_accepted",
        "bob",
        _test_added_then_removed,
        None,
    ),
    Case(
        "owner_mixed_oracle_and_code_commit_is_rejected",
        "alice",
        _mixed,
        frozenset({"contract-mixed-commit"}),
    ),
    Case("owner_oracle_and_code_in_separate_commits_is_accepted", "alice", _split, None),
    Case(
        "deleting_protected_branch_is_rejected",
        "alice",
        _nothing,
        frozenset({"ref-deleted"}),
        (":refs/heads/main",),
    ),
    Case(
        "deleting_deletable_scratch_branch_is_accepted",
        "alice",
        _nothing,
        None,
        (":refs/heads/scratch/x",),
    ),
    Case(
        "agent_deleting_an_owners_oracle_branch_is_rejected",
        "bob",
        _nothing,
        frozenset({"ref-deleted"}),
        (":refs/heads/oracle/x",),
    ),
    Case(
        "owner_signed_push_deleting_an_abandoned_oracle_branch_is_accepted",
        "bob",
        _signing_as_alice,
        None,
        ("--signed", ":refs/heads/oracle/x"),
    ),
    Case(
        "owner_force_push_rewriting_seeds_is_rejected",
        "alice",
        _rewrite_history_of_seeds,
        frozenset({"seed-reordered"}),
        ("+HEAD:refs/heads/main",),
    ),
    Case(
        "owner_force_push_rewriting_only_code_is_accepted",
        "alice",
        _rewrite_history_of_src,
        None,
        ("+HEAD:refs/heads/main",),
    ),
)


def judge_case(site: Site, case: Case) -> None:
    """Make and push ``case``; assert the verdict, the findings, what the client
    saw, and that the ref moved only when accepted."""
    case.make(site)
    refs = [spec.split(":")[-1] for spec in case.refspecs if not spec.startswith("-")]
    before = {ref: site.rev(ref) for ref in refs}
    pushed = site.push(case.pusher, *case.refspecs)
    if case.codes is None:
        assert pushed.rc == 0, pushed.stderr
        assert any(line.startswith("oracle-guard: push accepted") for line in pushed.guard), (
            pushed.stderr
        )
        deleted = [spec[1:] for spec in case.refspecs if spec.startswith(":")]
        assert all(site.rev(ref) is None for ref in deleted), pushed.stderr
        return
    assert pushed.rc != 0, pushed.stderr
    assert "(pre-receive hook declined)" in pushed.stderr, pushed.stderr
    got = frozenset(finding.split(": ")[-1] for finding in pushed.findings())
    assert got == case.codes, pushed.stderr
    assert any(line.startswith("oracle-guard: push rejected") for line in pushed.guard), (
        pushed.stderr
    )
    assert {ref: site.rev(ref) for ref in refs} == before


def spoof_rejected(site: Site, pushed) -> None:
    """bob's seed append with a spoofed identity: rejected as write-denied, main
    not moved."""
    assert pushed.rc != 0, pushed.stderr
    assert set(pushed.findings()) == {f"refs/heads/main: {SEEDS}: {code}" for code in DENIED}, (
        pushed.stderr
    )


def doctor_verdict(
    proc: subprocess.CompletedProcess, repo: Path, guarded: bool, *problems: str
) -> List[str]:
    """``oracle-guard doctor REPO``'s output: the repository called guarded, or not
    guarded with each of ``problems`` named. Returns its problem lines."""
    said = [line for line in proc.stdout.splitlines() if line.startswith("problem: ")]
    if guarded:
        assert proc.returncode == 0 and not said, proc.stdout + proc.stderr
        assert last_line(proc.stdout) == f"guarded: {repo}", proc.stdout + proc.stderr
        return said
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert last_line(proc.stdout).startswith(f"not guarded: {repo}: "), proc.stdout
    for problem in problems:
        assert any(problem in line for line in said), proc.stdout
    return said


def last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


class SharedSshHost:
    """docs/how-to/server-ssh.md's recipe on a real sshd: one account, git-shell, a
    restricted key per person; repositories in its home, hooks root's."""

    def __init__(self, account, server, keys, python):
        self.account, self.sshd, self.keys, self.python = account, server, keys, python

    def env(self, user, *options, **variables):
        return client_env(self.sshd.ssh_command(self.keys[user], *options), **variables)

    def url(self, name):
        return f"{self.account.name}@127.0.0.1:{name}.git"

    def repo(self, name):
        return self.account.home / f"{name}.git"

    def server_git(self, repo):
        return lambda *a: run_as(self.account, ["git", "--git-dir", repo, *a])

    def create(self, name, *, lock_hooks=True):
        """The admin's steps for one repository: created by the account (main as
        HEAD, fsck on, push options advertised so their spoof is tried), its
        hooks folder made root's, then the hook installed by root."""
        repo = self.repo(name)
        run_as(self.account, ["git", "init", "-q", "--bare", "-b", "main", repo], check=True)
        for key, value in (
            ("receive.fsckObjects", "true"),
            ("receive.advertisePushOptions", "true"),
        ):
            run_as(self.account, ["git", "--git-dir", repo, "config", key, value], check=True)
        if lock_hooks:
            os.chown(repo / "hooks", 0, 0)
            (repo / "hooks").chmod(0o755)
        return repo

    def install(self, repo, *args, python=None):
        return subprocess.run(
            [
                str(python or self.python),
                "-m",
                "oracle_guard",
                "install-pre-receive",
                str(repo),
                "--host",
                "ssh",
                "--sshd-config",
                str(self.sshd.config),
                *args,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd="/",
            timeout=120,
        )

    def doctor(self, repo):
        return subprocess.run(
            [
                str(self.python),
                "-m",
                "oracle_guard",
                "doctor",
                str(repo),
                "--sshd-config",
                str(self.sshd.config),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd="/",
            timeout=120,
        )

    def site(self, name, tmp_path):
        repo = self.repo(name)
        return Site(
            tmp_path / f"work-{name}",
            self.url(name),
            repo,
            self.keys,
            self.env,
            self.server_git(repo),
        )


# t/...: guarded by the common hook; rs/...: by gitolite's multi-hook driver
GITOLITE_CONF = """\
repo gitolite-admin
    RW+     =   admin

repo app
    RW+     =   alice
    RW      =   bob

repo t/..*
    C       =   alice
    RW+     =   alice
    RW+ oracle/ =   bob
    RW      =   bob

repo rs/..*
    C       =   alice
    RW+     =   alice
    RW+ oracle/ =   bob
    RW      =   bob
    option hook.pre-receive = oracle-guard
"""
