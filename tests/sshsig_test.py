"""SSH commit signatures: real keys from ssh-keygen, real signed commits from
git, and every verdict compared with git verify-commit or ssh-keygen -Y verify.
Security-key (FIDO) signatures need hardware to make, so they are composed
here with cryptography and checked by ssh-keygen as well."""

import base64
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest

from oracle_guard.authority import sshsig
from oracle_guard.authority.sshsig import SignatureError
from testing.git import clean_environment, git, init_repo
from testing.signatures import (
    SK_ECDSA,
    SK_ED25519,
    armor,
    dearmor,
    ecdsa_pair,
    ed25519_key_blob,
    ed25519_private,
    mpint,
    p256_point,
    p256_private,
    pub_line,
    sign_ed25519,
    sign_sk_ecdsa,
    sign_sk_ed25519,
    sk_ecdsa_key,
    sk_ed25519_key,
    sshsig_blob,
    string,
    text,
    to_sign,
    u32,
    with_signature,
)

KEYS = {
    "ed25519": ["-t", "ed25519"],
    "ecdsa256": ["-t", "ecdsa", "-b", "256"],
    "ecdsa384": ["-t", "ecdsa", "-b", "384"],
    "ecdsa521": ["-t", "ecdsa", "-b", "521"],
    "rsa": ["-t", "rsa", "-b", "3072"],
}
KEY_TYPES = {
    "ed25519": "ssh-ed25519",
    "ecdsa256": "ecdsa-sha2-nistp256",
    "ecdsa384": "ecdsa-sha2-nistp384",
    "ecdsa521": "ecdsa-sha2-nistp521",
    "rsa": "ssh-rsa",
}
PRINCIPAL = "owner@example.invalid"


# -- real keys, real git ---------------------------------------------------------
def keygen_verifies(
    tmp_path: Path, armored: bytes, message: bytes, key_line: str, namespace: str = "git"
) -> bool:
    """ssh-keygen's verdict on the same signature, with ``key_line`` allowed."""
    allowed = tmp_path / "keygen_allowed"
    allowed.write_text(f"{PRINCIPAL} {key_line}\n")
    signature = tmp_path / "keygen.sig"
    signature.write_bytes(armored)
    proc = subprocess.run(
        [
            "ssh-keygen",
            "-Y",
            "verify",
            "-f",
            str(allowed),
            "-I",
            PRINCIPAL,
            "-n",
            namespace,
            "-s",
            str(signature),
        ],
        input=message,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    return proc.returncode == 0


def keygen_sign(key: Path, message: bytes, namespace: str, *options: str) -> bytes:
    proc = subprocess.run(
        ["ssh-keygen", "-q", "-Y", "sign", "-n", namespace, "-f", str(key), *options],
        input=message,
        stdout=subprocess.PIPE,
        check=True,
    )
    return proc.stdout


def cat_commit(repo: Path, commit: str) -> bytes:
    return subprocess.run(
        ["git", "-C", str(repo), "cat-file", "commit", commit], stdout=subprocess.PIPE, check=True
    ).stdout


def write_commit(repo: Path, raw: bytes) -> str:
    return git(repo, "hash-object", "-t", "commit", "-w", "--stdin", input=raw).strip()


def git_verifies(repo: Path, commit: str, allowed: Path) -> bool:
    proc = subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "-c",
            f"gpg.ssh.allowedSignersFile={allowed}",
            "verify-commit",
            commit,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    return proc.returncode == 0


def signed_commit(repo: Path, key: Path, message: str) -> str:
    git(
        repo,
        "-c",
        "gpg.format=ssh",
        "-c",
        f"user.signingkey={key}.pub",
        "commit",
        "-q",
        "-S",
        "--allow-empty",
        "-m",
        message,
    )
    return git(repo, "rev-parse", "HEAD").strip()


def verdict(raw: bytes, object_format: str = "sha1", namespace: str = "git"):
    payload, armored = sshsig.split_commit(raw, object_format)
    return sshsig.verify(sshsig.parse(armored), payload, namespace)


def ours_verifies(raw: bytes, object_format: str = "sha1") -> bool:
    try:
        verdict(raw, object_format)
    except SignatureError:
        return False
    return True


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    folder = tmp_path_factory.mktemp("keys")
    for name, options in KEYS.items():
        subprocess.run(
            [
                "ssh-keygen",
                "-q",
                *options,
                "-N",
                "",
                "-C",
                f"{name}@test",
                "-f",
                str(folder / name),
            ],
            check=True,
        )
    return folder


@pytest.fixture(scope="module")
def signed(keys, tmp_path_factory):
    """A repository with one signed commit per key, and the allowed signers file
    that lists every key."""
    folder = tmp_path_factory.mktemp("signed")
    repo = init_repo(folder / "repo")
    allowed = folder / "allowed_signers"
    allowed.write_text(
        "".join(f"{PRINCIPAL} {(keys / f'{name}.pub').read_text()}" for name in KEYS)
    )
    with clean_environment():
        commits = {
            name: signed_commit(repo, keys / name, f"signed by {name}\n\nbody") for name in KEYS
        }
    return repo, allowed, commits


def test_importing_the_modules_does_not_import_cryptography():
    code = (
        "import sys; import oracle_guard.authority.sshsig, oracle_guard.authority.allowed_signers; "
        "print('cryptography' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, check=True)
    assert out.stdout.strip() == b"False"


@pytest.mark.parametrize("name", KEYS)
def test_real_signed_commit_verifies_like_git(signed, keys, name):
    repo, allowed, commits = signed
    raw = cat_commit(repo, commits[name])
    result = verdict(raw)
    assert result.key_type == KEY_TYPES[name]
    assert result.public_key == sshsig.public_key_blob((keys / f"{name}.pub").read_text())
    assert (result.user_present, result.counter) == (None, None)
    assert git_verifies(repo, commits[name], allowed)


def test_rsa_commit_signature_is_rsa_sha2_512(signed):
    repo, _, commits = signed
    payload, armored = sshsig.split_commit(cat_commit(repo, commits["rsa"]))
    sig = sshsig.parse(armored)
    assert (sig.signature_type, sig.hash_algorithm, sig.namespace) == (
        "rsa-sha2-512",
        "sha512",
        "git",
    )


def test_payload_is_the_commit_without_its_signature(signed):
    repo, _, commits = signed
    raw = cat_commit(repo, commits["ed25519"])
    payload, armored = sshsig.split_commit(raw)
    assert armored.startswith(b"-----BEGIN SSH SIGNATURE-----\n")
    assert armored.endswith(b"-----END SSH SIGNATURE-----\n")
    assert with_signature(payload, armored) == raw


def test_unsigned_commit_has_no_signature(tmp_path):
    repo = init_repo(tmp_path / "repo")
    git(repo, "commit", "-q", "--allow-empty", "-m", "unsigned")
    raw = cat_commit(repo, "HEAD")
    assert sshsig.split_commit(raw) == (raw, None)


def test_gpgsig_in_the_message_is_message(signed):
    repo, allowed, commits = signed
    raw = cat_commit(repo, commits["ed25519"])
    payload, armored = sshsig.split_commit(raw)
    moved = payload + b"\ngpgsig " + armored.replace(b"\n", b"\n ")
    assert sshsig.split_commit(moved) == (moved, None)
    assert not git_verifies(repo, write_commit(repo, moved), allowed)


def test_other_gpgsig_headers_are_not_signed_like_git(signed):
    """git leaves every header starting "gpgsig" (and its continuation lines)
    out of the payload: adding one keeps the signature good, in git and here."""
    repo, allowed, commits = signed
    raw = cat_commit(repo, commits["ed25519"])
    extra = with_signature(raw, b"other\ncontinued", b"gpgsig-sha256")
    extra = with_signature(extra, b"x\nmore", b"gpgsigfoo")
    assert extra.count(b"\ngpgsig") == 3
    assert ours_verifies(extra)
    assert git_verifies(repo, write_commit(repo, extra), allowed)
    # near miss: a header merely containing "gpgsig" is signed, so adding it breaks both
    changed = with_signature(raw, b"x", b"xgpgsig")
    assert not ours_verifies(changed)
    assert not git_verifies(repo, write_commit(repo, changed), allowed)


def test_two_signature_headers_are_joined_like_git_and_refused(signed):
    """git joins them, and ssh-keygen reads up to the first footer, so git calls
    the commit good; here a signature is one armored block, nothing after it."""
    repo, allowed, commits = signed
    raw = cat_commit(repo, commits["ed25519"])
    payload, armored = sshsig.split_commit(raw)
    twice = with_signature(raw, armored)
    assert sshsig.split_commit(twice) == (payload, armored + armored)
    with pytest.raises(SignatureError) as info:
        verdict(twice)
    assert info.value.message == "signature holds more than one armored signature"
    assert git_verifies(repo, write_commit(repo, twice), allowed)  # stricter than git


def test_sha256_repository_signs_in_gpgsig_sha256(keys, tmp_path):
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "--object-format=sha256", str(repo)], check=True)
    commit = signed_commit(repo, keys / "ed25519", "sha256 repository")
    allowed = tmp_path / "allowed"
    allowed.write_text(f"{PRINCIPAL} {(keys / 'ed25519.pub').read_text()}")
    raw = cat_commit(repo, commit)
    assert b"\ngpgsig-sha256 -----BEGIN SSH SIGNATURE-----\n" in raw
    assert verdict(raw, "sha256").key_type == "ssh-ed25519"
    assert git_verifies(repo, commit, allowed)
    # read as a SHA-1 repository would, the header is another format's signature
    payload, armored = sshsig.split_commit(raw)
    assert armored is None and b"gpgsig" not in payload


def test_signature_transplanted_from_another_commit_fails(signed):
    repo, allowed, commits = signed
    donor_payload, donor_signature = sshsig.split_commit(cat_commit(repo, commits["ed25519"]))
    target_payload, _ = sshsig.split_commit(cat_commit(repo, commits["ecdsa256"]))
    # the donor's signature is good over its own payload (the near miss) ...
    assert ours_verifies(with_signature(donor_payload, donor_signature))
    # ... and over no other
    transplanted = with_signature(target_payload, donor_signature)
    with pytest.raises(SignatureError) as info:
        verdict(transplanted)
    assert info.value.message == (
        "bad signature: the ssh-ed25519 key in the signature did not sign this data"
    )
    assert not git_verifies(repo, write_commit(repo, transplanted), allowed)


@pytest.mark.parametrize("name", KEYS)
def test_payload_changed_by_one_byte_fails(signed, name):
    repo, allowed, commits = signed
    raw = cat_commit(repo, commits[name])
    changed = raw.replace(b"\n\nsigned by", b"\n\nsigned bz")
    assert changed != raw and ours_verifies(raw)
    with pytest.raises(SignatureError) as info:
        verdict(changed)
    assert info.value.message == (
        f"bad signature: the {KEY_TYPES[name]} key in the signature did not sign this data"
    )
    assert not git_verifies(repo, write_commit(repo, changed), allowed)


def test_embedded_key_swapped_for_another_fails(tmp_path):
    signer, other = ed25519_private(), ed25519_private()
    message = b"payload"
    good = sign_ed25519(signer, message)
    swapped = sign_ed25519(signer, message, key_blob=ed25519_key_blob(other))
    assert sshsig.verify(sshsig.parse(good), message).public_key == ed25519_key_blob(signer)
    assert keygen_verifies(
        tmp_path, good, message, pub_line("ssh-ed25519", ed25519_key_blob(signer))
    )
    with pytest.raises(SignatureError) as info:
        sshsig.verify(sshsig.parse(swapped), message)
    assert info.value.message == (
        "bad signature: the ssh-ed25519 key in the signature did not sign this data"
    )
    assert not keygen_verifies(
        tmp_path, swapped, message, pub_line("ssh-ed25519", ed25519_key_blob(other))
    )


@pytest.mark.parametrize("name", KEYS)
@pytest.mark.parametrize("hash_option", [[], ["-O", "hashalg=sha256"]])
def test_keygen_signature_over_data(keys, name, hash_option):
    message = b"arbitrary data\x00\xff"
    armored = keygen_sign(keys / name, message, "git", *hash_option)
    sig = sshsig.parse(armored)
    assert sig.hash_algorithm == ("sha256" if hash_option else "sha512")
    assert sshsig.verify(sig, message).key_type == KEY_TYPES[name]
    with pytest.raises(SignatureError):
        sshsig.verify(sig, message + b"!")


def test_namespace_mismatch_fails(keys, tmp_path):
    message = b"data"
    armored = keygen_sign(keys / "ed25519", message, "file")
    key_line = (keys / "ed25519.pub").read_text()
    assert sshsig.verify(sshsig.parse(armored), message, "file").key_type == "ssh-ed25519"
    assert keygen_verifies(tmp_path, armored, message, key_line, "file")
    with pytest.raises(SignatureError) as info:
        sshsig.verify(sshsig.parse(armored), message)
    assert info.value.message == "signature is for namespace 'file', not 'git'"
    assert not keygen_verifies(tmp_path, armored, message, key_line, "git")


def test_namespace_rewritten_in_the_blob_fails(keys):
    """The blob's namespace is not signed, the verifier's is: relabelling a
    "file" signature as "git" makes a bad signature, not a git one."""
    message = b"data"
    blob = dearmor(keygen_sign(keys / "ed25519", message, "file"))
    relabelled = blob.replace(text("file"), text("git"), 1)
    with pytest.raises(SignatureError) as info:
        sshsig.verify(sshsig.parse(armor(relabelled)), message)
    assert info.value.message == (
        "bad signature: the ssh-ed25519 key in the signature did not sign this data"
    )


def rsa_private(keys):
    from cryptography.hazmat.primitives import serialization

    return serialization.load_ssh_private_key((keys / "rsa").read_bytes(), None)


def rsa_signature(keys, message: bytes, signature_type: str, hash_name: str) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    key_blob = sshsig.public_key_blob((keys / "rsa.pub").read_text())
    value = rsa_private(keys).sign(
        to_sign("git", "sha512", message), padding.PKCS1v15(), getattr(hashes, hash_name)()
    )
    return armor(sshsig_blob(key_blob, text(signature_type) + string(value)))


def test_rsa_sha1_signature_is_refused(keys, tmp_path):
    message = b"data"
    key_line = (keys / "rsa.pub").read_text()
    near_miss = rsa_signature(keys, message, "rsa-sha2-256", "SHA256")
    assert sshsig.verify(sshsig.parse(near_miss), message).key_type == "ssh-rsa"
    assert keygen_verifies(tmp_path, near_miss, message, key_line)
    sha1 = rsa_signature(keys, message, "ssh-rsa", "SHA1")
    with pytest.raises(SignatureError) as info:
        sshsig.parse(sha1)
    assert info.value.message == (
        "rsa signature uses SHA-1 (ssh-rsa), which is refused: "
        "sign with rsa-sha2-256 or rsa-sha2-512"
    )
    assert not keygen_verifies(tmp_path, sha1, message, key_line)


def test_rsa_signature_type_decides_the_hash(keys):
    """An rsa-sha2-512 label on a SHA-256 signature is a bad signature."""
    mislabelled = rsa_signature(keys, b"data", "rsa-sha2-512", "SHA256")
    with pytest.raises(SignatureError) as info:
        sshsig.verify(sshsig.parse(mislabelled), b"data")
    assert info.value.message == (
        "bad signature: the ssh-rsa key in the signature did not sign this data"
    )


# -- security keys ---------------------------------------------------------------
@pytest.mark.parametrize("flags", [0x01, 0x00, 0x05])
def test_sk_ed25519(tmp_path, flags):
    private = ed25519_private()
    message = b"commit payload"
    armored = sign_sk_ed25519(private, message, flags, 7)
    result = sshsig.verify(sshsig.parse(armored), message)
    assert result == (SK_ED25519, sk_ed25519_key(private), bool(flags & 1), 7)
    assert keygen_verifies(
        tmp_path, armored, message, pub_line(SK_ED25519, sk_ed25519_key(private))
    )


@pytest.mark.parametrize("flags", [0x01, 0x00, 0x04])
def test_sk_ecdsa(tmp_path, flags):
    private = p256_private()
    message = b"commit payload"
    armored = sign_sk_ecdsa(private, message, flags, 2**32 - 1)
    result = sshsig.verify(sshsig.parse(armored), message)
    assert result == (SK_ECDSA, sk_ecdsa_key(private), bool(flags & 1), 2**32 - 1)
    assert keygen_verifies(tmp_path, armored, message, pub_line(SK_ECDSA, sk_ecdsa_key(private)))


def test_sk_signed_commit_verifies_like_git(tmp_path):
    repo = init_repo(tmp_path / "repo")
    git(repo, "commit", "-q", "--allow-empty", "-m", "security key")
    payload = cat_commit(repo, "HEAD")
    private = ed25519_private()
    raw = with_signature(payload, sign_sk_ed25519(private, payload, 0x01, 1))
    allowed = tmp_path / "allowed"
    allowed.write_text(f"{PRINCIPAL} {pub_line(SK_ED25519, sk_ed25519_key(private))}\n")
    assert verdict(raw).user_present is True
    assert git_verifies(repo, write_commit(repo, raw), allowed)


def test_sk_flags_are_signed(tmp_path):
    """Claiming a touch the key did not sign fails (flags 0 signed, 1 sent)."""
    private = ed25519_private()
    forged = sign_sk_ed25519(private, b"m", 0x01, 3, signed_flags=0x00)
    with pytest.raises(SignatureError) as info:
        sshsig.verify(sshsig.parse(forged), b"m")
    assert info.value.message == (
        f"bad signature: the {SK_ED25519} key in the signature did not sign this data"
    )
    assert not keygen_verifies(
        tmp_path, forged, b"m", pub_line(SK_ED25519, sk_ed25519_key(private))
    )


def test_sk_application_is_signed():
    private = p256_private()
    armored = sign_sk_ecdsa(private, b"m", 1, 1, application="ssh:one")
    blob = dearmor(armored).replace(text("ssh:one"), text("ssh:two"), 1)
    with pytest.raises(SignatureError) as info:
        sshsig.verify(sshsig.parse(armor(blob)), b"m")
    assert info.value.message == (
        f"bad signature: the {SK_ECDSA} key in the signature did not sign this data"
    )


def test_webauthn_signature_is_refused():
    armored = sign_sk_ecdsa(
        p256_private(), b"m", 1, 1, signature_type="webauthn-sk-ecdsa-sha2-nistp256@openssh.com"
    )
    with pytest.raises(SignatureError) as info:
        sshsig.parse(armored)
    assert info.value.message == (
        "webauthn signatures (webauthn-sk-ecdsa-sha2-nistp256@openssh.com) are not supported"
    )


# -- every parse failure, with its message ---------------------------------------
@pytest.fixture(scope="module")
def good_blob():
    return dearmor(sign_ed25519(ed25519_private(), b"m"))


def parse_error(armored: bytes) -> str:
    with pytest.raises(SignatureError) as info:
        sshsig.parse(armored)
    return info.value.message


def test_trailing_bytes_after_the_blob(good_blob):
    assert sshsig.verify(sshsig.parse(armor(good_blob)), b"m")
    assert parse_error(armor(good_blob + b"\0")) == "SSHSIG blob has 1 trailing byte"
    assert parse_error(armor(good_blob + b"xy")) == "SSHSIG blob has 2 trailing bytes"


@pytest.mark.parametrize(
    "keep, field",
    [
        (3, "magic"),
        (5, "magic"),
        (6, "version"),
        (9, "version"),
        (10, "public key"),
        (14, "public key"),
        (64, "public key"),
        (65, "namespace"),
        (71, "namespace"),
        (72, "reserved"),
        (76, "hash algorithm"),
        (85, "hash algorithm"),
        (86, "signature"),
        (-1, "signature"),
    ],
)
def test_truncated_blob(good_blob, keep, field):
    assert parse_error(armor(good_blob[:keep])) == f"SSHSIG blob is truncated (reading {field})"


BEGIN = b"-----BEGIN SSH SIGNATURE-----"
END = b"-----END SSH SIGNATURE-----"


def with_line(armored: bytes, index: int, line: bytes) -> bytes:
    lines = armored.split(b"\n")
    lines.insert(index, line)
    return b"\n".join(lines)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (
            lambda a: a[1:],
            "signature does not start with -----BEGIN SSH SIGNATURE----- and a newline",
        ),
        (
            lambda a: a.replace(b"-----\n", b"-----\r\n", 1),
            "signature does not start with -----BEGIN SSH SIGNATURE----- and a newline",
        ),
        (
            lambda a: b"",
            "signature does not start with -----BEGIN SSH SIGNATURE----- and a newline",
        ),
        (
            lambda a: a + b"x",
            "signature does not end with -----END SSH SIGNATURE----- (nothing may follow it)",
        ),
        (
            lambda a: a + b"\n",
            "signature does not end with -----END SSH SIGNATURE----- (nothing may follow it)",
        ),
        (
            lambda a: a[:-2],
            "signature does not end with -----END SSH SIGNATURE----- (nothing may follow it)",
        ),
        (lambda a: with_line(a, 2, b""), "signature armor line 3 is not base64"),
        (lambda a: with_line(a, 2, b"AAAA\r"), "signature armor line 3 is not base64"),
        (lambda a: a.replace(b"\nU1NI", b"\nU1N*"), "signature armor line 2 is not base64"),
        (lambda a: a.replace(b"\nU1NI", b"\nU1N I"), "signature armor line 2 is not base64"),
        (lambda a: BEGIN + b"\nU1NIU0lHAB==\n" + END, "signature armor is not valid base64"),
        (lambda a: BEGIN + b"\nU1NIU0lHAA=\n" + END, "signature armor is not valid base64"),
        (
            lambda a: BEGIN + b"\n" + END,
            "signature does not end with -----END SSH SIGNATURE----- (nothing may follow it)",
        ),
    ],
)
def test_bad_armor(good_blob, mutate, message):
    good = armor(good_blob)
    assert sshsig.parse(good).key_type == "ssh-ed25519"
    assert parse_error(mutate(good)) == message


NOT_CANONICAL = (
    "signature armor is not the form ssh-keygen writes (base64 in lines of 70, "
    "each line and the footer ending in a newline)"
)


def rewrapped(armored: bytes, width: int) -> bytes:
    body = b"".join(armored.splitlines()[1:-1])
    lines = [body[i : i + width] for i in range(0, len(body), width)]
    return BEGIN + b"\n" + b"\n".join(lines) + b"\n" + END + b"\n"


def test_the_armor_ssh_keygen_writes_is_the_armor_here(keys):
    """ssh-keygen's own output, for each kind of key, is what ``armor`` writes."""
    for name in ("ed25519", "ecdsa256", "rsa"):
        armored = keygen_sign(keys / name, b"m", "git")
        assert sshsig.armor(dearmor(armored)) == armored, name
        assert sshsig.parse(armored).key_type


@pytest.mark.parametrize("width", [64, 76, 4])
def test_rewrapped_armor_that_ssh_keygen_verifies_is_refused(keys, tmp_path, width):
    """Another line length decodes to the same blob: ssh-keygen verifies it, and
    in a commit it gives a new commit id for the owner's signed change."""
    armored = keygen_sign(keys / "ed25519", b"m", "git")
    key_line = " ".join((keys / "ed25519.pub").read_text().split()[:2])
    other = rewrapped(armored, width)
    assert other != armored
    assert keygen_verifies(tmp_path, other, b"m", key_line)
    assert parse_error(other) == NOT_CANONICAL
    # near miss: wrapped at 70, as written, it parses
    assert sshsig.parse(rewrapped(armored, 70)).key_type == "ssh-ed25519"


def test_armor_without_final_newline_is_refused(good_blob):
    assert parse_error(armor(good_blob)[:-1]) == NOT_CANONICAL


def test_empty_armor_body():
    assert parse_error(BEGIN + b"\n\n" + END + b"\n") == "signature armor line 2 is not base64"


def ed25519_inner(length: int = 64) -> bytes:
    return text("ssh-ed25519") + string(b"s" * length)


ED_KEY = text("ssh-ed25519") + string(b"k" * 32)
POINT = b"\x04" + b"\x01" * 64


def rsa_key(e: Optional[bytes] = None, n: Optional[bytes] = None) -> bytes:
    modulus = (1 << 2047) + 1
    return (
        text("ssh-rsa")
        + (e if e is not None else mpint(65537))
        + (n if n is not None else mpint(modulus))
    )


@pytest.mark.parametrize(
    "blob, message",
    [
        (
            sshsig_blob(ED_KEY, ed25519_inner(), magic=b"SSHSIH"),
            "SSHSIG blob does not start with the magic 'SSHSIG'",
        ),
        (
            sshsig_blob(ED_KEY, ed25519_inner(), version=2),
            "SSHSIG version 2 is not supported (only 1)",
        ),
        (
            sshsig_blob(ED_KEY, ed25519_inner(), version=0),
            "SSHSIG version 0 is not supported (only 1)",
        ),
        (sshsig_blob(ED_KEY, ed25519_inner(), namespace=""), "SSHSIG namespace is empty"),
        (
            sshsig_blob(ED_KEY, ed25519_inner(), namespace="g\0t"),
            "SSHSIG blob namespace holds a NUL byte",
        ),
        (
            sshsig_blob(ED_KEY, ed25519_inner()).replace(text("git"), string(b"g\xfft")),
            "SSHSIG blob namespace is not UTF-8",
        ),
        (
            sshsig_blob(ED_KEY, ed25519_inner(), reserved=b"tag"),
            "SSHSIG reserved field is not empty",
        ),
        (
            sshsig_blob(ED_KEY, ed25519_inner(), hash_algorithm="sha1"),
            "unsupported hash algorithm 'sha1' (sha256 or sha512)",
        ),
        (
            sshsig_blob(ED_KEY, ed25519_inner(), hash_algorithm="SHA512"),
            "unsupported hash algorithm 'SHA512' (sha256 or sha512)",
        ),
        # the public key
        (
            sshsig_blob(text("ssh-dss") + string(b"p"), ed25519_inner()),
            "unsupported key type 'ssh-dss' (supported: ssh-ed25519, ecdsa-sha2-nistp256, "
            "ecdsa-sha2-nistp384, ecdsa-sha2-nistp521, ssh-rsa, sk-ssh-ed25519@openssh.com, "
            "sk-ecdsa-sha2-nistp256@openssh.com)",
        ),
        (
            sshsig_blob(text("ssh-ed25519-cert-v01@openssh.com"), ed25519_inner()),
            "unsupported key type 'ssh-ed25519-cert-v01@openssh.com' (supported: ssh-ed25519, "
            "ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521, ssh-rsa, "
            "sk-ssh-ed25519@openssh.com, sk-ecdsa-sha2-nistp256@openssh.com)",
        ),
        (
            sshsig_blob(text("ssh-ed25519") + string(b"k" * 31), ed25519_inner()),
            "ed25519 key is 31 bytes, not 32",
        ),
        (sshsig_blob(ED_KEY + b"\0", ed25519_inner()), "public key has 1 trailing byte"),
        (
            sshsig_blob(ED_KEY[:-1], ed25519_inner()),
            "public key is truncated (reading ed25519 key)",
        ),
        (sshsig_blob(b"\0\0", ed25519_inner()), "public key is truncated (reading key type)"),
        (
            sshsig_blob(
                text("ecdsa-sha2-nistp256") + text("nistp384") + string(POINT), ed25519_inner()
            ),
            "ecdsa-sha2-nistp256 key names curve 'nistp384', not 'nistp256'",
        ),
        (
            sshsig_blob(
                text("ecdsa-sha2-nistp256") + text("nistp256") + string(b"\x02" + b"\1" * 32),
                ed25519_inner(),
            ),
            "ecdsa-sha2-nistp256 key point is not an uncompressed nistp256 point",
        ),
        (
            sshsig_blob(
                text("ecdsa-sha2-nistp384") + text("nistp384") + string(POINT), ed25519_inner()
            ),
            "ecdsa-sha2-nistp384 key point is not an uncompressed nistp384 point",
        ),
        (
            sshsig_blob(text(SK_ECDSA) + text("nistp256") + string(POINT), ed25519_inner()),
            "public key is truncated (reading application)",
        ),
        (
            sshsig_blob(
                text(SK_ED25519) + string(b"k" * 32) + text("ssh:") + b"\0", ed25519_inner()
            ),
            "public key has 1 trailing byte",
        ),
        (
            sshsig_blob(rsa_key(e=string(b"\x80\x01")), ed25519_inner()),
            "public key rsa exponent is negative",
        ),
        (
            sshsig_blob(rsa_key(e=string(b"\0\x01\x00\x01")), ed25519_inner()),
            "public key rsa exponent is not minimally encoded",
        ),
        (
            sshsig_blob(rsa_key(e=string(b"\0")), ed25519_inner()),
            "public key rsa exponent is not minimally encoded",
        ),
        (
            sshsig_blob(rsa_key(n=mpint((1 << 1022) + 1)), ed25519_inner()),
            "rsa key is 1023 bits; OpenSSH accepts 1024 to 16384",
        ),
        (
            sshsig_blob(rsa_key(n=mpint((1 << 16384) + 1)), ed25519_inner()),
            "rsa key is 16385 bits; OpenSSH accepts 1024 to 16384",
        ),
        # the signature inside
        (
            sshsig_blob(ED_KEY, text("ssh-rsa") + string(b"s" * 64)),
            "signature type 'ssh-rsa' does not fit a ssh-ed25519 key (expected ssh-ed25519)",
        ),
        (
            sshsig_blob(rsa_key(), text("ssh-ed25519") + string(b"s" * 256)),
            "signature type 'ssh-ed25519' does not fit a ssh-rsa key (expected rsa-sha2-256 or "
            "rsa-sha2-512)",
        ),
        (
            sshsig_blob(rsa_key(), text("rsa-sha2-256") + string(b"s" * 255)),
            "rsa signature is 255 bytes; the key's modulus is 256",
        ),
        (sshsig_blob(ED_KEY, ed25519_inner(63)), "ed25519 signature is 63 bytes, not 64"),
        (sshsig_blob(ED_KEY, ed25519_inner() + b"\0"), "signature has 1 trailing byte"),
        (sshsig_blob(ED_KEY, b""), "signature is truncated (reading signature type)"),
        (
            sshsig_blob(
                text("ecdsa-sha2-nistp256") + text("nistp256") + string(POINT),
                text("ecdsa-sha2-nistp256") + string(mpint(5) + mpint(6) + b"\0"),
            ),
            "ecdsa signature has 1 trailing byte",
        ),
        (
            sshsig_blob(
                text("ecdsa-sha2-nistp256") + text("nistp256") + string(POINT),
                text("ecdsa-sha2-nistp256") + string(mpint(5)),
            ),
            "ecdsa signature is truncated (reading s)",
        ),
        (
            sshsig_blob(
                text("ecdsa-sha2-nistp256") + text("nistp256") + string(POINT),
                text("ecdsa-sha2-nistp256") + string(string(b"\xff") + mpint(6)),
            ),
            "ecdsa signature r is negative",
        ),
        (
            sshsig_blob(
                text(SK_ED25519) + string(b"k" * 32) + text("ssh:"),
                text(SK_ED25519) + string(b"s" * 64) + b"\x01",
            ),
            "signature is truncated (reading counter)",
        ),
        (
            sshsig_blob(
                text(SK_ED25519) + string(b"k" * 32) + text("ssh:"),
                text(SK_ED25519) + string(b"s" * 64),
            ),
            "signature is truncated (reading flags)",
        ),
        (
            sshsig_blob(text(SK_ED25519) + string(b"k" * 32) + text("ssh:"), ed25519_inner()),
            "signature type 'ssh-ed25519' does not fit a sk-ssh-ed25519@openssh.com key "
            "(expected sk-ssh-ed25519@openssh.com)",
        ),
        (
            sshsig_blob(
                text(SK_ECDSA) + text("nistp256") + string(POINT) + text("ssh:"),
                text(SK_ECDSA) + string(mpint(5) + mpint(6)) + b"\x01" + u32(1) + b"\0",
            ),
            "signature has 1 trailing byte",
        ),
    ],
)
def test_bad_blob(blob, message):
    assert parse_error(armor(blob)) == message


def verify_error(blob: bytes, message: bytes = b"m", namespace: str = "git") -> str:
    sig = sshsig.parse(armor(blob))
    with pytest.raises(SignatureError) as info:
        sshsig.verify(sig, message, namespace)
    return info.value.message


def test_ecdsa_point_off_the_curve():
    key = text("ecdsa-sha2-nistp256") + text("nistp256") + string(POINT)
    inner = text("ecdsa-sha2-nistp256") + string(mpint(5) + mpint(6))
    assert (
        verify_error(sshsig_blob(key, inner))
        == "ecdsa-sha2-nistp256 key is not a point on nistp256"
    )


def test_sk_ecdsa_point_off_the_curve():
    key = text(SK_ECDSA) + text("nistp256") + string(POINT) + text("ssh:")
    inner = text(SK_ECDSA) + string(mpint(5) + mpint(6)) + b"\x01" + u32(1)
    assert verify_error(sshsig_blob(key, inner)) == f"{SK_ECDSA} key is not a point on nistp256"


def test_invalid_rsa_public_key():
    even_exponent = rsa_key(e=mpint(65536))
    assert (
        verify_error(sshsig_blob(even_exponent, text("rsa-sha2-512") + string(b"s" * 256)))
        == "ssh-rsa key is not a valid RSA public key"
    )


def test_ecdsa_zero_signature_is_bad():
    private = p256_private()
    key = text("ecdsa-sha2-nistp256") + text("nistp256") + string(p256_point(private))
    good_inner = text("ecdsa-sha2-nistp256") + string(
        ecdsa_pair(private, to_sign("git", "sha512", b"m"))
    )
    assert sshsig.verify(sshsig.parse(armor(sshsig_blob(key, good_inner))), b"m")
    zero = text("ecdsa-sha2-nistp256") + string(mpint(0) + mpint(0))
    assert (
        verify_error(sshsig_blob(key, zero))
        == "bad signature: the ecdsa-sha2-nistp256 key in the signature did not sign this data"
    )


def test_verify_is_repeatable_on_one_parse(keys):
    sig = sshsig.parse(keygen_sign(keys / "ecdsa384", b"once", "git"))
    assert sshsig.verify(sig, b"once") == sshsig.verify(sig, b"once")


# -- public_key_blob -------------------------------------------------------------
def test_public_key_blob_of_a_pub_file(keys):
    for name in KEYS:
        line = (keys / f"{name}.pub").read_text()
        key_type, encoded = line.split()[:2]
        assert sshsig.public_key_blob(line) == base64.b64decode(encoded)
        assert sshsig.public_key_blob(f"{key_type} {encoded}") == base64.b64decode(encoded)


@pytest.mark.parametrize(
    "line, message",
    [
        ("ssh-ed25519", "expected a key type and a base64 key"),
        ("", "expected a key type and a base64 key"),
        (
            "ssh-dss AAAA",
            "unsupported key type 'ssh-dss' (supported: ssh-ed25519, "
            "ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521, ssh-rsa, "
            "sk-ssh-ed25519@openssh.com, sk-ecdsa-sha2-nistp256@openssh.com)",
        ),
        ("ssh-ed25519 AAAA*", "key is not valid base64"),
        ("ssh-ed25519 AAAAC3NzaC1lZDI1NTE", "key is not valid base64"),
        ("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA==é", "key is not valid base64"),
        (
            "ssh-rsa " + base64.b64encode(ED_KEY).decode(),
            "the key inside is ssh-ed25519, not ssh-rsa",
        ),
        (
            "ssh-ed25519 " + base64.b64encode(ED_KEY[:-1]).decode(),
            "public key is truncated (reading ed25519 key)",
        ),
    ],
)
def test_bad_public_key_line(line, message):
    with pytest.raises(SignatureError) as info:
        sshsig.public_key_blob(line)
    assert info.value.message == message


# -- every one-byte change and every truncation is refused ----------------------
@pytest.fixture(scope="module")
def good_blobs(keys):
    """A valid blob per kind of key, over b"m"."""
    blobs = {
        name: dearmor(keygen_sign(keys / name, b"m", "git"))
        for name in ("ed25519", "ecdsa256", "rsa")
    }
    blobs["sk-ed25519"] = dearmor(sign_sk_ed25519(ed25519_private(), b"m", 1, 9))
    blobs["sk-ecdsa"] = dearmor(sign_sk_ecdsa(p256_private(), b"m", 1, 9))
    return blobs


def refused(blob: bytes) -> bool:
    """True when parse or verify raises SignatureError (any other exception
    escapes and fails the test)."""
    try:
        sshsig.verify(sshsig.parse(armor(blob)), b"m")
    except SignatureError:
        return True
    return False


@pytest.mark.parametrize("name", ["ed25519", "ecdsa256", "rsa", "sk-ed25519", "sk-ecdsa"])
def test_every_one_byte_change_is_refused(good_blobs, name):
    blob = good_blobs[name]
    assert not refused(blob)
    for index in range(len(blob)):
        for mask in (0x01, 0x80):
            changed = blob[:index] + bytes([blob[index] ^ mask]) + blob[index + 1 :]
            assert refused(changed), (index, mask)


@pytest.mark.parametrize("name", ["ed25519", "sk-ecdsa"])
def test_every_truncation_is_refused(good_blobs, name):
    blob = good_blobs[name]
    for length in range(1, len(blob)):
        assert refused(blob[:length]), length


def test_unknown_object_format():
    with pytest.raises(ValueError) as info:
        sshsig.split_commit(b"tree x\n", "sha3")
    assert str(info.value) == "unknown object format 'sha3' (sha1 or sha256)"
