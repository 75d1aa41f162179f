"""Signed authority: an owner is whoever signs a commit with a key in the
allowed signers file at the rules revision (``authority.signers``).

An oracle change rides alone, in an owner's branch: when the change as a
whole (the merge that will be recorded) edits protected paths, every commit
that leads to it must carry a valid SSH signature (namespace ``git``) by such
a key, covering that exact commit object. A merge commit that is git's clean
remerge of its parents carries no change of its own and needs none (a
platform's merge of an owner's branch). A key added in the same change does
not count: the file is read from the rules revision, never from the change.
Each commit is verified once a run; ``cryptography`` is imported only then.
"""

from __future__ import annotations

import os
from typing import AbstractSet, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from oracle_guard.contract import Contract, ContractError
from oracle_guard.findings import Finding
from oracle_guard.git.history import Commit
from oracle_guard.git.objects import BlobTooLarge
from oracle_guard.git.plumbing import Git
from oracle_guard.git.process import decode_path
from oracle_guard.parsing import strict_input
from oracle_guard.report.escaping import show_path
from oracle_guard.session import Session

HOOK = "write-set"
NAMESPACE = "git"
SIGNERS_MAX_BYTES = 1 << 20


class Authority:
    """The owners' keys at the rules revision, and how a commit is judged by them."""

    def __init__(self, contract: Contract, git: Git) -> None:
        # deferred: 2 ms to import, only for __init__()
        from oracle_guard.authority import allowed_signers

        section = contract.section("authority")
        self.path: str = section["signers"]
        self.require_touch: bool = bool(section.get("require_touch", False))
        source = contract.source
        entry = source.entry(self.path)
        if entry is None or not entry.is_regular:
            raise ContractError(
                f"authority.signers {self.path!r} is missing from "
                f"{source.label} (or is not a regular file)"
            )
        try:
            text = strict_input.decode_text(source.read(self.path, SIGNERS_MAX_BYTES))
            self.signers = allowed_signers.parse(text)
        except (strict_input.LoadError, BlobTooLarge) as exc:
            raise ContractError(f"{self.path}: {exc}", path=self.path) from None
        except allowed_signers.AllowedSignersError as exc:
            raise ContractError(
                f"{self.path}:{exc.line}: {exc.message}",
                ((exc.line, None, exc.message),),
                path=self.path,
            ) from None
        self.rules_label = source.label
        self._source_commit: Optional[str] = source.commit
        self._rules: Optional[Tuple[Optional[str]]] = None  # resolved once, when asked
        self._git = git
        self._format = "sha256" if git.object_id_length() == 64 else "sha1"
        self._key = f"{entry.oid}:{int(self.require_touch)}"
        self._verdicts: Dict[str, Optional[str]] = {}

    @classmethod
    def of(cls, contract: Optional[Contract], session: Session) -> Optional[Authority]:
        """One per contract in ``session``, on its repository; None without an authority section."""
        if contract is None or contract.section("authority") is None:
            return None
        return session.memo(contract, "authority", lambda: cls(contract, session.git))

    def configured_signer(self) -> Tuple[Optional[str], str]:
        """(principal, "") when git here will sign the next commit with an
        owner's key; else (None, why not)."""
        # deferred: 2 ms to import, only for configured_signer()
        from oracle_guard.authority import allowed_signers, sshsig

        git = self._git
        if (git.config("gpg.format") or "openpgp") != "ssh":
            return None, "git here does not sign with SSH keys (gpg.format)"
        if git.config("commit.gpgsign", "bool") != "true":
            return None, "git here does not sign every commit (commit.gpgsign)"
        key = git.config("user.signingkey", "path")
        if not key:
            return None, "no user.signingkey is set"
        try:
            blob = sshsig.public_key_blob(
                key[len("key::") :] if key.startswith("key::") else _public_key_text(key)
            )
        except (OSError, ValueError, sshsig.SignatureError) as exc:
            return None, f"cannot read the public key of user.signingkey ({exc})"
        signer = allowed_signers.find(self.signers, blob, NAMESPACE)
        if signer is None:
            return None, f"user.signingkey is not an owner's key in {self.path}"
        return signer.principals[0], ""

    def why_not(self, commit: Commit) -> Optional[str]:
        """None when an owner signed ``commit``; else why it does not count."""
        if commit.id not in self._verdicts:
            self._verdicts[commit.id] = self._judge(commit)
        return self._verdicts[commit.id]

    def outside_rules(self, commits: Sequence[Commit]) -> Set[str]:
        """The ids of ``commits`` that are not in the rules revision's history:
        no commit there has one of them as a parent."""
        rules = self._rules_commit()
        return self._git.outside_history([c.id for c in commits], rules) if rules else set()

    def replay_of(self, commit: Commit, outside: AbstractSet[str] = frozenset()) -> Optional[str]:
        """The commit of the rules revision's history that makes the same change
        from the same state as ``commit`` (its parents and tree), if any. A
        signature covers the commit without its signature header, so a
        re-encoded signature (or an ECDSA one, whose (r, s) has a twin (r, n-s))
        gives an owner's old change a new commit id: what it does says it is
        a replay, not its id."""
        rules = self._rules_commit()
        if rules is None or (commit.parents and commit.parents[0] in outside):
            return None
        tree = self._git.read_commit(commit.id).split(b"\n", 1)[0]
        if not tree.startswith(b"tree "):
            return None
        return self._git.same_change_in_history(
            rules, commit.parents, tree[len(b"tree ") :].decode("ascii"), commit.id
        )

    def _rules_commit(self) -> Optional[str]:
        if self._rules is None:
            named = self._source_commit
            self._rules = (self._git.resolve_commit(named) if named else None,)
        return self._rules[0]

    def _judge(self, commit: Commit) -> Optional[str]:
        # deferred: 4 ms to import, only for _judge()
        from oracle_guard.authority import allowed_signers, sshsig

        raw = self._git.read_commit(commit.id)
        if _signed_parents(raw) != commit.parents:
            # a header between the parent lines ends git's list of them, though
            # the signature (which skips gpgsig* lines) still covers them all
            return (
                "lists parents in a way git does not read as the commit's parents "
                "(a header between them)"
            )
        headers = sshsig.signature_headers(raw)
        if len(headers) > 1:
            names = ", ".join(sorted({h.decode("ascii", "replace") for h in headers}))
            return (
                f"carries {len(headers)} signature headers ({names}); git writes one, and "
                "another changes the commit's id while the signature still verifies"
            )
        payload, armored = sshsig.split_commit(raw, self._format)
        if armored is None:
            return "is not signed"
        try:
            verified = sshsig.verify(sshsig.parse(armored), payload, NAMESPACE)
        except sshsig.SignatureError as exc:
            return f"has a signature that does not verify ({exc})"
        if allowed_signers.find(self.signers, verified.public_key, NAMESPACE) is None:
            listed = any(s.public_key == verified.public_key for s in self.signers)
            return (
                "is signed by a key the signers file limits to other namespaces"
                if listed
                else f"is signed by a key that is not in {self.path} at {self.rules_label}"
            )
        if self.require_touch and verified.user_present is None:
            return "is signed by a key that is not a security key (authority.require_touch)"
        if self.require_touch and not verified.user_present:
            return (
                "is signed without the security key's user-presence flag (authority.require_touch)"
            )
        return None


def _signed_parents(raw: bytes) -> Tuple[str, ...]:
    """The parent lines of a commit's header, wherever they stand in it."""
    head = raw.split(b"\n\n", 1)[0]
    return tuple(
        line[len(b"parent ") :].decode("ascii", "replace")
        for line in head.split(b"\n")
        if line.startswith(b"parent ")
    )


def _public_key_text(path: str) -> str:
    """The ``keytype base64`` line of a key file: the .pub beside a private key."""

    if not path.endswith(".pub") and os.path.exists(path + ".pub"):
        path += ".pub"
    with open(path, "rb") as f:
        data = f.read(64 << 10)
    if data.startswith(b"-----BEGIN"):
        raise ValueError(
            f"{path} is a private key with no .pub beside it; point "
            "user.signingkey at the .pub file"
        )
    try:
        return data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not a public key file (not UTF-8 text)") from None


def judge(
    contract: Contract,
    session: Session,
    commits: Iterable[Commit],
    net: List[Finding],
    explained: bool = True,
) -> Tuple[List[Tuple[str, Finding]], bool]:
    """(findings, authorized) for a range whose change as a whole has the
    write-set findings ``net``. ``authorized``: every commit is an owner's,
    so the oracle change stands (the other checks still judge its content).
    ``explained``: the range's commits make up the whole change; not so for a
    push that rewinds or replaces history (the old tip is no ancestor of the
    new), whose net change no commit signs for."""
    authority = Authority.of(contract, session)
    if authority is None or not net:
        return [], False
    git = session.git
    protected = next((f.path for f in net if f.path), None)
    if not explained:
        return [
            (
                "",
                Finding(
                    HOOK,
                    "oracle-change-unsigned",
                    protected,
                    f"the push replaces history, and no commit signs for how it changes protected "
                    f"{show_path(protected or '')!r}: an owner's oracle change is added on top of "
                    "the old tip",
                ),
            )
        ], False
    found = []
    signed = 0
    net_paths = [f.path for f in net if f.path]
    listed = list(commits)
    outside = authority.outside_rules(listed)  # one git, not two a commit
    for commit in reversed(listed):  # oldest first
        # each commit is named by a protected path of its own, not by the range's first
        own = {decode_path(raw) for raw in commit.paths}
        ours = next((p for p in net_paths if p in own), protected)
        if (
            commit.is_merge
            and len(commit.parents) == 2
            and not git.remerge_differences(commit.id, commit.parents)
        ):
            continue  # git's own merge: nothing of its own to sign for
        signed += 1
        reason = authority.why_not(commit)
        replayed = authority.replay_of(commit, outside) if reason is None else None
        if replayed is not None:
            found.append(
                (
                    commit.id,
                    Finding(
                        HOOK,
                        "signature-replayed",
                        ours,
                        f"commit {commit.id[:12]} makes the same change from the same parents as "
                        f"{replayed[:12]}, already in the history of {authority.rules_label}: an "
                        "owner's signature vouches for a change once, and a copy of it with a "
                        "new commit id (a re-encoded signature) is a replay",
                    ),
                )
            )
        if reason is not None:
            found.append(
                (
                    commit.id,
                    Finding(
                        HOOK,
                        "oracle-change-unsigned",
                        ours,
                        f"commit {commit.id[:12]} {reason}; the change edits protected "
                        f"{show_path(ours or '')!r}, and an oracle change is made only of "
                        f"commits an owner signed (a key in {authority.path})",
                    ),
                )
            )
    if not signed:  # nothing of the range signs for the change
        return [
            (
                "",
                Finding(
                    HOOK,
                    "oracle-change-unsigned",
                    protected,
                    f"no commit of its own signs for how the change edits protected "
                    f"{show_path(protected or '')!r}",
                ),
            )
        ], False
    return found, not found


HOW_TO_SIGN = (
    "an owner signs the commit: git config gpg.format ssh; git config "
    "user.signingkey ~/.ssh/KEY.pub (a key in {path}); git config commit.gpgsign "
    "true"
)


def judge_staged(
    contract: Contract, session: Session, changed: Iterable[str], net: List[Finding]
) -> Tuple[List[Finding], Optional[str]]:
    """A commit being made cannot be signed yet: when it changes only protected
    paths and the repository's configuration will sign it with an owner's key,
    the write set lets it through and says so (the pre-push hook, CI and the
    server verify the real signature). Otherwise ``net`` stands, with a note
    on how to sign."""
    authority = Authority.of(contract, session)
    if authority is None or not net:
        return net, None
    # deferred: 2 ms to import, only for judge_staged()
    from oracle_guard.checks.write_set import WriteSet

    write_set = WriteSet.of(contract)
    if any(write_set.finding(path) is None for path in changed):
        return net, (
            "an owner's oracle change rides alone: commit the oracle files apart from the rest"
        )
    signer, why = authority.configured_signer()
    if signer is None:
        return net, f"{why}; {HOW_TO_SIGN.format(path=authority.path)}"
    return [], (
        f"the commit will be signed with {signer}'s key (user.signingkey), an "
        "owner; the pre-push hook, CI and the server verify the signature"
    )
