"""Signed authority: the SSH key git here signs commits with, and the allowed
signers file the contract's authority names."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from oracle_guard.commands.init.files import Planned, read_text
from oracle_guard.errors import InitError

if TYPE_CHECKING:
    from oracle_guard.git.plumbing import Git

HOW_TO_SIGN = "git config gpg.format ssh; git config user.signingkey ~/.ssh/id_ed25519.pub"


@dataclass
class Signing:
    """The key git here signs commits with, and whom it names; or why there is none."""

    principal: str = ""
    key: Any = None  # owner_keys.PublicKey
    setting: str = ""  # user.signingkey as git reads it
    signs_every_commit: bool = False  # commit.gpgsign
    why: str = ""
    fix: str = HOW_TO_SIGN


def _config(git: Git, key: str, kind: Optional[str] = None) -> str:
    return git.config(key, kind) or ""


def signing_identity(git: Git, top: str) -> Signing:
    """git's SSH signing key (gpg.format ssh, user.signingkey: a key file or a
    ``key::`` literal, as git reads them) and the principal that names its user
    (user.email, else user.name)."""
    # deferred: 5 ms to import, only for signing_identity()
    from oracle_guard.authority import keys as owner_keys

    if (_config(git, "gpg.format") or "openpgp") != "ssh":
        return Signing(why="git here is not set up for SSH signing (gpg.format is not ssh)")
    setting = _config(git, "user.signingkey", "path")
    if not setting:
        return Signing(why="git here signs with SSH keys but names no user.signingkey")
    try:
        if setting.startswith("key::"):
            key = owner_keys.key_from_text(setting[len("key::") :])
        elif setting.startswith("ssh-"):  # git reads this as a literal key too
            key = owner_keys.key_from_text(setting)
        else:  # git signs from the top of the work tree
            key = owner_keys.key_from_file(os.path.join(top, setting))
    except owner_keys.KeyProblem as exc:
        return Signing(why=f"user.signingkey holds no usable public key ({exc})")
    email, name = _config(git, "user.email"), _config(git, "user.name")
    principal, source = (email, "user.email") if email else (name, "user.name")
    fix = "git config user.email YOU@EXAMPLE.COM"
    if not principal:
        return Signing(
            why="neither user.email nor user.name is set, to name you in the signers file", fix=fix
        )
    problem = owner_keys.principal_problem(principal)
    if problem:
        return Signing(why=f"{source} cannot name you in the signers file ({problem})", fix=fix)
    return Signing(
        principal, key, setting, signs_every_commit=_config(git, "commit.gpgsign", "bool") == "true"
    )


def plan_signers(
    authority: Optional[Dict[str, Any]], signing: Signing, top: str
) -> Tuple[List[Planned], List[str]]:
    """The allowed signers file the contract's authority names: a new one with the
    user's signing key; one that is there already is kept as it is. Returns it (or
    nothing) and notes for the user."""
    # deferred: 5 ms to import, only for plan_signers()
    from oracle_guard.authority import allowed_signers
    from oracle_guard.authority import keys as owner_keys
    from oracle_guard.git import worktree

    files: List[Planned] = []
    notes: List[str] = []
    if authority is None:
        notes.append(
            f"no authority section: {signing.why}; to have owners change the "
            f"oracle with SSH-signed commits, run {signing.fix} and rerun "
            "oracle-guard init"
        )
        return files, notes
    path = authority["signers"]
    try:
        full = worktree.full_path(top, path)
    except worktree.WorktreeError as exc:
        raise InitError(str(exc)) from None
    if os.path.isdir(full):
        raise InitError(f"{path} is a folder; authority.signers names a file")
    if os.path.lexists(full):
        text = read_text(full)
        files.append(Planned(path, text or "", "the owners' keys, kept as they are", state="same"))
        if text is None:
            notes.append(
                f"{path} is not a UTF-8 text file: oracle-guard check refuses "
                "the contract until it is fixed"
            )
            return files, notes
        try:
            listed = allowed_signers.parse(text)
        except allowed_signers.AllowedSignersError as exc:
            notes.append(
                f"{path}:{exc.line}: {exc.message}: oracle-guard check refuses "
                "the contract until the file is fixed"
            )
            return files, notes
        if signing.key is not None and all(s.public_key != signing.key.blob for s in listed):
            literal = (
                signing.setting[len("key::") :]
                if signing.setting.startswith("key::")
                else signing.setting
            )
            notes.append(
                f"your signing key ({signing.key.fingerprint}) is not in {path}: "
                "to sign oracle changes with it, run oracle-guard signers add "
                f"{shlex.quote(signing.principal)} {shlex.quote(literal)} "
                "once the contract is staged"
            )
        elif signing.key is None:
            notes.append(f"owners sign oracle changes, but {signing.why}: {signing.fix} sets it up")
        return files, notes
    if signing.key is None:
        notes.append(
            f"{path} does not exist yet: oracle-guard signers add PRINCIPAL "
            f"KEYFILE writes it once the contract is staged; {signing.why}: "
            f"{signing.fix} sets up yours"
        )
        return files, notes
    files.append(
        Planned(
            path,
            owner_keys.new_file(signing.principal, signing.key),
            f"the owners' keys: {signing.principal}, {signing.key.key_type} "
            f"{signing.key.fingerprint}, from user.signingkey",
        )
    )
    if not signing.signs_every_commit:
        notes.append(
            "git here does not sign every commit: run git config "
            "commit.gpgsign true, so the pre-commit hook can tell your oracle "
            "commits will be signed"
        )
    return files, notes
