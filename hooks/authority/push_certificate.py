"""A signed push (``git push --signed``): who signed its certificate, when that is
an owner's key in the signers file at the rules revision.

git hands the certificate to the pre-receive hook (``GIT_PUSH_CERT``, a blob id)
and says whether its nonce is the one it gave out for this push
(``GIT_PUSH_CERT_NONCE_STATUS`` OK once ``receive.certNonceSeed`` is set).
"""

from __future__ import annotations

from typing import Mapping, Optional, Tuple

from oracle_guard.authority import allowed_signers, sshsig
from oracle_guard.authority.signatures import NAMESPACE, Authority
from oracle_guard.contract import Contract
from oracle_guard.session import Session

SIGNATURE_BEGIN = "-----BEGIN SSH SIGNATURE-----"


def signer(
    session: Session, env: Mapping[str, str], contract: Contract, command: str
) -> Tuple[Optional[str], str]:
    """(the owner who signed this push's certificate, "") or (None, why not).
    ``command``: the ref update (a deletion) the certificate must name, ``<old> <new> <ref>``;
    the signature is verified against the signers file at the rules revision,
    read in ``session``, the push's."""
    blob = env.get("GIT_PUSH_CERT")
    if not blob:
        return None, "the push is not signed (git push --signed with an owner's ssh key)"
    if env.get("GIT_PUSH_CERT_NONCE_STATUS") != "OK":
        return None, (
            "its certificate's nonce is not the one this server gave out "
            f"({env.get('GIT_PUSH_CERT_NONCE_STATUS') or 'no status'}; the server sets "
            "receive.certNonceSeed)"
        )
    authority = Authority.of(contract, session)
    if authority is None:
        return None, "the contract has no authority section to verify a signed push by"
    text = session.git.run("cat-file", "blob", blob).decode("utf-8", "replace")
    start = text.find(SIGNATURE_BEGIN)
    if start < 0 or not text[:start].endswith("\n"):
        return None, "its certificate is not signed with an ssh key"
    payload, armored = text[:start].encode(), text[start:].encode()
    commands = payload.split(b"\n\n", 1)[1].decode().splitlines() if b"\n\n" in payload else []
    if command not in commands:
        return None, "its certificate does not name this deletion"
    try:
        verified = sshsig.verify(sshsig.parse(armored), payload, NAMESPACE)
    except sshsig.SignatureError as exc:
        return None, f"its certificate's signature does not verify ({exc})"
    found = allowed_signers.find(authority.signers, verified.public_key, NAMESPACE)
    if found is None:
        return None, f"its certificate is signed by a key that is not in {authority.path}"
    return found.principals[0], ""
