"""SSH signatures on git commits (``gpg.format=ssh``), checked in-process.

``split_commit`` takes a raw commit object apart exactly as git does
(commit.c ``parse_buffer_signed_by_header``); ``parse`` decodes the armored
SSHSIG blob (OpenSSH PROTOCOL.sshsig) once; ``verify`` checks it over the
payload with ``cryptography``, imported there only: a hook run that verifies
nothing never loads it.

Stricter than ``ssh-keygen -Y verify`` wherever OpenSSH is lenient, so that a
signature has one encoding: nothing may follow the armor's footer, the blob's
reserved field must be empty (it is not signed), the version must be 1 (not
"at most 1"), integers must be minimally encoded, ECDSA points uncompressed,
an RSA signature exactly as long as the modulus. RSA with SHA-1 (``ssh-rsa``)
and webauthn signatures are refused.

A security key's signature says whether the user touched the key
(``Verified.user_present``); ``ssh-keygen`` does not require it, and neither
does ``verify``: that is the caller's policy.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from typing import TYPE_CHECKING, Any, Callable, Dict, List, NamedTuple, Optional, Tuple

if TYPE_CHECKING:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

MAGIC = b"SSHSIG"
VERSION = 1
BEGIN = b"-----BEGIN SSH SIGNATURE-----"
END = b"-----END SSH SIGNATURE-----"

ED25519 = "ssh-ed25519"
RSA = "ssh-rsa"
SK_ED25519 = "sk-ssh-ed25519@openssh.com"
SK_ECDSA = "sk-ecdsa-sha2-nistp256@openssh.com"
# key type -> (curve name in the key blob, bytes per coordinate, hash for the signature)
ECDSA_CURVES = {
    "ecdsa-sha2-nistp256": ("nistp256", 32, "sha256"),
    "ecdsa-sha2-nistp384": ("nistp384", 48, "sha384"),
    "ecdsa-sha2-nistp521": ("nistp521", 66, "sha512"),
}
KEY_TYPES = (ED25519, *ECDSA_CURVES, RSA, SK_ED25519, SK_ECDSA)
RSA_SIGNATURE_HASHES = {"rsa-sha2-256": "sha256", "rsa-sha2-512": "sha512"}
HASH_ALGORITHMS = ("sha256", "sha512")
RSA_MIN_BITS = 1024  # OpenSSH's SSH_RSA_MINIMUM_MODULUS_SIZE
RSA_MAX_BITS = 16384  # OpenSSH's SSHBUF_MAX_BIGNUM
USER_PRESENT = 0x01  # the FIDO "user present" flag

# indexed by the repository's object format, as git's gpg_sig_headers
SIGNATURE_HEADERS = {"sha1": b"gpgsig", "sha256": b"gpgsig-sha256"}


class SignatureError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Signature(NamedTuple):
    """A parsed SSHSIG blob. ``key_fields`` and ``signature_fields`` hold what
    verifying needs, decoded once (see ``_parse_key`` and ``_parse_inner``)."""

    key_type: str
    public_key: bytes  # the key blob as embedded, for comparing with allowed signers
    namespace: str
    hash_algorithm: str
    signature_type: str
    key_fields: Tuple[Any, ...]
    signature_fields: Tuple[Any, ...]


class Verified(NamedTuple):
    key_type: str
    public_key: bytes
    user_present: Optional[bool] = None  # security keys only
    counter: Optional[int] = None  # security keys only


# -- commits -----------------------------------------------------------------
def split_commit(raw: bytes, object_format: str = "sha1") -> Tuple[bytes, Optional[bytes]]:
    """``(payload, signature)`` of a raw commit (``git cat-file commit``), as
    git's ``parse_buffer_signed_by_header`` computes them for a repository of
    ``object_format`` (``git rev-parse --show-object-format``): the header is
    ``gpgsig`` in a SHA-1 repository and ``gpgsig-sha256`` in a SHA-256 one.
    The payload drops that header with its continuation lines, and also any
    other header starting "gpgsig" (the other format's signature) with its
    continuation lines, as git does. The signature joins the header's lines,
    each less its leading space; two such headers are joined too, like git."""
    if object_format not in SIGNATURE_HEADERS:
        raise ValueError(f"unknown object format {object_format!r} (sha1 or sha256)")
    header = SIGNATURE_HEADERS[object_format] + b" "
    payload = []
    signature = []
    in_signature = other_signature = False
    pos, end = 0, len(raw)
    while pos < end:
        newline = raw.find(b"\n", pos)
        after = end if newline < 0 else newline + 1
        line = raw[pos:after]
        part: Optional[bytes] = None
        if in_signature and line.startswith(b" "):
            part = line[1:]
        elif line.startswith(header):
            part = line[len(header) :]
            other_signature = False
        elif line.startswith(b"gpgsig"):
            other_signature = True
        elif other_signature and not line.startswith(b" "):
            other_signature = False
        if part is not None:
            signature.append(part)
            in_signature = True
        else:
            if line.startswith(b"\n"):
                after = end  # the message: everything after the blank line, as is
                line = raw[pos:]
            if not other_signature:
                payload.append(line)
            in_signature = False
        pos = after
    return b"".join(payload), (b"".join(signature) if signature else None)


def signature_headers(raw: bytes) -> List[bytes]:
    """The name of each header of a raw commit that starts with "gpgsig": the
    lines git leaves out of what a signature covers. git writes one; a second
    (or a ``gpgsig-foo``) changes the commit's id and leaves the signature valid."""
    head = raw.split(b"\n\n", 1)[0]
    return [line.split(b" ", 1)[0] for line in head.split(b"\n") if line.startswith(b"gpgsig")]


# -- wire format -------------------------------------------------------------
class _Reader:
    """RFC 4253 fields from ``data``; ``what`` names the structure in errors."""

    def __init__(self, data: bytes, what: str) -> None:
        self.data = data
        self.pos = 0
        self.what = what

    def take(self, count: int, field: str) -> bytes:
        if len(self.data) - self.pos < count:
            raise SignatureError(f"{self.what} is truncated (reading {field})")
        chunk = self.data[self.pos : self.pos + count]
        self.pos += count
        return chunk

    def u8(self, field: str) -> int:
        return self.take(1, field)[0]

    def u32(self, field: str) -> int:
        return int.from_bytes(self.take(4, field), "big")

    def string(self, field: str) -> bytes:
        return self.take(self.u32(field), field)

    def text(self, field: str) -> str:
        value = self.string(field)
        if b"\0" in value:  # OpenSSH reads these as C strings
            raise SignatureError(f"{self.what} {field} holds a NUL byte")
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise SignatureError(f"{self.what} {field} is not UTF-8") from None

    def mpint(self, field: str) -> int:
        value = self.string(field)
        if value and value[0] & 0x80:
            raise SignatureError(f"{self.what} {field} is negative")
        # one encoding per number: a zero byte only to keep the top bit clear
        if value[:1] == b"\0" and (len(value) == 1 or not value[1] & 0x80):
            raise SignatureError(f"{self.what} {field} is not minimally encoded")
        return int.from_bytes(value, "big")

    def end(self) -> None:
        left = len(self.data) - self.pos
        if left:
            raise SignatureError(f"{self.what} has {left} trailing byte{'s' if left != 1 else ''}")


def _string(value: bytes) -> bytes:
    return len(value).to_bytes(4, "big") + value


def _ecdsa_key(reader: _Reader, key_type: str, curve: str, size: int) -> Tuple[str, bytes]:
    named = reader.text("curve name")
    if named != curve:
        raise SignatureError(f"{key_type} key names curve {named!r}, not {curve!r}")
    point = reader.string("ecdsa point")
    if len(point) != 1 + 2 * size or point[0] != 4:
        raise SignatureError(f"{key_type} key point is not an uncompressed {curve} point")
    return curve, point


def _ed25519_key(reader: _Reader) -> bytes:
    key = reader.string("ed25519 key")
    if len(key) != 32:
        raise SignatureError(f"ed25519 key is {len(key)} bytes, not 32")
    return key


def _parse_key(blob: bytes) -> Tuple[str, Tuple[Any, ...]]:
    """The key type and its fields: (key,) for ed25519, (curve, point) for
    ECDSA, (e, n) for RSA, and the application last for security keys."""
    reader = _Reader(blob, "public key")
    key_type = reader.text("key type")
    fields: Tuple[Any, ...]
    if key_type == ED25519:
        fields = (_ed25519_key(reader),)
    elif key_type in ECDSA_CURVES:
        fields = _ecdsa_key(reader, key_type, *ECDSA_CURVES[key_type][:2])
    elif key_type == RSA:
        exponent = reader.mpint("rsa exponent")
        modulus = reader.mpint("rsa modulus")
        bits = modulus.bit_length()
        if not RSA_MIN_BITS <= bits <= RSA_MAX_BITS:
            raise SignatureError(
                f"rsa key is {bits} bits; OpenSSH accepts {RSA_MIN_BITS} to {RSA_MAX_BITS}"
            )
        fields = (exponent, modulus)
    elif key_type == SK_ED25519:
        fields = (_ed25519_key(reader), reader.text("application"))
    elif key_type == SK_ECDSA:
        fields = _ecdsa_key(reader, key_type, "nistp256", 32) + (reader.text("application"),)
    else:
        raise SignatureError(
            f"unsupported key type {key_type!r} (supported: {', '.join(KEY_TYPES)})"
        )
    reader.end()
    return key_type, fields


def _signature_type(key_type: str, signature_type: str) -> None:
    if key_type == RSA:
        if signature_type == "ssh-rsa":
            raise SignatureError(
                "rsa signature uses SHA-1 (ssh-rsa), which is refused: "
                "sign with rsa-sha2-256 or rsa-sha2-512"
            )
        if signature_type in RSA_SIGNATURE_HASHES:
            return
        expected = "rsa-sha2-256 or rsa-sha2-512"
    elif signature_type == key_type:
        return
    elif key_type == SK_ECDSA and signature_type.startswith("webauthn-"):
        raise SignatureError(f"webauthn signatures ({signature_type}) are not supported")
    else:
        expected = key_type
    raise SignatureError(
        f"signature type {signature_type!r} does not fit a {key_type} key (expected {expected})"
    )


def _parse_inner(
    key_type: str, key_fields: Tuple[Any, ...], blob: bytes
) -> Tuple[str, Tuple[Any, ...]]:
    """The signature type and its fields: (signature,) for ed25519 and RSA,
    (r, s) for ECDSA, then flags and counter for security keys."""
    reader = _Reader(blob, "signature")
    signature_type = reader.text("signature type")
    _signature_type(key_type, signature_type)
    fields: Tuple[Any, ...]
    if key_type in (ED25519, SK_ED25519):
        value = reader.string("ed25519 signature")
        if len(value) != 64:
            raise SignatureError(f"ed25519 signature is {len(value)} bytes, not 64")
        fields = (value,)
    elif key_type == RSA:
        value = reader.string("rsa signature")
        size = (key_fields[1].bit_length() + 7) // 8
        if len(value) != size:
            raise SignatureError(
                f"rsa signature is {len(value)} bytes; the key's modulus is {size}"
            )
        fields = (value,)
    else:
        pair = _Reader(reader.string("ecdsa signature"), "ecdsa signature")
        fields = (pair.mpint("r"), pair.mpint("s"))
        pair.end()
    if key_type in (SK_ED25519, SK_ECDSA):
        fields += (reader.u8("flags"), reader.u32("counter"))
    reader.end()
    return signature_type, fields


# -- armor and blob ----------------------------------------------------------
_BASE64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


def decode_base64(text: bytes, what: str) -> bytes:
    """Strict base64: the alphabet only, padded, and the one canonical encoding
    of its bytes (no stray bits in the last character)."""
    try:
        data = base64.b64decode(text, validate=True)
    except binascii.Error:
        raise SignatureError(f"{what} is not valid base64") from None
    if base64.b64encode(data) != text:
        raise SignatureError(f"{what} is not valid base64")
    return data


ARMOR_LINE = 70  # ssh-keygen's base64 line length (sshbuf_dtob64 with wrap)


def armor(blob: bytes) -> bytes:
    """The armor ssh-keygen writes for ``blob``, as git stores it in a commit:
    the header line, base64 in lines of 70, the footer, each ending in a newline."""
    encoded = base64.b64encode(blob)
    lines = [encoded[i : i + ARMOR_LINE] + b"\n" for i in range(0, len(encoded), ARMOR_LINE)]
    return BEGIN + b"\n" + b"".join(lines) + END + b"\n"


def _dearmor(armored: bytes) -> bytes:
    """The blob of a signature in the one armor ssh-keygen writes: a signature
    re-wrapped (other line lengths, no final newline) verifies the same and
    gives the commit a new id, so it is refused."""
    blob = _dearmor_lenient(armored)
    if armor(blob) != armored:
        raise SignatureError(
            "signature armor is not the form ssh-keygen writes (base64 in lines of 70, "
            "each line and the footer ending in a newline)"
        )
    return blob


def _dearmor_lenient(armored: bytes) -> bytes:
    if not armored.startswith(BEGIN + b"\n"):
        raise SignatureError(f"signature does not start with {BEGIN.decode()} and a newline")
    body = armored[len(BEGIN) + 1 :]
    for footer in (b"\n" + END + b"\n", b"\n" + END):
        if body.endswith(footer):
            body = body[: -len(footer)]
            break
    else:
        raise SignatureError(f"signature does not end with {END.decode()} (nothing may follow it)")
    if BEGIN in body or END in body:  # e.g. two signature headers, which git joins
        raise SignatureError("signature holds more than one armored signature")
    lines = body.split(b"\n")
    for number, line in enumerate(lines, 2):
        if not line or not _BASE64.issuperset(line):
            raise SignatureError(f"signature armor line {number} is not base64")
    return decode_base64(b"".join(lines), "signature armor")


def parse(armored: bytes) -> Signature:
    """The SSHSIG blob inside ``-----BEGIN SSH SIGNATURE-----`` armor."""
    reader = _Reader(_dearmor(armored), "SSHSIG blob")
    if reader.take(len(MAGIC), "magic") != MAGIC:
        raise SignatureError("SSHSIG blob does not start with the magic 'SSHSIG'")
    version = reader.u32("version")
    if version != VERSION:
        raise SignatureError(f"SSHSIG version {version} is not supported (only {VERSION})")
    public_key = reader.string("public key")
    namespace = reader.text("namespace")
    reserved = reader.string("reserved")
    hash_algorithm = reader.text("hash algorithm")
    inner = reader.string("signature")
    reader.end()
    if not namespace:
        raise SignatureError("SSHSIG namespace is empty")
    # not signed: anything here could be changed without breaking the signature
    if reserved:
        raise SignatureError("SSHSIG reserved field is not empty")
    if hash_algorithm not in HASH_ALGORITHMS:
        raise SignatureError(f"unsupported hash algorithm {hash_algorithm!r} (sha256 or sha512)")
    key_type, key_fields = _parse_key(public_key)
    signature_type, signature_fields = _parse_inner(key_type, key_fields, inner)
    return Signature(
        key_type,
        public_key,
        namespace,
        hash_algorithm,
        signature_type,
        key_fields,
        signature_fields,
    )


def public_key_blob(keytype_and_base64: str) -> bytes:
    """The key blob of an OpenSSH public key line (``keytype base64
    [comment]``, as in a ``.pub`` file), checked as ``parse`` checks an
    embedded key, so equal blobs mean the same key."""
    fields = keytype_and_base64.split(None, 2)
    if len(fields) < 2:
        raise SignatureError("expected a key type and a base64 key")
    return key_blob(fields[0], fields[1])


def key_blob(key_type: str, base64_key: str) -> bytes:
    if key_type not in KEY_TYPES:
        raise SignatureError(
            f"unsupported key type {key_type!r} (supported: {', '.join(KEY_TYPES)})"
        )
    try:
        encoded = base64_key.encode("ascii")
    except UnicodeEncodeError:
        raise SignatureError("key is not valid base64") from None
    blob = decode_base64(encoded, "key")
    inside, _ = _parse_key(blob)
    if inside != key_type:
        raise SignatureError(f"the key inside is {inside}, not {key_type}")
    return blob


# -- verifying ---------------------------------------------------------------
def signed_data(namespace: str, hash_algorithm: str, message: bytes) -> bytes:
    """What the key signs (PROTOCOL.sshsig section 3): the message is hashed
    first, and the namespace is the verifier's, not the blob's."""
    digest = hashlib.new(hash_algorithm, message).digest()
    return (
        MAGIC
        + _string(namespace.encode("utf-8"))
        + _string(b"")
        + _string(hash_algorithm.encode())
        + _string(digest)
    )


def _security_key_data(application: str, flags: int, counter: int, data: bytes) -> bytes:
    """What a FIDO key signs (PROTOCOL.u2f): SHA256(application) || flags ||
    counter || SHA256(data); no extensions are defined for SSH."""
    return (
        hashlib.sha256(application.encode("utf-8")).digest()
        + bytes([flags])
        + counter.to_bytes(4, "big")
        + hashlib.sha256(data).digest()
    )


def _hash(name: str) -> hashes.HashAlgorithm:
    # deferred: cryptography: 8 ms to import, only for _hash()
    from cryptography.hazmat.primitives import hashes

    algorithms: Dict[str, Callable[[], hashes.HashAlgorithm]] = {
        "sha256": hashes.SHA256,
        "sha384": hashes.SHA384,
        "sha512": hashes.SHA512,
    }
    return algorithms[name]()


def _ecdsa_public(key_type: str, curve: str, point: bytes) -> ec.EllipticCurvePublicKey:
    # deferred: cryptography: 7 ms to import, only for _ecdsa_public()
    from cryptography.hazmat.primitives.asymmetric import ec

    curves: Dict[str, Callable[[], ec.EllipticCurve]] = {
        "nistp256": ec.SECP256R1,
        "nistp384": ec.SECP384R1,
        "nistp521": ec.SECP521R1,
    }
    curve_class = curves[curve]
    try:
        return ec.EllipticCurvePublicKey.from_encoded_point(curve_class(), point)
    except ValueError:
        raise SignatureError(f"{key_type} key is not a point on {curve}") from None


def _check_ecdsa(
    public: ec.EllipticCurvePublicKey, r: int, s: int, data: bytes, hash_name: str
) -> None:
    # deferred: cryptography: 7 ms to import, only for _check_ecdsa()
    from cryptography.hazmat.primitives.asymmetric import ec, utils

    public.verify(utils.encode_dss_signature(r, s), data, ec.ECDSA(_hash(hash_name)))


def _check(sig: Signature, data: bytes) -> None:
    """Raises cryptography's InvalidSignature when the signature is wrong."""
    # deferred: cryptography: 8 ms to import, only for _check()
    from cryptography.hazmat.primitives.asymmetric import ed25519, padding, rsa

    key, fields = sig.key_fields, sig.signature_fields
    if sig.key_type == ED25519:
        ed25519.Ed25519PublicKey.from_public_bytes(key[0]).verify(fields[0], data)
    elif sig.key_type in ECDSA_CURVES:
        public = _ecdsa_public(sig.key_type, key[0], key[1])
        _check_ecdsa(public, fields[0], fields[1], data, ECDSA_CURVES[sig.key_type][2])
    elif sig.key_type == RSA:
        try:
            rsa_public = rsa.RSAPublicNumbers(key[0], key[1]).public_key()
        except ValueError:
            raise SignatureError("ssh-rsa key is not a valid RSA public key") from None
        rsa_public.verify(
            fields[0], data, padding.PKCS1v15(), _hash(RSA_SIGNATURE_HASHES[sig.signature_type])
        )
    elif sig.key_type == SK_ED25519:
        signed = _security_key_data(key[1], fields[1], fields[2], data)
        ed25519.Ed25519PublicKey.from_public_bytes(key[0]).verify(fields[0], signed)
    else:
        signed = _security_key_data(key[2], fields[2], fields[3], data)
        _check_ecdsa(
            _ecdsa_public(sig.key_type, key[0], key[1]), fields[0], fields[1], signed, "sha256"
        )


def verify(sig: Signature, message: bytes, namespace: str = "git") -> Verified:
    """Check ``sig`` over ``message`` in ``namespace`` ("git" for commits).
    Says which key signed; whether that key may sign is the allowed signers'
    question (``allowed_signers.find``)."""
    # deferred: cryptography: 5 ms to import, only for verify()
    from cryptography.exceptions import InvalidSignature

    if sig.namespace != namespace:
        raise SignatureError(f"signature is for namespace {sig.namespace!r}, not {namespace!r}")
    try:
        _check(sig, signed_data(namespace, sig.hash_algorithm, message))
    except InvalidSignature:
        raise SignatureError(
            f"bad signature: the {sig.key_type} key in the signature did not sign this data"
        ) from None
    if sig.key_type in (SK_ED25519, SK_ECDSA):
        flags, counter = sig.signature_fields[-2:]
        return Verified(sig.key_type, sig.public_key, bool(flags & USER_PRESENT), counter)
    return Verified(sig.key_type, sig.public_key)
