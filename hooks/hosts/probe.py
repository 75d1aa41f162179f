"""What the server-side setup checks share: the installer's marker, sshd's
configuration file, and one line of doctor's report."""

from __future__ import annotations

import pwd
from dataclasses import dataclass
from typing import Optional

MARKER = "# written by oracle-guard install-pre-receive"
SSHD_CONFIG = "/etc/ssh/sshd_config"


@dataclass(frozen=True)
class Line:
    ok: bool
    text: str

    def __str__(self) -> str:
        return f"{'ok' if self.ok else 'problem'}: {self.text}"


@dataclass
class Hook:
    path: str  # the oracle-guard script git ends up running
    python: Optional[str] = None
    host: Optional[str] = None
    identity_env: Optional[str] = None


def text_of(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return f.read(1 << 16).decode("utf-8", "replace")
    except OSError:
        return ""


def account_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"
