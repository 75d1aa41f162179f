"""git's wildmatch as regexes over bytes: one gitignore pattern against one path."""

from __future__ import annotations

import functools
import re
import sys
from typing import Callable, Dict, FrozenSet, List, Tuple, Union

# Matching is on bytes, as in git: a path (a str decoded from git's bytes with
# ``surrogateescape``) and a pattern are encoded back to UTF-8 first, so ``?``
# and ``[...]`` match one byte (``é`` is two, ``??``), ranges and ``[^...]``
# compare bytes, and a non-UTF-8 name matches as its raw bytes. The POSIX
# classes are ASCII only, as in git. A pattern git would reject (an unclosed
# ``[``, a trailing ``\``, an unknown ``[:class:]``) matches nothing, as in git.
#
# Patterns become Python regexes over bytes that cannot backtrack without bound:
# in every part of a name, the text between two ``*`` is taken at its leftmost
# place and never given back, and between two ``**`` the folders are too (an
# atomic group: a glob between wildcards is best matched as early as possible).

NEVER = b"(?!)"
_SLASH = ord("/")
_ALL = frozenset(range(256))
_ANY_BUT_SLASH = _ALL - {_SLASH}
_NUL = frozenset((0,))
# a name's bytes, as one regex class: in a batch (``sep``) NUL ends a path too
_NAME = {False: b"[^/]", True: b"[^/\\x00]"}


def _ascii(test: Callable[[str], bool]) -> FrozenSet[int]:
    return frozenset(b for b in range(128) if test(chr(b)))


# POSIX classes as git's wildmatch defines them: ASCII bytes only, C locale.
_POSIX: Dict[bytes, FrozenSet[int]] = {
    b"alnum": _ascii(str.isalnum),
    b"alpha": _ascii(str.isalpha),
    b"blank": frozenset(b" \t"),
    b"cntrl": frozenset(list(range(32)) + [127]),
    b"digit": _ascii(str.isdigit),
    b"graph": frozenset(range(33, 127)),
    b"lower": _ascii(str.islower),
    b"print": frozenset(range(32, 127)),
    b"punct": frozenset(range(33, 127)) - _ascii(str.isalnum),
    b"space": frozenset(b" \t\n\v\f\r"),
    b"upper": _ascii(str.isupper),
    b"xdigit": frozenset(b"0123456789abcdefABCDEF"),
}
_SWAP = {b: b ^ 0x20 for b in range(256) if 65 <= b <= 90 or 97 <= b <= 122}


class Malformed(Exception):
    """git's wildmatch aborts on this pattern: it matches nothing."""


def git_bytes(text: str) -> bytes:
    """The bytes git has for ``text``: UTF-8, a surrogate escape as its byte."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate no git name decodes to
        return b"".join(
            ch.encode("utf-8", "surrogateescape")
            if not 0xD800 <= ord(ch) < 0xDC80
            else ch.encode("utf-8", "surrogatepass")
            for ch in text
        )


# -- translation: git's dowild() with WM_PATHNAME, as a regex over bytes -------

# fold_case's classes: a name is protected when any case twin of it matches as
# written, so '[!a-g]' (which matches 'E' in 'tEn') also takes 'e' ('ten', the
# same file on macOS); git's WM_CASEFOLD negates after folding and would not
TWIN = "twin"
Fold = Union[bool, str]  # False, True (WM_CASEFOLD) or TWIN


def _class(pattern: bytes, i: int, fold: Fold = False) -> Tuple[FrozenSet[int], int]:
    """The bytes the ``[...]`` at ``pattern[i]`` matches, and the index after its
    ``]``: git's wildmatch.c, step for step (before removing '/'). With ``fold``
    a letter is in the class when either of its cases is, before ``[!...]``
    negates it, as WM_CASEFOLD has it (``[!a]`` matches neither 'a' nor 'A')."""
    n = len(pattern)
    i += 1
    if i >= n:
        raise Malformed("unclosed '['")
    negated = pattern[i] in b"!^"
    if negated:
        i += 1
    members = set()
    prev = 0  # the last single byte, a possible range start (0: none)
    while True:
        if i >= n:
            raise Malformed("unclosed '['")
        ch = pattern[i]
        if ch == 0x5C:  # '\\'
            i += 1
            if i >= n:
                raise Malformed("trailing '\\'")
            ch = pattern[i]
            members.add(ch)
        elif ch == 0x2D and prev and i + 1 < n and pattern[i + 1] != 0x5D:  # '-', not before ']'
            i += 1
            ch = pattern[i]
            if ch == 0x5C:
                i += 1
                if i >= n:
                    raise Malformed("trailing '\\'")
                ch = pattern[i]
            members.update(range(prev, ch + 1))  # reversed: nothing (its start matched already)
            ch = 0
        elif ch == 0x5B and pattern[i + 1 : i + 2] == b":":  # '[:'
            start = i + 2
            close = pattern.find(b"]", start)
            if close == -1:
                raise Malformed("unclosed '['")
            if close - start - 1 < 0 or pattern[close - 1] != 0x3A:
                members.add(ch)  # no ':]': a literal '['
            else:
                name = pattern[start : close - 1]
                if name not in _POSIX:
                    raise Malformed(f"unknown character class [:{name.decode('latin-1')}:]")
                members |= _POSIX[name]
                i = close
                ch = 0
        else:
            members.add(ch)
        prev = ch
        i += 1
        if i >= n:
            raise Malformed("unclosed '['")
        if pattern[i] == 0x5D:  # ']'
            break
    found = frozenset(members)
    if fold == TWIN:  # a case twin of the name matches: negate, then take either case
        matched = _ALL - found if negated else found
        return matched | {_SWAP[b] for b in matched if b in _SWAP}, i + 1
    if fold:
        found |= {_SWAP[b] for b in found if b in _SWAP}
    return (_ALL - found if negated else found), i + 1


# Tokens: (ONE, bytes) consumes one byte of the set; STAR is '*' inside a name;
# FOLDERS is '**/' (no folders or any number); FOLDERS1 is '**\/' (at least
# one folder: git has no empty shortcut for an escaped slash); TAIL is a last
# '**' (anything at all).
ONE, STAR, FOLDERS, FOLDERS1, TAIL = range(5)


def tokenize(
    body: bytes, pathname: bool, fold: Fold, sep: bool = False
) -> List[Tuple[int, FrozenSet[int]]]:
    """``body`` as tokens. With ``pathname`` (git's WM_PATHNAME), a run of two or
    more stars that makes a whole folder part is '**'; otherwise (a name
    matched alone) every run of stars is '*'. With ``sep`` no token takes a NUL,
    the byte that ends each path of a batch."""
    tokens: List[Tuple[int, FrozenSet[int]]] = []
    n = len(body)
    i = 0
    while i < n:
        ch = body[i]
        if ch == 0x5C:  # '\\'
            if i + 1 >= n:
                raise Malformed("trailing '\\'")
            tokens.append((ONE, frozenset((body[i + 1],))))
            i += 2
        elif ch == 0x3F:  # '?'
            tokens.append((ONE, _ANY_BUT_SLASH))
            i += 1
        elif ch == 0x5B:  # '['
            members, i = _class(body, i, fold)
            tokens.append((ONE, members - {_SLASH}))
        elif ch == 0x2A:  # '*'
            j = i
            while j < n and body[j] == 0x2A:
                j += 1
            kind = STAR
            if pathname and j - i >= 2 and (i == 0 or body[i - 1] == _SLASH):
                if j == n:
                    kind = TAIL
                elif body[j] == _SLASH:
                    kind, j = FOLDERS, j + 1
                elif body[j : j + 2] == b"\\/":
                    kind, j = FOLDERS1, j + 2
            if not (kind == STAR and tokens and tokens[-1][0] == STAR):
                tokens.append((kind, frozenset()))
            i = j
        else:
            tokens.append((ONE, frozenset((ch,))))
            i += 1
    if sep:
        return [
            (kind, members - _NUL) if kind == ONE else (kind, members) for kind, members in tokens
        ]
    return tokens


@functools.lru_cache(maxsize=4096)
def _byte_set(members: FrozenSet[int]) -> bytes:
    """A regex for one byte of ``members``."""
    if not members:
        return NEVER
    if members == _ANY_BUT_SLASH:
        return b"[^/]"
    if len(members) == 1:
        return re.escape(bytes(members))
    negate = len(members) > 128
    chosen = sorted(_ALL - members if negate else members)
    parts = []
    k = 0
    while k < len(chosen):
        end = k
        while end + 1 < len(chosen) and chosen[end + 1] == chosen[end] + 1:
            end += 1
        parts.append(b"\\x%02x" % chosen[k] + (b"-\\x%02x" % chosen[end] if end > k else b""))
        k = end + 1
    return b"[" + (b"^" if negate else b"") + b"".join(parts) + b"]"


if sys.version_info >= (3, 11):

    def _atomic(rx: bytes, names: List[int]) -> bytes:
        return b"(?>" + rx + b")"
else:  # no atomic groups before 3.11: a lookahead is atomic, a backreference takes its text

    def _atomic(rx: bytes, names: List[int]) -> bytes:
        return _emulated_atomic(rx, names)


def _emulated_atomic(rx: bytes, names: List[int]) -> bytes:
    names[0] += 1
    name = b"a%d" % names[0]
    return b"(?=(?P<" + name + b">" + rx + b"))(?P=" + name + b")"


_group_names = [0]  # a counter for the emulated atomic groups' names


def _name_part(atoms: List[Tuple[int, FrozenSet[int]]], sep: bool = False) -> bytes:
    """One folder part's ONE and STAR atoms: the text between two stars at its
    leftmost place, kept there (first and last pieces sit at the ends)."""
    pieces: List[List[bytes]] = [[]]
    for kind, members in atoms:
        if kind == STAR:
            pieces.append([])
        else:
            pieces[-1].append(_byte_set(members))
    if len(pieces) == 1:
        return b"".join(pieces[0])
    name = _NAME[sep]
    rx = b"".join(pieces[0])
    for middle in pieces[1:-1]:
        if middle:
            rx += _atomic(name + b"*?" + b"".join(middle), _group_names)
    return rx + name + b"*" + b"".join(pieces[-1])


def _block(tokens: List[Tuple[int, FrozenSet[int]]], sep: bool = False) -> bytes:
    """ONE and STAR tokens, split into folder parts at each literal '/'."""
    out = []
    atoms: List[Tuple[int, FrozenSet[int]]] = []
    for token in tokens:
        if token[0] == ONE and token[1] == {_SLASH}:
            out.append(_name_part(atoms, sep) + b"/")
            atoms = []
        else:
            atoms.append(token)
    out.append(_name_part(atoms, sep))
    return b"".join(out)


def _translate(prefix: bytes, body: bytes, pathname: bool, fold: Fold, sep: bool = False) -> bytes:
    """The regex (without its end) for the literal ``prefix`` followed by the
    wildmatch pattern ``body``; with ``sep``, one that never takes a NUL."""
    if sep and 0 in prefix:  # no path git lists holds a NUL
        raise Malformed("NUL")
    tokens = tokenize(body, pathname, fold, sep)
    # blocks of ONE/STAR between '**/' parts (a run of them is one)
    blocks: List[List[Tuple[int, FrozenSet[int]]]] = [[]]
    skips: List[int] = []
    tail = False
    for kind, members in tokens:
        if kind in (FOLDERS, FOLDERS1):
            if not blocks[-1] and skips:  # '**/**/': the same as one
                skips[-1] = max(skips[-1], kind)
                continue
            skips.append(kind)
            blocks.append([])
        elif kind == TAIL:
            tail = True
        else:
            blocks[-1].append((kind, members))
    name = _NAME[sep]
    rx = re.escape(prefix) + _block(blocks[0], sep)
    for k, skip in enumerate(skips):
        folders = b"(?:" + name + (b"*/)*?" if skip == FOLDERS else b"*/)+?")
        part = folders + _block(blocks[k + 1], sep)
        # a block between two '**' matches where it first can, and stays
        rx += _atomic(part, _group_names) if k + 1 < len(skips) else part
    return rx + ((b"[^\\x00]*" if sep else b".*") if tail else b"")


def pattern_regex(text: str, fold: Fold, sep: bool = False) -> Tuple[bytes, bool]:
    """(regex source without its end, dir_only) for the pattern ``text``,
    as dir.c reads it: one trailing '/' is folders only; a '/' anywhere else
    anchors it at the root; an anchored pattern's text before its first
    wildcard is compared as it is, and the rest wildmatched on its own (so a
    '**' right after it starts a folder part: 'a**/b' matches 'ab')."""
    body = git_bytes(text)
    dir_only = body.endswith(b"/")
    if dir_only:  # git strips one slash at either end, never more
        body = body[:-1]
    try:
        if _SLASH not in body:  # a name at any depth
            return b"(?:" + _NAME[sep] + b"*/)*?" + _translate(
                b"", body, False, fold, sep
            ), dir_only
        if body.startswith(b"/"):
            body = body[1:]
        k = next((i for i, ch in enumerate(body) if ch in b"*?[\\"), len(body))
        return _translate(body[:k], body[k:], True, fold, sep), dir_only
    except Malformed:
        return NEVER, dir_only


def wildmatch(pattern: bytes, text: bytes, casefold: bool = False) -> bool:
    """git's ``wildmatch(pattern, text, WM_PATHNAME [| WM_CASEFOLD])``, without
    gitignore's rules around it (t3070's 'wildmatch' and 'iwildmatch' columns).
    With ``casefold``, a class holds a letter when it holds either case (git
    lowers the text but compares a class's letters as written, so its ``[A]``
    matches nothing; here it matches 'a' and 'A')."""
    try:
        rx = _translate(b"", pattern, True, casefold)
    except Malformed:
        return False
    flags = re.DOTALL | (re.IGNORECASE if casefold else 0)
    return re.match(rx + b"\\Z", text, flags) is not None
