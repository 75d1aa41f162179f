"""The owners' SSH public keys as the authoring commands take them (a key's text,
a .pub file), and what a new allowed signers file holds: shared by ``signers``
and ``init``, which writes the first one."""

from __future__ import annotations

import base64
import hashlib
import os
from typing import NamedTuple, Optional

from oracle_guard.authority import allowed_signers, sshsig
from oracle_guard.report.escaping import show_path

SIGNERS_FILE = ".oracle-guard/allowed_signers"  # where init puts it
ADD_AUTHORITY = f"authority: {{signers: {SIGNERS_FILE}}}"
KEY_FILE_MAX_BYTES = 64 << 10
HEADER = (
    "# The owners: a commit signed by one of these keys may change the oracle\n"
    "# (ssh-keygen's allowed signers format: PRINCIPAL KEYTYPE KEY [COMMENT]).\n"
    "# Edit it with 'oracle-guard signers add | remove | list'.\n"
)


class KeyProblem(Exception):
    """A key argument or key file that holds no usable public key."""


class PublicKey(NamedTuple):
    key_type: str
    base64: str
    comment: str
    blob: bytes

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.blob)

    def line(self, principal: str) -> str:
        return " ".join(p for p in (principal, self.key_type, self.base64, self.comment) if p)


def fingerprint(blob: bytes) -> str:
    """As ``ssh-keygen -l`` prints it: the base64 SHA-256 of the key blob, unpadded."""
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def _controls(text: str) -> bool:
    return any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 or c in "\u2028\u2029" for c in text)


def key_from_text(text: str) -> PublicKey:
    """``keytype base64 [comment]``, as a .pub file's line."""
    fields = text.strip(" \t\r\n").split(None, 2)
    if len(fields) < 2:
        raise KeyProblem("expected a public key: ssh-ed25519 AAAA... [comment]")
    comment = fields[2].strip() if len(fields) > 2 else ""
    if _controls(comment):
        raise KeyProblem("the key's comment holds a control character")
    try:
        blob = sshsig.key_blob(fields[0], fields[1])
    except sshsig.SignatureError as exc:
        raise KeyProblem(exc.message) from None
    return PublicKey(fields[0], fields[1], comment, blob)


def key_from_file(path: str) -> PublicKey:
    """The public key of a .pub file, or of a private key file whose .pub sits
    beside it (a private key itself is never read past its first line)."""
    if not path.endswith(".pub") and os.path.isfile(path + ".pub"):
        path += ".pub"
    try:
        with open(path, "rb", buffering=0) as f:
            head = f.read(64)
            if head.startswith(b"-----BEGIN"):
                raise KeyProblem(
                    f"{show_path(path)} is a private key and no .pub sits "
                    f"beside it: pass the public key ({show_path(path)}.pub, "
                    "from ssh-keygen -y -f KEY)"
                )
            data = head + f.read(KEY_FILE_MAX_BYTES)
    except OSError as exc:
        raise KeyProblem(f"cannot read {show_path(path)}: {exc.strerror or exc}") from None
    if len(data) > KEY_FILE_MAX_BYTES:
        raise KeyProblem(f"{show_path(path)} is too large for a public key file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise KeyProblem(f"{show_path(path)} is not a public key file (not UTF-8 text)") from None
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if len(lines) != 1:
        raise KeyProblem(
            f"{show_path(path)} holds {len(lines) or 'no'} key lines; a public key file holds one"
        )
    try:
        return key_from_text(lines[0])
    except KeyProblem as exc:
        raise KeyProblem(f"{show_path(path)}: {exc}") from None


def key_argument(text: str, here: str) -> PublicKey:
    """KEYTEXT (``ssh-ed25519 AAAA... [comment]``) or KEYFILE (relative to ``here``)."""
    words = text.split(None, 1)
    if len(words) == 2 and words[0] in sshsig.KEY_TYPES:
        return key_from_text(text)
    path = os.path.join(here, os.path.expanduser(text))
    if not os.path.lexists(path) and len(words) == 2:
        return key_from_text(text)  # an unsupported key type says so
    return key_from_file(path)


# a valid ed25519 key, to read a principal alone as a line would
_PROBE = base64.b64encode(b"\0\0\0\x0bssh-ed25519\0\0\0\x20" + bytes(32)).decode()


def principal_problem(name: str) -> Optional[str]:
    """Why ``name`` cannot be one principal of an allowed signers line (None: it can)."""
    if not name:
        return "the principal is empty"
    if _controls(name) or any(c in name for c in " \t"):
        return f"principal {name!r} holds white space or a control character"
    if name.startswith("#"):
        return f"principal {name!r} starts with '#': the line would be a comment"
    if "," in name:
        return f"principal {name!r} holds a comma, which separates principals: name one"
    try:
        allowed_signers.parse_line(1, f"{name} {sshsig.ED25519} {_PROBE}")
    except allowed_signers.AllowedSignersError as exc:
        return exc.message
    return None


def new_file(principal: str, key: PublicKey) -> str:
    """A new signers file with one owner (what init and a first ``add`` write)."""
    return HEADER + key.line(principal) + "\n"
