"""SSH signatures composed in-process, for tests: the SSHSIG wire format
(PROTOCOL.sshsig), security-key (FIDO) signatures that need hardware to make
for real (PROTOCOL.u2f), and signature headers written into commits as git
writes them."""

import base64
import hashlib
import subprocess
from pathlib import Path
from typing import Dict, Optional

SIGNERS = ".oracle-guard/allowed_signers"
# a contract whose owners sign: seeds protected, src/ the write set
SIGNED_CONTRACT = f"""\
version: 1
seeds:
  - {{paths: ["seeds/*.json"], format: json-array}}
write_set:
  allow: ["src/**"]
authority:
  signers: {SIGNERS}
"""
SK_ED25519 = "sk-ssh-ed25519@openssh.com"
SK_ECDSA = "sk-ecdsa-sha2-nistp256@openssh.com"


# -- SSH wire encoding, written from PROTOCOL.sshsig and PROTOCOL.u2f --------
def string(value: bytes) -> bytes:
    return len(value).to_bytes(4, "big") + value


def text(value: str) -> bytes:
    return string(value.encode())


def mpint(number: int) -> bytes:
    return string(number.to_bytes((number.bit_length() + 8) // 8, "big") if number else b"")


def u32(number: int) -> bytes:
    return number.to_bytes(4, "big")


def sshsig_blob(
    public_key: bytes,
    inner: bytes,
    *,
    namespace: str = "git",
    hash_algorithm: str = "sha512",
    reserved: bytes = b"",
    version: int = 1,
    magic: bytes = b"SSHSIG",
) -> bytes:
    return (
        magic
        + u32(version)
        + string(public_key)
        + text(namespace)
        + string(reserved)
        + text(hash_algorithm)
        + string(inner)
    )


def armor(blob: bytes) -> bytes:
    encoded = base64.b64encode(blob)
    lines = [encoded[i : i + 70] for i in range(0, len(encoded), 70)]
    return (
        b"-----BEGIN SSH SIGNATURE-----\n" + b"\n".join(lines) + b"\n-----END SSH SIGNATURE-----\n"
    )


def dearmor(armored: bytes) -> bytes:
    return base64.b64decode(b"".join(armored.splitlines()[1:-1]))


def to_sign(namespace: str, hash_algorithm: str, message: bytes) -> bytes:
    digest = hashlib.new(hash_algorithm, message).digest()
    return b"SSHSIG" + text(namespace) + string(b"") + text(hash_algorithm) + string(digest)


def security_key_signed(application: str, flags: int, counter: int, data: bytes) -> bytes:
    return (
        hashlib.sha256(application.encode()).digest()
        + bytes([flags])
        + u32(counter)
        + hashlib.sha256(data).digest()
    )


def pub_line(key_type: str, blob: bytes) -> str:
    return f"{key_type} {base64.b64encode(blob).decode()}"


# -- in-process signers --------------------------------------------------------
def ed25519_private():
    from cryptography.hazmat.primitives.asymmetric import ed25519

    return ed25519.Ed25519PrivateKey.generate()


def p256_private():
    from cryptography.hazmat.primitives.asymmetric import ec

    return ec.generate_private_key(ec.SECP256R1())


def raw_ed25519(private) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return private.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )


def p256_point(private) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return private.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )


def ecdsa_pair(private, data: bytes, hash_name: str = "SHA256") -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, utils

    r, s = utils.decode_dss_signature(private.sign(data, ec.ECDSA(getattr(hashes, hash_name)())))
    return mpint(r) + mpint(s)


def ed25519_key_blob(private) -> bytes:
    return text("ssh-ed25519") + string(raw_ed25519(private))


def sign_ed25519(
    private, message: bytes, *, namespace: str = "git", key_blob: Optional[bytes] = None
) -> bytes:
    signature = private.sign(to_sign(namespace, "sha512", message))
    inner = text("ssh-ed25519") + string(signature)
    return armor(sshsig_blob(key_blob or ed25519_key_blob(private), inner, namespace=namespace))


def sk_ed25519_key(private, application: str = "ssh:") -> bytes:
    return text(SK_ED25519) + string(raw_ed25519(private)) + text(application)


def sk_ecdsa_key(private, application: str = "ssh:") -> bytes:
    return text(SK_ECDSA) + text("nistp256") + string(p256_point(private)) + text(application)


def sign_sk_ed25519(
    private,
    message: bytes,
    flags: int,
    counter: int,
    *,
    application: str = "ssh:",
    signed_flags: Optional[int] = None,
) -> bytes:
    data = to_sign("git", "sha512", message)
    signed = security_key_signed(
        application, flags if signed_flags is None else signed_flags, counter, data
    )
    inner = text(SK_ED25519) + string(private.sign(signed)) + bytes([flags]) + u32(counter)
    return armor(sshsig_blob(sk_ed25519_key(private, application), inner))


def sign_sk_ecdsa(
    private,
    message: bytes,
    flags: int,
    counter: int,
    *,
    application: str = "ssh:",
    signature_type: str = SK_ECDSA,
) -> bytes:
    signed = security_key_signed(application, flags, counter, to_sign("git", "sha512", message))
    inner = (
        text(signature_type) + string(ecdsa_pair(private, signed)) + bytes([flags]) + u32(counter)
    )
    return armor(sshsig_blob(sk_ecdsa_key(private, application), inner))


def with_signature(raw: bytes, armored: bytes, header: bytes = b"gpgsig") -> bytes:
    """``raw`` with a signature header added at the end of its headers, as git's
    add_header_signature writes it."""
    head, _, message = raw.partition(b"\n\n")
    lines = armored.splitlines()
    block = header + b" " + lines[0] + b"\n" + b"".join(b" " + line + b"\n" for line in lines[1:])
    return head + b"\n" + block + b"\n" + message


# the key types the allowed-signers tests need: two ed25519, an ecdsa and an rsa key
TEST_KEYS = {
    "ed": ["-t", "ed25519"],
    "ed2": ["-t", "ed25519"],
    "ec": ["-t", "ecdsa"],
    "rsa": ["-t", "rsa", "-b", "2048"],
}


def make_keys(folder: Path) -> Dict[str, Path]:
    """Real ssh-keygen keys, NAME and NAME.pub in ``folder``, comment NAME@host."""
    made = {}
    for name, options in TEST_KEYS.items():
        key = folder / name
        subprocess.run(
            ["ssh-keygen", "-q", *options, "-N", "", "-C", f"{name}@host", "-f", str(key)],
            check=True,
        )
        made[name] = key
    return made


# -- re-encoding an owner's signature: same signed payload, new commit id --------
P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


def _fields(data: bytes, count: int):
    """``count`` SSH strings from the front of ``data``, and what follows."""
    out = []
    for _ in range(count):
        size = int.from_bytes(data[:4], "big")
        out.append(data[4 : 4 + size])
        data = data[4 + size :]
    return out, data


def ecdsa_twin(armored: bytes) -> bytes:
    """An ecdsa-sha2-nistp256 SSH signature with s replaced by n - s: ECDSA's
    other valid signature of the same data, which anyone can compute, in the
    armor ssh-keygen writes."""
    blob = dearmor(armored)
    magic, rest = blob[:6], blob[6:]
    version, rest = rest[:4], rest[4:]
    (key, namespace, reserved, hash_algorithm, inner), tail = _fields(rest, 5)
    assert magic == b"SSHSIG" and not tail
    (signature_type, pair), _ = _fields(inner, 2)
    assert signature_type == b"ecdsa-sha2-nistp256", signature_type
    (r, s), _ = _fields(pair, 2)
    twin = mpint(int.from_bytes(r, "big")) + mpint(P256_ORDER - int.from_bytes(s, "big"))
    return armor(
        magic
        + version
        + string(key)
        + string(namespace)
        + string(reserved)
        + string(hash_algorithm)
        + string(string(signature_type) + string(twin))
    )


def signature_block(armored: bytes, header: bytes = b"gpgsig") -> bytes:
    """The header lines git writes for ``armored`` in a commit."""
    lines = armored.splitlines()
    return header + b" " + lines[0] + b"\n" + b"".join(b" " + line + b"\n" for line in lines[1:])


def resigned(raw: bytes, armored: bytes, header: bytes = b"gpgsig") -> bytes:
    """Commit ``raw`` with its signature header's armor replaced by ``armored``."""
    from oracle_guard.authority import sshsig

    _, old = sshsig.split_commit(raw)
    assert old is not None, "the commit is not signed"
    old_block = signature_block(old, header)
    assert raw.count(old_block) == 1
    return raw.replace(old_block, signature_block(armored, header))
