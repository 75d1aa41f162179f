"""``oracle-guard install-pre-receive``: put the hook where the host keeps it.

Every host ends in the same script: it runs this installation by absolute
path with the host's name, so the hook trusts only that host's pusher
variable. What it replaces is kept; what would leave a door open is said,
with the command that closes it (the checks are doctor's)."""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING, List, Optional, Tuple

from oracle_guard.commands.options import common
from oracle_guard.commands.options import host as host_option
from oracle_guard.errors import InstallError, UsageError
from oracle_guard.git.plumbing import Git
from oracle_guard.git.process import trust_repository_owner
from oracle_guard.hosts import HOSTS, detect
from oracle_guard.hosts.accounts import sshd_problems
from oracle_guard.hosts.probe import MARKER, SSHD_CONFIG
from oracle_guard.hosts.setup import hook_problems, is_gitolite_driver, setup_problems
from oracle_guard.session import Session

if TYPE_CHECKING:
    from oracle_guard.commands.options import Subparsers

BACKUP_SUFFIX = ".before-oracle-guard"
# gitolite's driver deletes every hooks/pre-receive.* file, so its backups go in a folder
GITOLITE_BACKUP_DIR = "before-oracle-guard"
GITOLITE_LOCAL_CODE = '"$ENV{HOME}/local"'
GITOLITE_HOOK_NAME = "oracle-guard"  # the name an 'option hook.pre-receive' lists


def hook_command(host: str, identity_env: Optional[str], python: str = sys.executable) -> str:
    args = ["-I", "-m", "oracle_guard", "pre-receive", "--host", host]
    if identity_env:
        args += ["--identity-env", identity_env]
    return " ".join(shlex.quote(a) for a in [python, *args])


def hook_script(host: str, identity_env: Optional[str], python: str = sys.executable) -> str:
    # -I: no PYTHON* variables, user site or current folder on the import path
    return (
        f"#!/bin/sh\n{MARKER}: every push to this repository is judged by\n"
        "# oracle-guard; it runs this installation by absolute path, whatever PATH is.\n"
        f"exec {hook_command(host, identity_env, python)}\n"
    )


def install(
    repo: str,
    host: Optional[str] = None,
    identity_env: Optional[str] = None,
    force: bool = False,
    directory: Optional[str] = None,
    sshd_config: str = SSHD_CONFIG,
) -> Tuple[List[str], int]:
    """(what to print, exit code): 0 installed, 1 installed but some repository
    is still not guarded (gitolite)."""
    if host is None:
        host, why = detect(repo)
        said = [f"host: {host} (detected: {why}; pass --host to choose)"]
    else:
        said = [f"host: {host} (from --host)"]
    if identity_env and host not in ("ssh", "plain"):
        raise InstallError(
            f"--identity-env is for ssh and plain hosts: {host} sets "
            f"{HOSTS[host].pusher_variable} itself"
        )
    if host == "gitolite":
        lines, code = _install_gitolite(repo, force, sshd_config)
        return said + lines, code
    if host == "ghes":
        return said + _install_ghes(repo), 0
    with Session(Git(repo)) as session:  # the run's state: its git, cache and contracts
        session.git.check_repository()
        target = _target(session.git, repo, directory or HOSTS[host].hook_dir)
        said += _write_hook(target, hook_script(host, identity_env), force)
        said += [
            f"warning: {problem}"
            for problem in setup_problems(session, repo, host, identity_env, target, sshd_config)
        ]
    return said, 0


def _target(git: Git, repo: str, directory: Optional[str]) -> str:
    if directory is None:
        hooks = git.run("rev-parse", "--git-path", "hooks").decode().strip()
        return os.path.join(repo, hooks, "pre-receive")
    folder = directory if os.path.isabs(directory) else os.path.join(repo, directory)
    return os.path.join(folder, "oracle-guard")


def _write_hook(
    target: str, script: str, force: bool, backup: Optional[str] = None, quiet_folder: bool = False
) -> List[str]:
    """Write ``script`` to ``target``; a hook oracle-guard did not write is moved
    to ``backup`` (default TARGET.before-oracle-guard), and only with ``force``."""
    notes = []
    if os.path.lexists(target):
        current = _text(target)
        if current == script and os.access(target, os.X_OK):
            return [f"{target} is already installed and current; nothing changed"]
        if MARKER not in current:
            if not force:
                raise InstallError(
                    f"{target} exists and was not written by oracle-guard; move it into a "
                    "pre-receive.d folder and use --dir, or pass --force to replace it "
                    "(it is kept as a backup)"
                )
            backup = backup or target + BACKUP_SUFFIX
            os.makedirs(os.path.dirname(backup), exist_ok=True)
            os.replace(target, backup)
            notes.append(f"moved the hook it replaces to {backup}")
    folder = os.path.dirname(target)
    if not os.path.isdir(folder) and not quiet_folder:
        notes.append(f"created {folder}: make sure your server runs the scripts in it")
    os.makedirs(folder, exist_ok=True)
    _replace_atomically(target, script)
    last = script.splitlines()[-1]
    runs = f" (runs {last[len('exec ') :]})" if last.startswith("exec ") else ""
    return [f"wrote {target}{runs}"] + notes


def _replace_atomically(target: str, script: str) -> None:
    """A new file beside ``target``, complete and executable, renamed over it: a
    push that starts meanwhile runs the old hook or the new one, never an empty
    or half-written file (git execs whatever is at the path when it starts)."""
    # deferred: cli imports this module for its parser; tempfile: 1 ms, for a run
    import tempfile

    handle, temporary = tempfile.mkstemp(
        prefix=f".{os.path.basename(target)}.", suffix=".new", dir=os.path.dirname(target)
    )
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as f:
            f.write(script)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temporary, 0o755)
        os.replace(temporary, target)
    except BaseException:
        if os.path.lexists(temporary):
            os.unlink(temporary)
        raise


def _text(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


# Where examples/ghes/Dockerfile puts the hook environment's venv: the script names it
# by absolute path, never a python3 from PATH.
GHES_PYTHON = "/opt/oracle-guard/bin/python"


def _install_ghes(repo: str) -> List[str]:
    """GitHub Enterprise Server runs a script from a hooks repository inside its
    chroot (examples/ghes/Dockerfile): REPO is a clone of that repository."""
    if not os.path.isdir(repo):
        raise InstallError(f"{repo} does not exist: give a clone of your hooks repository")
    target = os.path.join(repo, "oracle-guard.sh")
    lines = _write_hook(target, hook_script("ghes", None, GHES_PYTHON), force=False)
    return lines + [
        f"commit it as executable: git -C {shlex.quote(repo)} add --chmod=+x "
        "oracle-guard.sh && git -C " + shlex.quote(repo) + " commit -m "
        "'oracle-guard pre-receive hook'; then add it under Site admin > "
        "Pre-receive hooks"
    ]


# -- gitolite ---------------------------------------------------------------------
class Gitolite:
    """The gitolite installation of the account running this (its $HOME)."""

    def __init__(self, home: str) -> None:
        self.home = home
        self.rc = os.path.join(home, ".gitolite.rc")
        if not os.path.isfile(self.rc):
            raise InstallError(
                f"{self.rc} does not exist: run this as the gitolite account, with its "
                "HOME (for example: sudo -u git -H oracle-guard install-pre-receive "
                "--host gitolite ~git/repositories)"
            )

    def query(self, *args: str) -> List[str]:
        proc = subprocess.run(
            ["gitolite", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "HOME": self.home},
        )
        if proc.returncode not in (0, 1):  # query-rc exits 1 for an unset key
            raise InstallError(
                f"gitolite {' '.join(args)} failed: "
                f"{proc.stderr.decode('utf-8', 'replace').strip()}"
            )
        return proc.stdout.decode("utf-8", "replace").splitlines()

    def rc_value(self, key: str) -> Optional[str]:
        lines = self.query("query-rc", key)
        return lines[0] if lines else None

    def repositories(self) -> List[str]:
        base = self.rc_value("GL_REPO_BASE") or os.path.join(self.home, "repositories")
        return [os.path.join(base, name + ".git") for name in self.query("list-phy-repos")]

    def enables(self, feature: str) -> bool:
        return feature in self.query("query-rc", "ENABLE")

    def setup(self) -> None:
        self._run("setup")

    def trigger(self, name: str) -> None:
        self._run("trigger", name)

    def _run(self, *args: str) -> None:
        proc = subprocess.run(
            ["gitolite", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env={**os.environ, "HOME": self.home},
        )
        if proc.returncode != 0:
            raise InstallError(
                f"gitolite {' '.join(args)} failed: "
                + proc.stdout.decode("utf-8", "replace").strip()
            )


def _activate_local_code(gitolite: Gitolite) -> Tuple[str, List[str]]:
    """LOCAL_CODE, set to the one on the server ($HOME/local) when no line is
    active: the other one lives in gitolite-admin, whose every push replaces it."""
    current = gitolite.rc_value("LOCAL_CODE")
    admin_base = gitolite.rc_value("GL_ADMIN_BASE") or os.path.join(gitolite.home, ".gitolite")
    if current:
        if os.path.abspath(current).startswith(os.path.abspath(admin_base) + os.sep):
            raise InstallError(
                f"LOCAL_CODE is {current}, inside the gitolite-admin checkout: every push to "
                "gitolite-admin replaces what is there, and whoever may push it may change the "
                f"hook; set LOCAL_CODE => {GITOLITE_LOCAL_CODE} in {gitolite.rc}"
            )
        return current, []
    with open(gitolite.rc, encoding="utf-8") as f:
        text = f.read()
    line = re.compile(r'^(\s*)#\s*(LOCAL_CODE\s*=>\s*"\$ENV\{HOME\}/local",)', re.M)
    if not line.search(text):
        raise InstallError(
            f"{gitolite.rc} has no LOCAL_CODE line to turn on: add "
            f"LOCAL_CODE => {GITOLITE_LOCAL_CODE}, to its %RC block"
        )
    with open(gitolite.rc + BACKUP_SUFFIX, "w", encoding="utf-8") as f:
        f.write(text)
    with open(gitolite.rc, "w", encoding="utf-8") as f:
        f.write(line.sub(r"\1\2", text, count=1))
    value = gitolite.rc_value("LOCAL_CODE")
    if not value:
        raise InstallError(
            f"turned on LOCAL_CODE in {gitolite.rc}, but gitolite does not read it back"
        )
    return value, [
        f"turned on LOCAL_CODE => {GITOLITE_LOCAL_CODE} in {gitolite.rc} "
        f"(the file before is {gitolite.rc + BACKUP_SUFFIX})"
    ]


GITOLITE_TRIGGER = "oracle-guard-hooks"  # the trigger's name in the rc's ENABLE and NON_CORE


def gitolite_trigger(specific: str, driver: str) -> str:
    """A gitolite POST_COMPILE and POST_CREATE trigger, run after gitolite's own
    repo-specific-hooks: wherever a repository's 'option hook.pre-receive' put
    gitolite's multi-hook driver in place of the common hook and the option does
    not list oracle-guard, it links oracle-guard among the hooks the driver runs,
    first in its order (the driver runs hooks/pre-receive.* sorted by name)."""
    return f"""#!/bin/sh
{MARKER}: a gitolite trigger that keeps
# oracle-guard in every repository's pre-receive hook list.
set -eu
ours={shlex.quote(specific)}
driver={shlex.quote(driver)}
cd "$GL_REPO_BASE"
if [ "$1" = POST_CREATE ]; then repos="$2"; else repos=$(gitolite list-phy-repos); fi
for repo in $repos; do
    hooks="$repo.git/hooks"
    [ -L "$hooks/pre-receive" ] && [ "$(readlink "$hooks/pre-receive")" = "$driver" ] || continue
    listed=no
    for hook in "$hooks"/pre-receive.*; do
        if [ -L "$hook" ] && [ "$(readlink "$hook")" = "$ours" ]; then listed=yes; fi
    done
    [ "$listed" = yes ] || ln -sf "$ours" "$hooks/pre-receive.a00-{GITOLITE_HOOK_NAME}"
done
"""


def _enable_gitolite_trigger(gitolite: Gitolite) -> List[str]:
    """Turn the trigger on with gitolite's own mechanism: its name in ENABLE, and
    a NON_CORE line for each trigger list, which gitolite appends after its own
    (so it runs after repo-specific-hooks)."""
    if GITOLITE_TRIGGER in gitolite.query("query-rc", "ENABLE"):
        return []
    with open(gitolite.rc, encoding="utf-8") as f:
        text = f.read()
    enable = re.compile(r"^(\s*)ENABLE\s*=>\s*\[\s*$", re.M)
    found = enable.search(text)
    if found is None or re.search(r"^\s*NON_CORE\s*=>", text, re.M):
        raise InstallError(
            f"{gitolite.rc} has no plain 'ENABLE => [' line, or has a NON_CORE entry: add "
            f"'{GITOLITE_TRIGGER}' to ENABLE and NON_CORE => \"{GITOLITE_TRIGGER} POST_COMPILE "
            f'.\\n{GITOLITE_TRIGGER} POST_CREATE .\\n" to its %RC block, then rerun'
        )
    indent = found.group(1)
    block = (
        f"{indent}# oracle-guard: its trigger runs after repo-specific-hooks\n"
        f'{indent}NON_CORE => "{GITOLITE_TRIGGER} POST_COMPILE .\\n'
        f'{GITOLITE_TRIGGER} POST_CREATE .\\n",\n'
    )
    changed = (
        text[: found.start()]
        + block
        + found.group(0)
        + f"\n{indent}    '{GITOLITE_TRIGGER}',"
        + text[found.end() :]
    )
    with open(gitolite.rc + BACKUP_SUFFIX, "w", encoding="utf-8") as f:
        f.write(text)
    with open(gitolite.rc, "w", encoding="utf-8") as f:
        f.write(changed)
    if GITOLITE_TRIGGER not in gitolite.query("query-rc", "ENABLE"):
        raise InstallError(
            f"enabled {GITOLITE_TRIGGER} in {gitolite.rc}, but gitolite does not read it back"
        )
    return [
        f"enabled the trigger {GITOLITE_TRIGGER} in {gitolite.rc} (ENABLE and NON_CORE; the "
        f"file before is {gitolite.rc + BACKUP_SUFFIX})"
    ]


def _install_gitolite(repo: str, force: bool, sshd_config: str) -> Tuple[List[str], int]:
    gitolite = Gitolite(os.environ.get("HOME") or os.path.expanduser("~"))
    local, said = _activate_local_code(gitolite)
    script = hook_script("gitolite", None)
    common = os.path.join(local, "hooks", "common", "pre-receive")
    said += _write_hook(common, script, force=True, quiet_folder=True)
    specific_hooks = gitolite.enables("repo-specific-hooks")
    if specific_hooks:
        specific = os.path.join(local, "hooks", "repo-specific", GITOLITE_HOOK_NAME)
        said += _write_hook(specific, script, force=True, quiet_folder=True)
        driver = gitolite.rc_value("MULTI_HOOK_DRIVER") or os.path.join(
            local, "hooks", "multi-hook-driver"
        )
        trigger = os.path.join(local, "triggers", GITOLITE_TRIGGER)
        said += _write_hook(
            trigger, gitolite_trigger(specific, driver), force=True, quiet_folder=True
        )
        said += _enable_gitolite_trigger(gitolite)
        said.append(
            f"repositories with their own 'option hook.pre-receive' run gitolite's driver "
            f"instead of the common hook: the trigger {GITOLITE_TRIGGER} adds "
            f"{GITOLITE_HOOK_NAME} to the hooks it runs"
        )
    for path in gitolite.repositories():
        said += _back_up_repository_hook(path, common)
    gitolite.setup()
    said.append("ran gitolite setup: every repository's hooks now come from LOCAL_CODE")
    if specific_hooks:
        # setup links the common hooks last, over the driver of repositories with their
        # own hooks: the POST_COMPILE triggers put the driver (and the admin's hooks) back
        gitolite.trigger("POST_COMPILE")
        said.append("ran gitolite trigger POST_COMPILE: repositories' own hooks run again")
    code = 0
    for path in gitolite.repositories():
        unguarded = hook_problems(path)
        with Session(Git(path)) as session:  # one repository's: its git, cache and contracts
            problems = unguarded + setup_problems(session, path, "gitolite", None, sshd_config=None)
        said += [
            f"{'not guarded' if problem in unguarded else 'warning'}: "
            f"{os.path.basename(path)}: {problem}"
            for problem in problems
        ]
        code = 1 if unguarded else code
    # one sshd serves every repository of the account: said once
    said += [
        f"warning: {problem}" for problem in sshd_problems(gitolite.home, "gitolite", sshd_config)
    ]
    return said, code


def _back_up_repository_hook(repo: str, common: str) -> List[str]:
    """A repository's own pre-receive, which 'gitolite setup' would replace unseen."""
    hook = os.path.join(repo, "hooks", "pre-receive")
    if (
        not os.path.lexists(hook)
        or os.path.realpath(hook) == os.path.realpath(common)
        or is_gitolite_driver(hook)
        or MARKER in _text(hook)
    ):
        return []
    backup = os.path.join(repo, "hooks", GITOLITE_BACKUP_DIR, "pre-receive")
    os.makedirs(os.path.dirname(backup), exist_ok=True)
    if os.path.lexists(backup):
        os.remove(backup)
    shutil.move(hook, backup)
    return [
        f"moved {hook} to {backup}: gitolite would have replaced it; call it from a "
        f"repo-specific hook if it must still run"
    ]


def add_parser(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "install-pre-receive",
        parents=[common(), host_option()],
        help="install the pre-receive hook where your git server runs it",
    )
    parser.add_argument(
        "repo",
        metavar="REPO",
        help="the repository, e.g. /srv/git/app.git (gitolite: its "
        "repositories folder; ghes: a clone of the hooks repository)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace a pre-receive hook oracle-guard did not write (it is "
        "kept as pre-receive.before-oracle-guard)",
    )
    parser.add_argument(
        "--dir",
        metavar="DIR",
        help="write DIR/oracle-guard instead, for servers that run every "
        "script of a pre-receive.d folder (relative to REPO)",
    )
    parser.add_argument(
        "--sshd-config",
        metavar="FILE",
        default=SSHD_CONFIG,
        help="ssh and gitolite: the configuration of the sshd that serves "
        "the repositories (default: %(default)s)",
    )
    parser.set_defaults(run=run)


def run(options: argparse.Namespace) -> int:
    trust_repository_owner()
    try:
        lines, code = install(
            options.repo,
            host=options.host,
            identity_env=options.identity_env,
            force=options.force,
            directory=options.dir,
            sshd_config=options.sshd_config,
        )
    except OSError as exc:  # a file the admin can fix: one line, not an internal error
        raise UsageError(str(exc)) from None
    print("\n".join(lines))
    return code
