"""Is a server repository guarded? The checks doctor runs, and those
install-pre-receive warns about once the hook is in place: the hook itself,
git's configuration, the rules, the objects and (accounts.py) who can reach them."""

from __future__ import annotations

import glob
import os
import pwd
import re
import shlex
import subprocess
from typing import TYPE_CHECKING, List, Optional, Tuple

from oracle_guard import __version__
from oracle_guard.errors import GitError, ProtocolError
from oracle_guard.git.plumbing import Git
from oracle_guard.hosts import pusher_variable
from oracle_guard.hosts.accounts import account_lines, sshd_lines
from oracle_guard.hosts.probe import MARKER, SSHD_CONFIG, Hook, Line, account_name, text_of

if TYPE_CHECKING:
    from oracle_guard.contract import Contract
    from oracle_guard.session import Session


def inspect(
    session: Session, repo: str, directory: Optional[str] = None, sshd_config: str = SSHD_CONFIG
) -> List[Line]:
    """``session``: the caller's, on ``repo``; the rules are read in it."""
    git = session.git
    hook, lines = _hook(git, repo, directory)
    lines += _hooks_path(repo)
    lines += _gitolite_options(repo)
    host = hook.host if hook else None
    identity_env = hook.identity_env if hook else None
    lines += _head(git, repo)
    lines += _rules(session, host, identity_env, hook is not None)
    lines += _fsck(git, repo)
    lines += _shallow(git, repo)
    lines += account_lines(repo, host, hook)
    lines += sshd_lines(repo, host, sshd_config, pusher_variable(host, identity_env))
    return lines


def setup_problems(
    session: Session,
    repo: str,
    host: str,
    identity_env: Optional[str],
    hook_path: str = "",
    sshd_config: Optional[str] = SSHD_CONFIG,
) -> List[str]:
    """What the installer warns about once the hook is in place; ``session``:
    the caller's, on ``repo``."""
    git = session.git
    hook = Hook(hook_path, host=host, identity_env=identity_env)
    lines = (
        _hooks_path(repo)
        + _head(git, repo)
        + _identity(session, host, identity_env)
        + _fsck(git, repo)
        + account_lines(repo, host, hook)
        + sshd_lines(repo, host, sshd_config, pusher_variable(host, identity_env))
    )
    return [line.text for line in lines if not line.ok]


def hook_problems(repo: str) -> List[str]:
    git = Git(repo)
    try:
        _, lines = _hook(git, repo, None)
    finally:
        git.close()
    return [line.text for line in lines + _gitolite_options(repo) if not line.ok]


# -- the hook ---------------------------------------------------------------------
def is_gitolite_driver(path: str) -> bool:
    """gitolite's multi-hook driver, which runs every executable PATH.* beside it."""
    return os.path.basename(
        os.path.realpath(path)
    ) == "multi-hook-driver" or "for h in $0.*" in text_of(path)


def _hook(git: Git, repo: str, directory: Optional[str]) -> Tuple[Optional[Hook], List[Line]]:
    hooks = os.path.join(repo, git.run("rev-parse", "--git-path", "hooks").decode().strip())
    if directory is not None:
        folder = directory if os.path.isabs(directory) else os.path.join(repo, directory)
        path = os.path.join(folder, "oracle-guard")
    else:
        path = os.path.join(hooks, "pre-receive")
    install = f"oracle-guard install-pre-receive {shlex.quote(repo)} --host HOST"
    if not os.path.lexists(path):
        return None, [
            Line(
                False, f"no hook at {path}: every push is accepted unjudged; install it: {install}"
            )
        ]
    lines = []
    script = path
    if directory is None and is_gitolite_driver(path):
        ours = [m for m in sorted(glob.glob(glob.escape(path) + ".*")) if MARKER in text_of(m)]
        if not ours:
            return None, [
                Line(
                    False,
                    f"{path} is gitolite's multi-hook driver (the repository "
                    "has an 'option hook.pre-receive'), and none of the hooks "
                    "it runs is oracle-guard: list it first in that option "
                    "(option hook.pre-receive = oracle-guard ...) and run "
                    "gitolite setup",
                )
            ]
        script = ours[0]
        lines.append(Line(True, f"{path} is gitolite's multi-hook driver; it runs {script}"))
    elif MARKER not in text_of(path):
        runner = os.path.join(os.path.dirname(path), "pre-receive.d", "oracle-guard")
        if directory is None and "pre-receive.d" in text_of(path) and MARKER in text_of(runner):
            script = runner
            lines.append(
                Line(
                    True,
                    f"{path} runs the scripts of pre-receive.d, {runner} "
                    "among them (check that your server's runner stops on "
                    "their failure)",
                )
            )
        else:
            return None, [Line(False, f"{path} is not oracle-guard's hook: install it: {install}")]
    hook = _parse(script)
    if not _executable(script):
        return hook, lines + [
            Line(
                False,
                f"{script} is not executable, so git (or gitolite's "
                f"driver) skips it: chmod 755 {script}",
            )
        ]
    if hook.python is None:
        return hook, lines + [
            Line(
                False,
                f"{script} does not run oracle-guard pre-receive as "
                f"install-pre-receive writes it: reinstall: {install}",
            )
        ]
    lines.append(_runs(hook, repo))
    if hook.host is None:
        lines.append(
            Line(
                True,
                f"{script} names no host: the pusher is read from the variable "
                "the contract names (reinstall with --host to pin the host's)",
            )
        )
    else:
        lines.append(Line(True, f"host: {hook.host}"))
    return hook, lines


def gitolite_hook_option(repo: str) -> Optional[List[str]]:
    """The hooks gitolite.conf's 'option hook.pre-receive' lists for this
    repository (gitolite writes them into its gl-conf), or None when unset."""
    text = text_of(os.path.join(repo, "gl-conf"))
    found = re.findall(r"'gitolite-options\.hook\.pre-receive(?:\.[^']*)?',\s*'([^']*)'", text)
    return [word for value in found for word in value.split()] if found else None


def _gitolite_options(repo: str) -> List[Line]:
    """gitolite replaces the common hook with its driver wherever the option is set,
    at the next gitolite-admin push; only the hooks the option lists run then."""
    listed = gitolite_hook_option(repo)
    if listed is None or "oracle-guard" in listed:
        return []
    added = os.path.join(repo, "hooks", "pre-receive.a00-oracle-guard")
    if os.path.islink(added) and MARKER in text_of(added):
        return [
            Line(
                True,
                f"gitolite.conf sets option hook.pre-receive = {' '.join(listed)} for this "
                "repository, and oracle-guard's trigger (oracle-guard-hooks) adds oracle-guard "
                "to the hooks gitolite's driver runs",
            )
        ]
    return [
        Line(
            False,
            f"gitolite.conf sets option hook.pre-receive = {' '.join(listed)} for "
            "this repository, without oracle-guard: at the next gitolite-admin push "
            "gitolite's driver replaces the oracle-guard hook here and does not "
            f"run it; list it: option hook.pre-receive = oracle-guard "
            f"{' '.join(listed)}",
        )
    ]


def _parse(path: str) -> Hook:
    hook = Hook(path)
    for line in text_of(path).splitlines():
        if not line.startswith("exec "):
            continue
        try:
            words = shlex.split(line[len("exec ") :])
        except ValueError:
            return hook
        if words[1:5] != ["-I", "-m", "oracle_guard", "pre-receive"]:
            return hook
        hook.python = words[0]
        options = dict(zip(words[5::2], words[6::2]))
        hook.host = options.get("--host")
        hook.identity_env = options.get("--identity-env")
    return hook


def _runs(hook: Hook, repo: str) -> Line:
    """Run the hook's interpreter as the account that owns the repository (the
    one git runs hooks as): a venv made from a Python it cannot read fails here."""
    assert hook.python is not None  # inspect reports a hook without one before this
    owner = os.stat(repo).st_uid
    try:
        proc = subprocess.run(
            [hook.python, "-I", "-m", "oracle_guard", "--version"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd="/",
            stdin=subprocess.DEVNULL,
            timeout=60,
            **_as_owner(repo),
        )
        said = proc.stdout.decode("utf-8", "replace").strip()
        rc = proc.returncode
    except OSError as exc:
        said, rc = str(exc), 126
    account = account_name(owner)
    if rc != 0:
        first = said.splitlines()[-1] if said else f"exit {rc}"
        return Line(
            False,
            f"{hook.python} cannot run oracle-guard as {account} ({first}): "
            "every push is rejected; install oracle-guard with a Python that "
            f"account can read (for example python3 -m venv /opt/oracle-guard, "
            "made from /usr/bin/python3), and reinstall the hook with it",
        )
    # the version is what must match: two installations of one release may know
    # their commit differently (a build records it, an sdist's build cannot)
    if said.split(" (commit ", 1)[0] != f"oracle-guard {__version__}":
        return Line(
            False,
            f"the hook runs {said}, not oracle-guard {__version__} (this one): "
            "reinstall the hook with this installation",
        )
    return Line(True, f"the hook runs {said} ({hook.python}) as {account}")


def _executable(path: str) -> bool:
    try:
        return bool(os.stat(path).st_mode & 0o111)
    except OSError:
        return False


# -- the repository ---------------------------------------------------------------
def _head(git: Git, repo: str) -> List[Line]:
    # deferred: 8 ms to import, only for _head()
    from oracle_guard.revisions import unresolved_head

    target = git.head_target()
    fix = f"git --git-dir={shlex.quote(repo)} symbolic-ref HEAD refs/heads/main"
    if not git.has_refs():
        return [
            Line(
                False,
                f"the repository is empty: its first push brings its own rules, so "
                f"push the first contract yourself; the rules then come from the "
                f"branch HEAD names ({target or 'none'}): if the first push "
                f"creates another, point HEAD at it first: {fix}",
            )
        ]
    tip = git.resolve_commit("HEAD")
    if tip is None:
        return [Line(False, unresolved_head(git) + " (every push is rejected until then)")]
    return [Line(True, f"HEAD names {target or 'a detached commit'} ({tip[:12]})")]


def _rules(
    session: Session, host: Optional[str], identity_env: Optional[str], hooked: bool = True
) -> List[Line]:
    # deferred: 9 ms to import, only for _rules()
    from oracle_guard import contract as contract_mod
    from oracle_guard.authority.signatures import Authority
    from oracle_guard.revisions import rules_branch
    from oracle_guard.snapshot import Snapshot

    git = session.git
    tip = git.resolve_commit("HEAD")
    if tip is None:
        return []
    try:
        branch, tip = rules_branch(git, tip, session)
        assert tip is not None  # rules_branch gives a tip for a tip
        snapshot = Snapshot.of_commit(git, tip, branch or "HEAD")
        if contract_mod.read(snapshot, session) is None:
            return [
                Line(
                    False,
                    f"{branch} has no {contract_mod.CONTRACT_PATH}: a push is judged "
                    "by the rules it brings; commit the contract to it",
                )
            ]
        contract = contract_mod.choose(snapshot, snapshot, session)
        assert contract is not None  # the snapshot has one: read() said so
        lines = [Line(True, f"rules: {contract_mod.CONTRACT_PATH} at {branch} ({tip[:12]})")]
        authority = Authority.of(contract, session)
    except (contract_mod.ContractError, ProtocolError, GitError) as exc:
        return [Line(False, f"the rules do not load, so every push is rejected: {exc}")]
    if authority is not None:
        names = sorted({p for s in authority.signers for p in s.principals})
        lines.append(
            Line(
                True,
                f"authority: owners sign with the keys in {authority.path} "
                f"({len(names)} principal{'s' if len(names) != 1 else ''})",
            )
        )
    lines += _identity_of(contract, host, identity_env) if hooked else []
    if authority is None and not contract.owners:
        lines.append(
            Line(
                True,
                "no owners: oracle changes are refused to every push; an "
                "admin changes the rules on the server (docs: how-to/server-install.md)",
            )
        )
    return lines


def _identity(session: Session, host: str, identity_env: Optional[str]) -> List[Line]:
    # deferred: 8 ms to import, only for _identity()
    from oracle_guard import contract as contract_mod
    from oracle_guard.snapshot import Snapshot

    git = session.git
    tip = git.resolve_commit("HEAD")
    if tip is None:
        return []
    snapshot = Snapshot.of_commit(git, tip, "HEAD")
    try:
        if contract_mod.read(snapshot, session) is None:
            return []
        contract = contract_mod.choose(snapshot, snapshot, session)
    except contract_mod.ContractError:
        return []  # doctor says so; the installer has nothing to add
    if contract is None:  # read found one: choose returns it
        return []
    return _identity_of(contract, host, identity_env)


def _identity_of(
    contract: Contract, host: Optional[str], identity_env: Optional[str]
) -> List[Line]:
    named = contract.section("identity_env")
    if not contract.owners or not named:
        return []
    trusted = pusher_variable(host, identity_env)
    if trusted is None:
        return [
            Line(
                False,
                f"owners are read from {named}, as the contract names it, whoever "
                "set it: reinstall the hook with --host for your server (or "
                "--identity-env for ssh and plain) so only its variable counts",
            )
        ]
    if trusted != named:
        return [
            Line(
                False,
                f"the contract names identity_env {named}, but the hook takes the "
                f"pusher from {trusted} ({host}): nobody is an owner by variable; "
                f"an owner changes identity_env to {trusted}",
            )
        ]
    return [Line(True, f"owners by variable: {', '.join(contract.owners)} in {named}")]


def _fsck(git: Git, repo: str) -> List[Line]:
    values = [_owner_config(repo, key) for key in ("receive.fsckObjects", "transfer.fsckObjects")]
    if "true" in values:
        return [Line(True, "receive.fsckObjects is on")]
    return [
        Line(
            False,
            "receive.fsckObjects is off: git stores malformed objects that "
            "oracle-guard does not read in full: "
            f"git --git-dir={shlex.quote(repo)} config receive.fsckObjects true "
            "(or, as the account git runs as, for all its repositories: "
            "git config --global receive.fsckObjects true)",
        )
    ]


def _as_owner(repo: str) -> dict:
    """subprocess options that run a command as the account owning ``repo``, with
    its HOME (its global git config), when this runs as root for another account."""
    owner = os.stat(repo).st_uid
    if os.geteuid() != 0 or owner == 0:
        return {}
    entry = pwd.getpwuid(owner)
    return dict(
        user=owner,
        group=entry.pw_gid,
        extra_groups=[],
        env={**os.environ, "HOME": entry.pw_dir, "XDG_CONFIG_HOME": ""},
    )


def _hooks_path(repo: str) -> List[Line]:
    """core.hooksPath as git reads it when it serves a push: as the repository's
    owner, from the system, global and repository config. Set anywhere, git runs
    the hooks of that folder instead of the repository's, where oracle-guard is."""
    proc = subprocess.run(
        [
            "git",
            "--git-dir",
            os.path.abspath(repo),
            "config",
            "--show-origin",
            "--get-all",
            "core.hooksPath",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        cwd="/",
        timeout=60,
        **_as_owner(repo),
    )
    if proc.returncode not in (0, 1):
        return [
            Line(
                False,
                f"cannot read core.hooksPath as {account_name(os.stat(repo).st_uid)} "
                f"(git config exit {proc.returncode}): which hooks git runs is unknown",
            )
        ]
    found = [
        line.split("\t", 1)
        for line in proc.stdout.decode("utf-8", "replace").splitlines()
        if "\t" in line
    ]
    if not found:
        return []
    own = os.path.realpath(os.path.join(repo, "hooks"))
    where = "; ".join(f"{value} ({origin})" for origin, value in found)
    if all(os.path.realpath(os.path.join(repo, value)) == own for _, value in found):
        return [Line(True, f"core.hooksPath names the repository's own hooks: {where}")]
    return [
        Line(
            False,
            f"core.hooksPath is set for {account_name(os.stat(repo).st_uid)}, the account "
            f"git serves pushes as: {where}; git runs that folder's hooks, not the "
            "repository's, so a push is judged by nothing oracle-guard installed: unset it "
            "(git config --global --unset core.hooksPath as that account, or in the file named)",
        )
    ]


def _owner_config(repo: str, key: str) -> Optional[str]:
    """A config value as git reads it when it serves a push: as the repository's
    owner, whose global config counts, not root's."""
    # absolute: git runs from /, where a relative REPO names nothing
    proc = subprocess.run(
        ["git", "--git-dir", os.path.abspath(repo), "config", "--type=bool", "--get", key],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        cwd="/",
        timeout=60,
        **_as_owner(repo),
    )
    return proc.stdout.decode("utf-8", "replace").strip() or None


def _shallow(git: Git, repo: str) -> List[Line]:
    """A shallow server repository ends history at its boundary: the commits a
    push brings are listed from there, and what lies beyond is never judged."""
    if not git.is_shallow():
        return []
    shallow = os.path.normpath(os.path.join(git.git_dir(), "shallow"))
    return [
        Line(
            False,
            f"{shallow} exists: the repository is shallow, so a push's commits "
            "beyond its boundary are not judged; make it complete: "
            f"git --git-dir={shlex.quote(repo)} fetch --unshallow SOURCE",
        )
    ]
