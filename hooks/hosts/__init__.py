"""What oracle-guard knows of each git host: the one variable it sets for the
pusher, and how to tell it from the repository it serves."""

from __future__ import annotations

import os
from typing import NamedTuple, Optional, Tuple


class Host(NamedTuple):  # not a dataclass: every push would import inspect
    name: str
    # the variable the host itself sets for the pusher, after anything a
    # client could send; None: the contract's identity_env is taken as named
    pusher_variable: Optional[str]
    # where the hook goes, relative to the repository, when the host runs a folder
    hook_dir: Optional[str] = None


HOSTS = {
    host.name: host
    for host in (
        Host("gitolite", "GL_USER"),
        Host("gitlab", "GL_USERNAME", "custom_hooks/pre-receive.d"),
        Host("gitea", "GITEA_PUSHER_NAME", "hooks/pre-receive.d"),
        Host("ghes", "GITHUB_USER_LOGIN"),
        Host("http", "REMOTE_USER"),
        Host("ssh", "REMOTE_USER"),
        Host("plain", None),
    )
}


def pusher_variable(host: Optional[str], identity_env: Optional[str]) -> Optional[str]:
    """The variable a hook installed for ``host`` may take the pusher from, or None
    when it trusts the contract's identity_env as named (no host, or plain)."""
    if identity_env:
        return identity_env
    return HOSTS[host].pusher_variable if host else None


def detect(repo: str) -> Tuple[str, str]:
    """(host, why): what the repository's files say about who serves it."""
    if os.path.exists(os.path.join(repo, "gl-conf")):
        return "gitolite", f"{os.path.join(repo, 'gl-conf')} exists (gitolite writes it)"
    hook = os.path.join(repo, "hooks", "pre-receive")
    text = _head_of(hook)
    if "gitea" in text.lower() or "forgejo" in text.lower():
        return "gitea", f"{hook} is Gitea's"
    if os.sep + "@hashed" + os.sep in os.path.abspath(repo) + os.sep:
        return "gitlab", f"{repo} is in GitLab's hashed storage"
    return "plain", "no host's marks in the repository"


def _head_of(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return f.read(4096).decode("utf-8", "replace")
    except OSError:
        return ""
