"""The account that serves the repositories, and the sshd in front of it: can a
client reach the hook's environment, or the repositories around the hook?"""

from __future__ import annotations

import fnmatch
import grp
import os
import pwd
import re
import shlex
import subprocess
from typing import List, Optional, Tuple

from oracle_guard.hosts import pusher_variable
from oracle_guard.hosts.probe import Hook, Line, account_name, text_of

# what a client's variable must never reach: git's own configuration and
# directories, the Perl of gitolite-shell, the loader, the hook's clock
_UNSAFE_VARIABLES = (
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_KEY_0",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_NOSYSTEM",
    "GIT_DIR",
    "GIT_EXEC_PATH",
    "GIT_OBJECT_DIRECTORY",
    "PERL5OPT",
    "PERL5DB",
    "PERL5LIB",
    "PERLLIB",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "PATH",
    "HOME",
    "PYTHONPATH",
    "BASH_ENV",
    "ENV",
    "ORACLE_GUARD_NOW",
)
# what sshd's AcceptEnv may take from a client: the locale and git's protocol version
ACCEPT_ENV_ALLOWED = ("LANG", "LC_*", "GIT_PROTOCOL")
# the programs a forced command may run: they run only git's own commands
FORCED_COMMANDS = ("git-shell", "gitolite-shell")
# hosts where the repositories' account has no shell of its own by design
SERVICE_HOSTS = ("gitolite", "gitlab", "gitea", "ghes")


# -- sshd, for the hosts it serves -------------------------------------------------
def sshd_problems(repo: str, host: Optional[str], config: str) -> List[str]:
    return [line.text for line in sshd_lines(repo, host, config) if not line.ok]


def sshd_lines(
    repo: str, host: Optional[str], config: Optional[str], variable: Optional[str] = None
) -> List[Line]:
    """sshd hands a client's SetEnv to git-shell and gitolite-shell, hence to
    git-receive-pack, for every name AcceptEnv takes: GIT_CONFIG_* there switches
    every hook off, and no hook can see that happen."""
    if host not in ("ssh", "gitolite") or config is None:
        return []
    account = account_name(os.stat(repo).st_uid)
    try:
        proc = subprocess.run(
            ["sshd", "-T", "-f", config, "-C", f"user={account},host=localhost,addr=127.0.0.1"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            timeout=60,
            env={**os.environ, "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
        )
        said, rc = proc.stdout.decode("utf-8", "replace"), proc.returncode
        error = proc.stderr.decode("utf-8", "replace").strip()
    except OSError as exc:
        said, rc, error = "", 127, str(exc)
    if rc != 0:
        return [
            Line(
                False,
                f"cannot read sshd's configuration {config} ({error or f'exit {rc}'}"
                f"): what a client's SetEnv reaches is unknown; run doctor as root, "
                "with --sshd-config FILE for the sshd that serves this account",
            )
        ]
    accepted = [
        word
        for line in said.splitlines()
        if line.startswith("acceptenv ")
        for word in line.split()[1:]
    ]
    lines = _permit_user_environment(said, config, account, host, variable)
    extra = [pattern for pattern in accepted if not _allowed_client_variable(pattern)]
    if extra:
        reached = sorted(
            {
                name
                for pattern in extra
                for name in _UNSAFE_VARIABLES + ((variable,) if variable else ())
                if fnmatch.fnmatchcase(name, pattern)
            }
        )
        return lines + [
            Line(
                False,
                f"sshd ({config}) accepts the client's variables {' '.join(extra)} "
                f"(AcceptEnv) for {account}"
                + (f", which let a pusher's SetEnv set {' '.join(reached)}" if reached else "")
                + ": GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath switches every hook "
                "off, GIT_CONFIG_GLOBAL drops receive.fsckObjects, and a pusher variable names "
                f"any owner; accept at most {' '.join(ACCEPT_ENV_ALLOWED)}",
            )
        ]
    return lines + [
        Line(
            True,
            f"sshd ({config}) accepts only {' '.join(accepted) or 'no'} client "
            f"variables for {account}",
        )
    ]


def _allowed_client_variable(pattern: str) -> bool:
    """An AcceptEnv pattern every name of which is in ACCEPT_ENV_ALLOWED."""
    return pattern in ("LANG", "GIT_PROTOCOL") or (
        pattern.startswith("LC_") and not any(c in pattern[3:] for c in "[]")
    )


def _permit_user_environment(
    said: str, config: str, account: str, host: Optional[str], variable: Optional[str]
) -> List[Line]:
    """On a plain ssh host the pusher is the key's environment="VARIABLE=NAME",
    which sshd applies only where PermitUserEnvironment allows that variable;
    otherwise the variable is unset, or the client's own (AcceptEnv)."""
    if host != "ssh" or variable is None:
        return []
    values = [
        line.split(None, 1)[1].strip() if " " in line else ""
        for line in said.splitlines()
        if line.startswith("permituserenvironment ")
    ]
    value = values[0] if values else "no"
    patterns = [p for p in value.split(",") if p]
    if value == "yes" or any(
        fnmatch.fnmatchcase(variable, p) for p in patterns if p not in ("yes", "no")
    ):
        return [
            Line(
                True,
                f"sshd ({config}) applies the keys' environment= {variable} (PermitUserEnvironment {value})",
            )
        ]
    return [
        Line(
            False,
            f"sshd ({config}) has PermitUserEnvironment {value} for {account}: the keys' "
            f'environment="{variable}=NAME" is ignored, so {variable} is unset or the '
            f"client's own; set PermitUserEnvironment {variable}",
        )
    ]


# -- the account git runs as ------------------------------------------------------
def account_lines(repo: str, host: Optional[str], hook: Optional[Hook]) -> List[Line]:
    if host in SERVICE_HOSTS:
        return []
    owner = os.stat(repo).st_uid
    if owner == 0:
        return []
    name = account_name(owner)
    lines = []
    paths = [
        p for p in ([hook.path, os.path.dirname(hook.path)] if hook and hook.path else []) if p
    ]
    for path in paths:
        if _writable_by(path, owner):
            lines.append(
                Line(
                    False,
                    f"{name}, the account git runs as, can rewrite {path}: "
                    f"chown root: {shlex.quote(path)} && chmod 755 "
                    f"{shlex.quote(path)}",
                )
            )
    if host == "ssh":
        lines += _shell(owner)
        lines += _key_variables(owner, pusher_variable(host, hook.identity_env if hook else None))
    return lines


def _writable_by(path: str, uid: int) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    groups = {g.gr_gid for g in _groups_of(uid)}
    if st.st_uid == uid:
        return bool(st.st_mode & 0o200)
    if st.st_gid in groups:
        return bool(st.st_mode & 0o020)
    return bool(st.st_mode & 0o002)


def _groups_of(uid: int) -> List[grp.struct_group]:
    entry = pwd.getpwuid(uid)
    return [g for g in grp.getgrall() if entry.pw_name in g.gr_mem or g.gr_gid == entry.pw_gid]


def _shell(uid: int) -> List[Line]:
    """A shared ssh account: its pushers must not get a shell, or they set any
    variable (REMOTE_USER=alice git-receive-pack) and rewrite the hook."""
    entry = pwd.getpwuid(uid)
    if os.path.basename(entry.pw_shell) == "git-shell":
        return [Line(True, f"{entry.pw_name} logs in with git-shell")]
    keys, lines = _key_lines(uid)
    loose = [n for n, line in lines if _forced_command(line) is None]
    if not loose:
        return [
            Line(True, f"every key in {keys} has git-shell or gitolite-shell as its forced command")
        ]
    return [
        Line(
            False,
            f"{entry.pw_name} logs in with {entry.pw_shell}, and "
            f"{len(loose)} key{'s' if len(loose) != 1 else ''} in {keys} "
            f"(line {', '.join(map(str, loose))}) have no forced command that runs "
            f"{' or '.join(FORCED_COMMANDS)}: a pusher can run any command "
            '(a forced command that runs the client\'s, as eval "$SSH_ORIGINAL_COMMAND" does, '
            "passes --receive-pack='REMOTE_USER=alice git-receive-pack' through), set any "
            f'variable and rewrite the hook: chsh -s "$(command -v git-shell)" {entry.pw_name}',
        )
    ]


def _forced_command(line: str) -> Optional[str]:
    """The program a key's command="..." runs, when it is git-shell or
    gitolite-shell; None for no forced command, or any other."""
    found = re.search(r'(?:^|,)command="((?:[^"\\]|\\.)*)"', _key_options(line))
    if not found:
        return None
    try:
        words = shlex.split(found.group(1).replace('\\"', '"'))
    except ValueError:
        return None
    if not words or os.path.basename(words[0]) not in FORCED_COMMANDS:
        return None
    return words[0]


def _key_lines(uid: int) -> Tuple[str, List[Tuple[int, str]]]:
    keys = os.path.join(pwd.getpwuid(uid).pw_dir, ".ssh", "authorized_keys")
    return keys, [
        (n, line)
        for n, line in enumerate(text_of(keys).splitlines(), 1)
        if line.strip() and not line.lstrip().startswith("#")
    ]


def _key_variables(uid: int, variable: Optional[str]) -> List[Line]:
    """With sshd's AcceptEnv, a client's SetEnv names the pusher unless the key's
    own environment= option sets the variable (the key's option wins)."""
    if variable is None:
        return []
    keys, lines = _key_lines(uid)
    unset = [n for n, line in lines if f'environment="{variable}=' not in _key_options(line)]
    if not unset:
        return [Line(True, f"every key in {keys} sets {variable}")] if lines else []
    return [
        Line(
            False,
            f"{len(unset)} key{'s' if len(unset) != 1 else ''} in {keys} (line "
            f"{', '.join(map(str, unset))}) set no {variable}: where sshd accepts "
            f"client variables (AcceptEnv), such a key's holder names any pusher; "
            f'give each key environment="{variable}=NAME" (and sshd '
            f"PermitUserEnvironment {variable})",
        )
    ]


def _key_options(line: str) -> str:
    """The options field of an authorized_keys line: all before the key type."""
    found = re.search(r"(^|\s)(ssh-|ecdsa-|sk-)", line.strip())
    return line.strip()[: found.start()] if found else line
