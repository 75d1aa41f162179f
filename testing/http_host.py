"""git http-backend behind lighttpd on 127.0.0.1, for tests and benchmarks. Basic
auth from an htpasswd file makes REMOTE_USER the authenticated user, which is the
pusher the hook sees. lighttpd starts as root, drops to its own Unix account
(server.username), and is stopped by its own pid. Needs root."""

from __future__ import annotations

import contextlib
import grp
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Mapping, Optional, Sequence
from urllib.parse import quote

from testing.hosts import Account, _pids_of, run_as, stop
from testing.server import SERVER_ENV, Push, free_port, listening

LIGHTTPD = "/usr/sbin/lighttpd"
HTPASSWD = "/usr/bin/htpasswd"
USERS = {"alice": "alice-secret", "bob": "bob-secret"}  # alice owns the oracle, bob is the agent
PATH = "/usr/local/bin:/usr/bin:/bin"


def backend() -> str:
    exec_path = subprocess.run(
        ["git", "--exec-path"], stdout=subprocess.PIPE, check=True, text=True
    ).stdout.strip()
    return os.path.join(exec_path, "git-http-backend")


# the configuration docs/how-to/server-http.md shows, with the test's paths and port
CONFIG_FILE = Path(__file__).resolve().parents[1] / "examples" / "http" / "lighttpd.conf"
# each value the file holds, as the page shows it -> the name of the test's value
DOCUMENTED = {
    "server.port = 8080": "server.port = {port}",
    'server.username = "www-git"': 'server.username = "{user}"',
    'server.groupname = "www-git"': 'server.groupname = "{group}"',
    '"/var/www/git-empty"': '"{htdocs}"',
    '"/var/log/lighttpd/git-error.log"': '"{logs}/error.log"',
    '"/usr/lib/git-core/git-http-backend"': '"{backend}"',
    '"/etc/lighttpd/git.htpasswd"': '"{htpasswd}"',
    '"/srv/git"': '"{projects}"',
}


def config(**values: object) -> str:
    """The documented configuration with the test's values: each documented value
    stands exactly once in it, or the page and the tests would part."""
    text = CONFIG_FILE.read_text(encoding="utf-8")
    for documented, template in DOCUMENTED.items():
        assert text.count(documented) == 1, (documented, CONFIG_FILE)
        text = text.replace(documented, template.format(**values))
    return text


@dataclass
class HttpHost:
    process: subprocess.Popen
    port: int
    folder: Path  # config, htpasswd, logs
    projects: Path  # GIT_PROJECT_ROOT, owned by the account
    account: Account

    def base(self, user: Optional[str] = None, password: Optional[str] = None) -> str:
        """``http://[USER:PASSWORD@]127.0.0.1:PORT/``; the password defaults to the
        user's own."""
        if user is None:
            return f"http://127.0.0.1:{self.port}/"
        secret = USERS[user] if password is None else password
        return f"http://{quote(user, safe='')}:{quote(secret, safe='')}@127.0.0.1:{self.port}/"

    def url(self, name: str, user: Optional[str] = None, password: Optional[str] = None) -> str:
        return f"{self.base(user, password)}git/{name}"

    def error_log(self) -> str:
        path = self.folder / "logs" / "error.log"
        return path.read_text(errors="replace") if path.exists() else ""


def write_htpasswd(path: Path, users: Mapping[str, str], account: Account) -> None:
    """bcrypt entries by apache2-utils' htpasswd; root's, readable by the account only."""
    for i, (user, password) in enumerate(users.items()):
        subprocess.run(
            [HTPASSWD, "-b", "-B", *(["-c"] if i == 0 else []), str(path), user, password],
            check=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    os.chown(path, 0, account.gid)
    path.chmod(0o640)


@contextlib.contextmanager
def lighttpd(
    account: Account, folder: Path, users: Mapping[str, str] = USERS, *, wait_s: float = 10.0
) -> Iterator[HttpHost]:
    """lighttpd serving git http-backend from ``folder/repos`` as ``account``;
    ``folder`` must be traversable by the account (testing.hosts.world_base()).
    Stopped by its pid on exit whatever happens."""
    folder = Path(folder)
    projects, logs, htdocs = folder / "repos", folder / "logs", folder / "htdocs"
    for path in (projects, logs, htdocs):
        path.mkdir(mode=0o755)
    os.chown(projects, account.uid, account.gid)
    os.chown(logs, account.uid, account.gid)  # lighttpd opens its error log after dropping root
    htpasswd = folder / "htpasswd"
    write_htpasswd(htpasswd, users, account)
    conf = folder / "lighttpd.conf"
    console = folder / "console.log"  # what lighttpd says before its error log is open
    for _attempt in range(3):  # another process may take the port first
        port = free_port()
        conf.write_text(
            config(
                port=port,
                user=account.name,
                group=grp.getgrgid(account.gid).gr_name,
                htdocs=htdocs,
                logs=logs,
                backend=backend(),
                htpasswd=htpasswd,
                projects=projects,
            )
        )
        subprocess.run(
            [LIGHTTPD, "-tt", "-f", str(conf)],
            check=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        with open(console, "wb") as sink:
            process = subprocess.Popen(
                [LIGHTTPD, "-D", "-f", str(conf)],
                env={"PATH": PATH},
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=sink,
            )
        try:
            if listening(process, port, wait_s, "lighttpd", console):
                yield HttpHost(process, port, folder, projects, account)
                return
        finally:
            stop(process)
    error_log = logs / "error.log"
    said = console.read_text(errors="replace")
    said += error_log.read_text(errors="replace") if error_log.exists() else ""
    raise AssertionError(f"lighttpd would not start: {said}")


def processes_of(account: Account) -> List[int]:
    """The pids the account still runs (a CGI that outlived the server would show)."""
    return _pids_of(account.uid)


# -- the admin's steps ----------------------------------------------------------------
def root_git_env(repo: Path, env: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """Root's environment for git itself in a repository another account owns: git
    refuses it ('dubious ownership') unless safe.directory names it; this is
    `git -c safe.directory=REPO` without touching root's ~/.gitconfig."""
    out = {
        k: v
        for k, v in os.environ.items()
        if k not in SERVER_ENV and not k.startswith("GIT_CONFIG_")
    }
    out.update(
        {
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "safe.directory",
            "GIT_CONFIG_VALUE_0": str(repo),
        }
    )
    out.update(env or {})
    return out


def admin_env() -> Dict[str, str]:
    """Root's environment for the admin's oracle-guard commands: no server variable,
    and no safe.directory (oracle-guard reads a repository another account owns)."""
    return {k: v for k, v in os.environ.items() if k not in SERVER_ENV}


def install_hook(repo: Path, python: Path, *args: str) -> subprocess.CompletedProcess:
    """As root: ``PY -I -m oracle_guard install-pre-receive REPO --host http ARGS``."""
    return subprocess.run(
        [
            str(python),
            "-I",
            "-m",
            "oracle_guard",
            "install-pre-receive",
            str(repo),
            "--host",
            "http",
            *args,
        ],
        env=admin_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
    )


def make_repo(
    host: HttpHost,
    name: str,
    python: Optional[Path],
    *,
    config: Sequence[str] = ("receive.fsckObjects=true", "receive.advertisePushOptions=true"),
) -> Path:
    """A bare repository under GIT_PROJECT_ROOT, created by the web account (so it
    owns objects and refs), with ``config`` set; then, as root, its hooks folder
    made root's (the account git runs as cannot edit the hook) and the hook
    installed with ``python`` (None: no hook)."""
    repo = host.projects / name
    run_as(host.account, ["git", "init", "-q", "--bare", "-b", "main", repo], check=True)
    for item in config:
        key, _, value = item.partition("=")
        run_as(host.account, ["git", "--git-dir", repo, "config", key, value], check=True)
    hooks = repo / "hooks"
    for path in [hooks, *hooks.rglob("*")]:
        os.chown(path, 0, 0, follow_symlinks=False)
    hooks.chmod(0o755)
    if python is not None:
        done = install_hook(repo, python)
        if done.returncode != 0:
            raise AssertionError(
                f"install-pre-receive {repo} --host http exited "
                f"{done.returncode}:\n{done.stdout}{done.stderr}"
            )
    return repo


def doctor(repo: Path, python: Path) -> subprocess.CompletedProcess:
    """As root, read-only: ``PY -I -m oracle_guard doctor REPO``."""
    return subprocess.run(
        [str(python), "-I", "-m", "oracle_guard", "doctor", str(repo)],
        env=admin_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
    )


def remove_repo(repo: Path) -> None:
    shutil.rmtree(repo, ignore_errors=True)


# -- the client's side -----------------------------------------------------------------
def client_env(**variables: str) -> Dict[str, str]:
    """The test process's environment without server variables; git never prompts
    for a password (a 401 fails at once) and reads no credential helper's."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in SERVER_ENV and k not in ("GIT_ASKPASS", "SSH_ASKPASS")
    }
    env.update(
        {
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "credential.helper",
            "GIT_CONFIG_VALUE_0": "",
        }
    )
    env.update(variables)
    return env


def http_push(
    client: Path,
    remote: str,
    *args: str,
    config: Sequence[str] = (),
    env: Optional[Dict[str, str]] = None,
) -> Push:
    """``git [-c CONFIG]... push REMOTE ARGS`` from ``client``."""
    options = [part for item in config for part in ("-c", item)]
    proc = subprocess.run(
        ["git", *options, "-C", str(client), "push", remote, *args],
        env=env if env is not None else client_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        timeout=60,
    )
    return Push(proc.returncode, proc.stderr.decode("utf-8", "replace"))


def as_user(
    host: HttpHost, user: str, password: Optional[str] = None, **variables: str
) -> Dict[str, str]:
    """client_env() in which every URL of ``host`` carries ``user``'s credentials
    (url.<with credentials>.insteadOf), so one remote serves every user."""
    env = client_env(**variables)
    env.update(
        {
            "GIT_CONFIG_COUNT": "2",
            "GIT_CONFIG_KEY_1": f"url.{host.base(user, password)}.insteadOf",
            "GIT_CONFIG_VALUE_1": host.base(),
        }
    )
    return env
