"""The ssh-keygen ALLOWED SIGNERS file (``man ssh-keygen``), read strictly.

A line is ``principals [options] keytype base64-key [comment]``; blank lines
and lines starting with ``#`` (after white space) are skipped. ``ssh-keygen``
skips a line it cannot read; here any such line is an error naming it, so an
owner's typo cannot silently drop an owner.

Principals are comma-separated exact names. ``ssh-keygen`` reads them as
patterns (``*``, ``?``, ``!``), but a signer is looked up here by key and its
principals are then compared with owner names: a pattern there would be taken
for a name, so a pattern character is an error.

A control character (NUL, CR other than a CRLF line end, or any other but
the tab) anywhere on a line is an error, comment lines included: ssh-keygen
ends a line at NUL and splits it at CR, so it would skip a line read here.

Options (names case-insensitive, as in OpenSSH): ``namespaces="git,file"``
limits the key to those namespaces, listed by exact name for the same reason.
Refused, each with an error naming the line:

- ``valid-after`` and ``valid-before``: git checks them against the commit's
  committer date (``-Overify-time``), and that date is whatever the author
  wrote, so they bound nothing; to retire a key, remove its line.
- ``cert-authority``: certificates are not verified; list each signer's own key.

A key may be listed once: with one line per key, a lookup by key has one
answer.
"""

from __future__ import annotations

from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from oracle_guard.authority import sshsig

PATTERN_CHARACTERS = "*?!"
REFUSED_OPTIONS = {
    "valid-after": "a commit's date is whatever its author wrote, so it cannot "
    "bound a key's validity; to retire a key, remove its line",
    "valid-before": "a commit's date is whatever its author wrote, so it cannot "
    "bound a key's validity; to retire a key, remove its line",
    "cert-authority": "certificates are not verified; list each signer's own key",
}


class AllowedSignersError(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


class Signer(NamedTuple):
    line: int
    principals: Tuple[str, ...]
    namespaces: Optional[Tuple[str, ...]]  # None: every namespace
    key_type: str
    public_key: bytes  # the key blob, as sshsig.Verified.public_key
    comment: str = ""

    def allows(self, namespace: str) -> bool:
        return self.namespaces is None or namespace in self.namespaces


def _word(text: str) -> Tuple[str, str]:
    """The text up to the first space or tab, and the rest without leading blanks."""
    for index, char in enumerate(text):
        if char in " \t":
            return text[:index], text[index:].lstrip(" \t")
    return text, ""


def _options_field(text: str) -> Tuple[str, str]:
    """Like ``_word``, but a space inside double quotes does not end the field
    (OpenSSH's sshkey_advance_past_options)."""
    quoted = False
    for index, char in enumerate(text):
        if char == '"':
            quoted = not quoted
        elif char in " \t" and not quoted:
            return text[:index], text[index:].lstrip(" \t")
    if quoted:
        raise ValueError("options have an unterminated double quote")
    return text, ""


def _names(field: str, what: str) -> Tuple[str, ...]:
    names = tuple(field.split(","))
    for name in names:
        if not name:
            raise ValueError(f"empty {what} in {field!r}")
        if any(char in name for char in " \t"):
            raise ValueError(f"{what} {name!r} holds white space")
        if '"' in name:
            raise ValueError(
                f"{what} {name!r} holds a double quote (quoted {what}s are not supported)"
            )
        if any(char in name for char in PATTERN_CHARACTERS):
            raise ValueError(f"{what} {name!r} is a pattern: list each {what} by its exact name")
    return names


def _split_options(field: str) -> List[str]:
    """Options separated by commas outside double quotes."""
    options, start, quoted = [], 0, False
    for index, char in enumerate(field):
        if char == '"':
            quoted = not quoted
        elif char == "," and not quoted:
            options.append(field[start:index])
            start = index + 1
    options.append(field[start:])
    return options


def _options(field: str) -> Optional[Tuple[str, ...]]:
    """The namespaces the options allow (None: all)."""
    namespaces: Optional[Tuple[str, ...]] = None
    for option in _split_options(field):
        name, equals, value = option.partition("=")
        name = name.lower()
        if not option:
            raise ValueError(f"empty option in {field!r}")
        if name in REFUSED_OPTIONS:
            raise ValueError(f"option {name} is refused: {REFUSED_OPTIONS[name]}")
        if name != "namespaces" or not equals:
            raise ValueError(f'unknown option {option!r} (only namespaces="...")')
        if namespaces is not None:
            raise ValueError("duplicate option namespaces")
        if len(value) < 2 or value[0] != '"' or value[-1] != '"' or '"' in value[1:-1]:
            raise ValueError(
                f'namespaces value must be one double-quoted list: namespaces="git", not {option!r}'
            )
        namespaces = _names(value[1:-1], "namespace")
    return namespaces


def _looks_like_options(field: str, following: str) -> bool:
    """Whether the field after the principals is options (else a key type):
    options hold '=' or ',' or name a flag; a lone word followed by a key
    type is an (unknown) option too."""
    return (
        "=" in field
        or "," in field
        or field.lower() in REFUSED_OPTIONS
        or _word(following)[0] in sshsig.KEY_TYPES
    )


CONTROL_NAMES = {"\0": "a NUL byte", "\r": "a carriage return"}


def _control_character(line: str) -> Optional[str]:
    """Why ``line`` (its LF, and the CR of a CRLF, taken off) is refused for a
    control character, or None. ssh-keygen reads a line as a C string, so a NUL
    ends it, and splits it on CR as on a space: ``alice\\rbob`` and
    ``\\0alice`` are lines it skips, whose key would be an owner here and
    unverified in git. Every other control character but the tab is refused too,
    where ssh-keygen would read it as part of a name."""
    for index, char in enumerate(line):
        if (char < " " and char != "\t") or char == "\x7f":
            what = CONTROL_NAMES.get(char, f"control character U+{ord(char):04X}")
            return (
                f"holds {what} at column {index + 1}: ssh-keygen ends or splits the line "
                "there, or reads it into a name (no control characters but tabs)"
            )
    return None


def parse_line(number: int, line: str) -> Optional[Signer]:
    """The signer on one line, or None for a blank or comment line."""
    refused = _control_character(line)
    if refused is not None:
        raise AllowedSignersError(number, refused)
    text = line.lstrip(" \t")  # what ssh-keygen skips before the principals
    if not text or text.startswith("#"):
        return None
    try:
        principals_field, rest = _word(text)
        if principals_field in sshsig.KEY_TYPES:
            raise ValueError("missing principals: a line starts with them, then the key type")
        principals = _names(principals_field, "principal")
        if not rest:
            raise ValueError("missing key type and key after the principals")
        namespaces = None
        second, after = _word(rest)
        if second not in sshsig.KEY_TYPES and _looks_like_options(second, after):
            options, rest = _options_field(rest)
            namespaces = _options(options)
            if not rest:
                raise ValueError("missing key type and key after the options")
        key_type, rest = _word(rest)
        base64_key, comment = _word(rest)
        if not base64_key:
            raise ValueError(f"missing base64 key after {key_type}")
        public_key = sshsig.key_blob(key_type, base64_key)
    except ValueError as exc:
        raise AllowedSignersError(number, str(exc)) from None
    except sshsig.SignatureError as exc:
        raise AllowedSignersError(number, exc.message) from None
    return Signer(number, principals, namespaces, key_type, public_key, comment)


def parse(text: str) -> List[Signer]:
    """Every signer in an allowed signers file, in file order. Lines end with
    LF or CRLF."""
    signers: List[Signer] = []
    first_line: Dict[bytes, int] = {}
    for number, line in enumerate(text.split("\n"), 1):
        signer = parse_line(number, line[:-1] if line.endswith("\r") else line)
        if signer is None:
            continue
        if signer.public_key in first_line:
            raise AllowedSignersError(
                number,
                f"key already listed on line "
                f"{first_line[signer.public_key]} (list each "
                f"key once, with all its principals)",
            )
        first_line[signer.public_key] = number
        signers.append(signer)
    return signers


def find(signers: Sequence[Signer], key_blob: bytes, namespace: str) -> Optional[Signer]:
    """The signer whose key is ``key_blob``, if it may sign in ``namespace``."""
    for signer in signers:
        if signer.public_key == key_blob:
            return signer if signer.allows(namespace) else None
    return None
