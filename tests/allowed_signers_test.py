"""The allowed signers file: what ssh-keygen reads, and each refusal with its line."""

import base64
import subprocess
from pathlib import Path

import pytest

from oracle_guard.authority import allowed_signers, sshsig
from oracle_guard.authority.allowed_signers import AllowedSignersError, Signer
from testing.signatures import make_keys

SUPPORTED = (
    "ssh-ed25519, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521, "
    "ssh-rsa, sk-ssh-ed25519@openssh.com, sk-ecdsa-sha2-nistp256@openssh.com"
)
DATE_REFUSAL = (
    "a commit's date is whatever its author wrote, so it cannot bound a key's "
    "validity; to retire a key, remove its line"
)


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    """Real public key lines from ssh-keygen, by name."""
    folder = tmp_path_factory.mktemp("keys")
    lines = {
        name: key.with_name(key.name + ".pub").read_text().strip()
        for name, key in make_keys(folder).items()
    }
    lines["folder"] = folder
    return lines


def key_of(line: str) -> str:
    """``keytype base64`` without the comment."""
    return " ".join(line.split()[:2])


def blob(line: str) -> bytes:
    return base64.b64decode(line.split()[1])


def error_of(text: str) -> AllowedSignersError:
    with pytest.raises(AllowedSignersError) as info:
        allowed_signers.parse(text)
    return info.value


def test_a_line_with_its_comment(keys):
    signers = allowed_signers.parse(f"alice@example.com {keys['ed']}\n")
    assert signers == [
        Signer(1, ("alice@example.com",), None, "ssh-ed25519", blob(keys["ed"]), "ed@host")
    ]


def test_principals_options_comments_and_blank_lines(keys):
    text = (
        f"# owners\n\n   \t\n"
        f"alice,bob {key_of(keys['ed'])}\n"
        f"  # indented comment\n"
        f'carol namespaces="git,file" {key_of(keys["ec"])} a comment with  spaces \r\n'
        f'dave NAMESPACES="git" {key_of(keys["rsa"])}'
    )
    alice, carol, dave = allowed_signers.parse(text)
    assert (alice.line, alice.principals, alice.namespaces, alice.comment) == (
        4,
        ("alice", "bob"),
        None,
        "",
    )
    assert (carol.line, carol.principals, carol.namespaces, carol.key_type) == (
        6,
        ("carol",),
        ("git", "file"),
        "ecdsa-sha2-nistp256",
    )
    assert carol.comment == "a comment with  spaces "
    assert (dave.line, dave.namespaces, dave.key_type) == (7, ("git",), "ssh-rsa")


def test_allows(keys):
    anything, limited = allowed_signers.parse(
        f'a {key_of(keys["ed"])}\nb namespaces="git,file" {key_of(keys["ec"])}\n'
    )
    assert anything.allows("git") and anything.allows("email")
    assert limited.allows("git") and limited.allows("file")
    assert not limited.allows("email") and not limited.allows("gi")


def test_find(keys):
    signers = allowed_signers.parse(
        f'a {key_of(keys["ed"])}\nb namespaces="file" {key_of(keys["ec"])}\n'
    )
    assert allowed_signers.find(signers, blob(keys["ed"]), "git") is signers[0]
    assert allowed_signers.find(signers, blob(keys["ec"]), "file") is signers[1]
    # the key is listed, but not for git
    assert allowed_signers.find(signers, blob(keys["ec"]), "git") is None
    # a key nobody listed, and a listed key's near miss (one byte changed)
    assert allowed_signers.find(signers, blob(keys["ed2"]), "git") is None
    near = blob(keys["ed"])[:-1] + bytes([blob(keys["ed"])[-1] ^ 1])
    assert allowed_signers.find(signers, near, "git") is None
    assert allowed_signers.find([], blob(keys["ed"]), "git") is None


def test_empty_file():
    assert allowed_signers.parse("") == []
    assert allowed_signers.parse("# nobody\n\n") == []


def test_find_agrees_with_ssh_keygen(keys, tmp_path):
    """A file read here names the same principals for a signature as
    ssh-keygen -Y find-principals, and a verified key is found by its blob."""
    text = f'alice,bob namespaces="git" {key_of(keys["ed"])}\ncarol {keys["ec"]}\n'
    path = tmp_path / "allowed"
    path.write_text(text)
    signers = allowed_signers.parse(text)
    for name, principals in (("ed", "alice,bob"), ("ec", "carol")):
        signed = subprocess.run(
            ["ssh-keygen", "-q", "-Y", "sign", "-n", "git", "-f", str(keys["folder"] / name)],
            input=b"data",
            stdout=subprocess.PIPE,
            check=True,
        ).stdout
        found = (
            subprocess.run(
                ["ssh-keygen", "-Y", "find-principals", "-f", str(path), "-s", "/dev/stdin"],
                input=signed,
                stdout=subprocess.PIPE,
                check=True,
            )
            .stdout.decode()
            .split()
        )
        assert found == principals.split(",")  # one a line
        verified = sshsig.verify(sshsig.parse(signed), b"data")
        signer = allowed_signers.find(signers, verified.public_key, "git")
        assert ",".join(signer.principals) == principals


def test_sk_keys_are_read():
    key = b"\0\0\0\x1ask-ssh-ed25519@openssh.com" + b"\0\0\0\x20" + b"k" * 32 + b"\0\0\0\x04ssh:"
    line = f"a sk-ssh-ed25519@openssh.com {base64.b64encode(key).decode()} yubikey"
    (signer,) = allowed_signers.parse(line)
    assert (signer.key_type, signer.public_key, signer.comment) == (
        "sk-ssh-ed25519@openssh.com",
        key,
        "yubikey",
    )


@pytest.mark.parametrize(
    "options, message",
    [
        (
            "cert-authority",
            "option cert-authority is refused: certificates are not verified; "
            "list each signer's own key",
        ),
        (
            "Cert-Authority",
            "option cert-authority is refused: certificates are not verified; "
            "list each signer's own key",
        ),
        (
            'namespaces="git",cert-authority',
            "option cert-authority is refused: certificates are not verified; list each signer's "
            "own key",
        ),
        ("valid-after=20240101", f"option valid-after is refused: {DATE_REFUSAL}"),
        ('valid-after="20240101"', f"option valid-after is refused: {DATE_REFUSAL}"),
        ("valid-before=20300101", f"option valid-before is refused: {DATE_REFUSAL}"),
        ('namespaces="git",namespaces="file"', "duplicate option namespaces"),
        ("no-touch-required", "unknown option 'no-touch-required' (only namespaces=\"...\")"),
        ("namespaces", "unknown option 'namespaces' (only namespaces=\"...\")"),
        ('namespaces="git",', "empty option in 'namespaces=\"git\",'"),
        ('namespaces="git",,x=1', "empty option in 'namespaces=\"git\",,x=1'"),
        (
            "namespaces=git",
            'namespaces value must be one double-quoted list: namespaces="git", '
            "not 'namespaces=git'",
        ),
        (
            'namespaces="git"x',
            "namespaces value must be one double-quoted list: "
            'namespaces="git", not \'namespaces="git"x\'',
        ),
        (
            'namespaces="git""file"',
            "namespaces value must be one double-quoted list: "
            'namespaces="git", not \'namespaces="git""file"\'',
        ),
        ('namespaces=""', "empty namespace in ''"),
        ('namespaces="git,"', "empty namespace in 'git,'"),
        ('namespaces="git, file"', "namespace ' file' holds white space"),
        ('namespaces="g*"', "namespace 'g*' is a pattern: list each namespace by its exact name"),
        (
            'namespaces="!file"',
            "namespace '!file' is a pattern: list each namespace by its exact name",
        ),
        ('namespaces="git', "options have an unterminated double quote"),
    ],
)
def test_bad_options(keys, options, message):
    good = f'# owners\nalice namespaces="git" {key_of(keys["ed"])}\n'
    assert allowed_signers.parse(good)[0].namespaces == ("git",)
    err = error_of(f"# owners\nalice {options} {key_of(keys['ed'])}\n")
    assert (err.line, err.message) == (2, message)
    assert str(err) == f"line 2: {message}"


@pytest.mark.parametrize(
    "principals, message",
    [
        ("*", "principal '*' is a pattern: list each principal by its exact name"),
        (
            "alice,*@example.com",
            "principal '*@example.com' is a pattern: list each principal by its exact name",
        ),
        ("al?ce", "principal 'al?ce' is a pattern: list each principal by its exact name"),
        ("alice,!bob", "principal '!bob' is a pattern: list each principal by its exact name"),
        ("alice,,bob", "empty principal in 'alice,,bob'"),
        ("alice,", "empty principal in 'alice,'"),
        (
            '"alice"',
            "principal '\"alice\"' holds a double quote (quoted principals are not supported)",
        ),
    ],
)
def test_bad_principals(keys, principals, message):
    err = error_of(f"\n\n{principals} {key_of(keys['ed'])}\n")
    assert (err.line, err.message) == (3, message)


def test_bad_keys(keys):
    ed_type, ed_base64 = keys["ed"].split()[:2]
    cases = [
        ("alice", "missing key type and key after the principals"),
        ('alice namespaces="git"', "missing key type and key after the options"),
        ("alice ssh-ed25519", "missing base64 key after ssh-ed25519"),
        (
            f"{ed_type} {ed_base64}",
            "missing principals: a line starts with them, then the key type",
        ),
        (f"alice ssh-dss {ed_base64}", f"unsupported key type 'ssh-dss' (supported: {SUPPORTED})"),
        (
            f'alice namespaces="git" ssh-dss {ed_base64}',
            f"unsupported key type 'ssh-dss' (supported: {SUPPORTED})",
        ),
        (
            f"alice ssh-ed25519-cert-v01@openssh.com {ed_base64}",
            f"unsupported key type 'ssh-ed25519-cert-v01@openssh.com' (supported: {SUPPORTED})",
        ),
        (f"alice {ed_type} {ed_base64[:-1]}", "key is not valid base64"),
        (f"alice {ed_type} {ed_base64[:-2]}*{ed_base64[-1]}", "key is not valid base64"),
        (f"alice {ed_type} {ed_base64[:-2]}B=", "key is not valid base64"),
        (f"alice ssh-rsa {ed_base64}", "the key inside is ssh-ed25519, not ssh-rsa"),
        (
            f"alice {ed_type} {base64.b64encode(blob(keys['ed']) + b'x').decode()}",
            "public key has 1 trailing byte",
        ),
        (
            f"alice {ed_type} {base64.b64encode(blob(keys['ed'])[:-1]).decode()}",
            "public key is truncated (reading ed25519 key)",
        ),
    ]
    assert allowed_signers.parse(f"alice {ed_type} {ed_base64}")
    for line, message in cases:
        err = error_of(f"ok {key_of(keys['rsa'])}\n{line}\n")
        assert (err.line, err.message) == (2, message), line


def test_unknown_option_before_a_key_type(keys):
    err = error_of(f"alice restrict {key_of(keys['ed'])}")
    assert (err.line, err.message) == (1, "unknown option 'restrict' (only namespaces=\"...\")")


def test_a_key_listed_twice(keys):
    err = error_of(
        f"alice {key_of(keys['ed'])}\nbob {key_of(keys['ec'])}\n"
        f'carol namespaces="file" {keys["ed"]}\n'
    )
    assert (err.line, err.message) == (
        3,
        "key already listed on line 1 (list each key once, with all its principals)",
    )
    # near miss: two keys of one type are two keys
    assert len(allowed_signers.parse(f"alice {keys['ed']}\nbob {keys['ed2']}\n")) == 2


def test_ssh_keygen_reads_what_is_accepted(keys, tmp_path):
    """The options read here mean the same to ssh-keygen: a key limited to
    "file" does not verify a git signature there either."""
    path = Path(tmp_path / "allowed")
    path.write_text(f'alice namespaces="file" {keys["ed"]}\n')
    (signer,) = allowed_signers.parse(path.read_text())
    signed = subprocess.run(
        ["ssh-keygen", "-q", "-Y", "sign", "-n", "git", "-f", str(keys["folder"] / "ed")],
        input=b"data",
        stdout=subprocess.PIPE,
        check=True,
    ).stdout
    sig_file = tmp_path / "sig"
    sig_file.write_bytes(signed)
    proc = subprocess.run(
        [
            "ssh-keygen",
            "-Y",
            "verify",
            "-f",
            str(path),
            "-I",
            "alice",
            "-n",
            "git",
            "-s",
            str(sig_file),
        ],
        input=b"data",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.returncode != 0 and not signer.allows("git")


def keygen_principals(keys, path: Path, name: str = "ed") -> list:
    """The principals ssh-keygen -Y find-principals names for a signature by
    ``name``'s key with ``path`` as the allowed signers file ([] for none)."""
    signed = subprocess.run(
        ["ssh-keygen", "-q", "-Y", "sign", "-n", "git", "-f", str(keys["folder"] / name)],
        input=b"data",
        stdout=subprocess.PIPE,
        check=True,
    ).stdout
    proc = subprocess.run(
        ["ssh-keygen", "-Y", "find-principals", "-f", str(path), "-s", "/dev/stdin"],
        input=signed,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    return proc.stdout.decode().split() if proc.returncode == 0 else []


@pytest.mark.parametrize(
    "prefix, message",
    [
        ("alice\rbob ", "holds a carriage return at column 6"),
        ("\0alice@example.com ", "holds a NUL byte at column 1"),
        ("alice\0 ", "holds a NUL byte at column 6"),
        ("\ralice ", "holds a carriage return at column 1"),
        (" \ralice ", "holds a carriage return at column 2"),
    ],
    ids=["cr-in-principals", "nul-first", "nul-after", "cr-first", "cr-after-blank"],
)
def test_a_line_ssh_keygen_skips_is_refused(keys, tmp_path, prefix, message):
    """ssh-keygen ends a line at NUL and splits it at CR: it skips these lines,
    so git calls their key's commits unverified. Here each is an error, never an
    owner."""
    text = f"{prefix}{key_of(keys['ed'])}\n"
    path = tmp_path / "allowed"
    path.write_bytes(text.encode())
    assert keygen_principals(keys, path) == []
    err = error_of(text)
    assert err.line == 1 and err.message.startswith(message + ": "), err.message


def test_the_near_misses_ssh_keygen_reads_are_read(keys, tmp_path):
    """A CRLF line end and tabs between the fields: ssh-keygen names alice, and so
    does the file here."""
    for text in (f"alice {key_of(keys['ed'])}\r\n", f"\talice\t{key_of(keys['ed'])}\n"):
        path = tmp_path / "allowed"
        path.write_bytes(text.encode())
        assert keygen_principals(keys, path) == ["alice"], repr(text)
        assert allowed_signers.parse(text)[0].principals == ("alice",)


@pytest.mark.parametrize("char", ["\x1b", "\x0b", "\x0c", "\x7f", "\x01"])
def test_every_other_control_character_is_refused(keys, char):
    """ssh-keygen would read these into a name or a comment: refused all the same,
    comment lines included."""
    for text in (f"al{char}ice {key_of(keys['ed'])}\n", f"# a comment {char}\n"):
        err = error_of(text)
        assert err.message.startswith(f"holds control character U+{ord(char):04X}"), err.message
